# SPDX-License-Identifier: MIT
"""The main thread's waits: Python's signal handlers run while it waits.

CPython runs a signal's Python handler in the main thread, between two of
its bytecodes; a thread inside a C call runs none, so a Ctrl-C while
``with lock:`` waits used to surface only once the lock was taken.  The
main thread's blocking acquisitions therefore call bakery_acquire with
BAKERY_ACQUIRE_INTR and a callback, :func:`_interrupted`, that the C
library calls in the waiting thread after a sleep a signal interrupted and
every BAKERY_ACQUIRE_POLL_MS (50 ms) besides (a signal that comes while the
waiter spins interrupts no sleep): it runs the pending handlers.  One that
raises ends the wait -- the thread leaves the line as a timed-out waiter
does -- and its exception is raised once the call has returned; one that
returns keeps the thread's place in line.

CPython runs pending handlers the moment the callback is entered (its
first bytecode), before a ``try`` of the callback can catch what they
raise -- after an interrupted sleep, that is the rule, not the exception.
ctypes hands such an exception to :data:`sys.unraisablehook`, which this
module wraps (on every wait: again if the application has put its own hook
in place since) to take it for the wait, and to set the wait's cancel
word: the callback's answer is lost with its exception, the cancel word
ends the wait all the same.
"""

import ctypes
import errno
import os
import sys
import threading
from typing import Any, Callable, List, Optional

from . import _native
from ._native import lib

_check_signals = ctypes.pythonapi.PyErr_CheckSignals
_check_signals.restype = ctypes.c_int
_check_signals.argtypes = []


# the main thread's ident (threading.get_ident), the child's after a fork
main_ident = threading.main_thread().ident


def _after_fork() -> None:
    # the forking thread is the child's main thread (threading's own hook,
    # registered before this one, has made it so); the waits under way
    # were the parent's
    global main_ident
    main_ident = threading.main_thread().ident
    del _waits[:]


os.register_at_fork(after_in_child=_after_fork)


def in_main_thread() -> bool:
    """Does the calling thread run Python's signal handlers?"""
    return threading.get_ident() == main_ident


class Wait:
    """One blocking call of the main thread: its options (with our callback
    and a cancel word of its own) and what a handler raised meanwhile."""

    __slots__ = ("cancel", "opts", "pointer", "shared", "timed", "caught")

    def __init__(self) -> None:
        self.cancel = ctypes.c_uint32(0)
        self.opts = _native.AcquireOpts(flags=_native.ACQUIRE_INTR,
                                        clock=_native.CLOCK_MONOTONIC,
                                        cancel=ctypes.pointer(self.cancel),
                                        interrupted=_INTERRUPTED)
        self.pointer = ctypes.pointer(self.opts)
        self.shared = self.timed = False
        self.caught: Optional[BaseException] = None

    def prepare(self, shared: bool, deadline: Optional[_native.Timespec]) -> Any:
        """The options for one call, as bakery_acquire's argument."""
        # (a field is written only when it changes: each costs a ctypes call)
        if self.cancel.value:
            self.cancel.value = 0
        if shared != self.shared:
            self.opts.flags = _native.ACQUIRE_INTR | (_native.ACQUIRE_SHARED if shared else 0)
            self.shared = shared
        if deadline is not None:
            self.opts.deadline = ctypes.pointer(deadline)
            self.timed = True
        elif self.timed:
            self.opts.deadline = None
            self.timed = False
        return self.pointer


# The main thread's calls under way, innermost last (a handler run by the
# callback may wait for a lock too), and those done, for reuse.
_waits: List[Wait] = []
_spare: List[Wait] = []


def begin() -> Wait:
    """A wait for the main thread's next call (end it with :func:`end`)."""
    _wrap_unraisablehook()
    wait = _spare.pop() if _spare else Wait()
    _waits.append(wait)
    return wait


def end(wait: Wait) -> None:
    if _waits and _waits[-1] is wait:
        _waits.pop()
    elif wait in _waits:
        _waits.remove(wait)
    wait.caught = None
    _spare.append(wait)


def acquire(answer: List[int], call: Callable[[List[int], Any], None], shared: bool,
            deadline: Optional[_native.Timespec]) -> None:
    """The main thread's blocking acquisition: ``CALL(answer, opts)``
    appends to ANSWER what bakery_acquire (or bakery_path_acquire) answered
    with OPTS, appended by C code (so that an exception raised the moment
    the call returns leaves it there).  Returns once ANSWER holds the
    call's last answer, neither EINTR nor ECANCELED; raises what a signal
    handler raised while the call waited.  Either way ANSWER says whether
    the lock was taken: a caller that gets an exception releases it (the
    handler's exception must propagate with the lock not held)."""
    while True:
        wait = begin()
        try:
            del answer[:]
            call(answer, wait.prepare(shared, deadline))
            caught = wait.caught
        finally:
            end(wait)
        if caught is not None:
            # a handler raised: the wait gave up, or took the lock just
            # then (the caller releases it before the exception goes on)
            raise caught
        if answer[0] not in (errno.EINTR, errno.ECANCELED):
            return
        # interrupted, and the handler's exception was lost to another
        # hook than ours (a sys.unraisablehook that does not chain):
        # nothing to raise, so wait again


def _caught(e: BaseException) -> None:
    """A handler raised E during the innermost wait: end that wait."""
    if not _waits:
        return
    wait = _waits[-1]
    if wait.caught is None:
        wait.caught = e
    lib.bakery_cancel(ctypes.byref(wait.cancel))


def _interrupted(arg: Any) -> int:
    try:
        _check_signals()
    except BaseException as e:          # noqa: B036 -- a handler's, whatever it is
        _caught(e)
        return 1
    return 0


_INTERRUPTED = _native.INTERRUPTED(_interrupted)


def _take_unraisable(unraisable: Any) -> None:
    """sys.unraisablehook: what a handler raised as the callback was entered
    is the wait's; anything else goes to the hooks this one wraps."""
    if unraisable.object is _interrupted and _waits and unraisable.exc_value is not None:
        _caught(unraisable.exc_value)
        return
    # A wrapped hook that chains calls the one it replaced, which may have
    # been this one (wrapped again after it was installed): each such call
    # goes one hook further back, and past the first, to the default.
    depth = getattr(_passing, "depth", 0)
    hooks = _wrapped_hooks
    hook = hooks[-1 - depth] if depth < len(hooks) else sys.__unraisablehook__
    _passing.depth = depth + 1
    try:
        hook(unraisable)
    finally:
        _passing.depth = depth


# the hooks this one wrapped, the latest last
_wrapped_hooks: List[Any] = [h for h in (getattr(sys, "unraisablehook", None),) if h]
_passing = threading.local()            # (per thread: hooks run in any)


def _wrap_unraisablehook() -> None:
    hook = getattr(sys, "unraisablehook", None)      # (Python 3.8 on)
    if hook is None or hook is _take_unraisable:
        return
    _wrapped_hooks.append(hook)
    sys.unraisablehook = _take_unraisable
