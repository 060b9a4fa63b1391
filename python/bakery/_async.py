# SPDX-License-Identifier: MIT
"""asyncio: a task waits for a lock without blocking its event loop.

A wait for a lock is the C library's blocking call, so a task that must
wait has it run in a thread of its own, a *holder*: the holder keeps the
task's place in line while the loop runs the other tasks, and -- since a
lock is owned by a thread -- holds the lock for the task once it has it,
until the task releases it (the task's :meth:`Lock.release`,
:meth:`Lock.consistent` and ``async with``'s exit are carried out by the
holder).  Cancelling the task while it waits sets the holder's cancel word
(bakery_cancel): the wait ends at once, as a timed-out one does, and a lock
taken just then is released, before the cancellation goes on.  A lock that
is free is taken without a thread: by a try on the loop's own thread,
which then holds it for the task.

The holds are kept per task in the lock's ``_task_holds``.  As with
:class:`asyncio.Lock`, any task of the loop may release one: a task that
holds none releases one of the others' (the last taken) -- so that
``await asyncio.wait_for(lock.acquire_async(), 5)``, whose acquisition runs
in a task of its own, is released by its caller.
"""

import asyncio
import ctypes
import errno
import queue
import threading
from typing import Any, Optional

from . import _native
from ._native import lib
from .errors import OwnerDead, make_error

_HELD = (0, errno.EOWNERDEAD)


def _current_task() -> Optional["asyncio.Task[Any]"]:
    try:
        return asyncio.current_task()
    except RuntimeError:                # no event loop runs in this thread
        return None


def own_hold(lock: Any) -> Any:
    """The hold of LOCK that the calling task took, if any."""
    task = _current_task() if lock._task_holds else None
    return None if task is None else lock._task_holds.get(task)


def thread_holds_for_a_task(lock: Any) -> bool:
    """Is the calling thread's hold of LOCK a task's (taken on the event
    loop's thread for that task)?"""
    tid = threading.get_ident()
    return any(getattr(h, "thread", None) == tid for h in list(lock._task_holds.values()))


def task_hold(lock: Any) -> Any:
    """The hold of LOCK that the calling task releases: its own, else the
    last one taken by a task of its event loop; None outside a task, or
    when the loop's tasks hold none."""
    task = _current_task()
    if task is None:
        return None
    hold = lock._task_holds.get(task)
    if hold is None:
        loop = asyncio.get_running_loop()
        hold = next((h for h in reversed(list(lock._task_holds.values())) if h.loop is loop),
                    None)
    return hold


async def _until_done(fut: "asyncio.Future[Any]") -> Any:
    """FUT's result, waited for to the end even if the task is cancelled
    meanwhile (the first cancellation is raised once FUT is done)."""
    cancelled = False
    while not fut.done():
        try:
            await asyncio.shield(fut)
        except asyncio.CancelledError:
            if fut.cancelled():
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError()
    return fut.result()


class _LoopHold:
    """A task's hold taken on the event loop's own thread."""

    def __init__(self, lock: Any, task: Any, release_after_consistent: bool) -> None:
        self.lock, self.task = lock, task
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.release_after_consistent = release_after_consistent
        self.count = 1                  # (a reentrant lock's acquires)

    def release(self, force: bool = False) -> None:
        if self.count > 1 and not force:
            self.count -= 1
            return
        self.lock._release_here()
        self.lock._task_holds.pop(self.task, None)

    async def release_async(self) -> None:
        self.release()

    def consistent(self) -> None:
        self.lock._consistent_here()
        if self.release_after_consistent:
            self.release()


class _Holder:
    """A thread that waits for LOCK on a task's behalf, holds it for the
    task, and releases it when told to."""

    def __init__(self, lock: Any, shared: bool, deadline: Optional[_native.Timespec],
                 task: Any) -> None:
        self.lock, self.task = lock, task
        self.loop = asyncio.get_running_loop()
        self.release_after_consistent = False
        self.count = 1                  # (a reentrant lock's acquires)
        self.cancel = ctypes.c_uint32(0)
        self.deadline = deadline
        self.opts = _native.AcquireOpts(
            flags=_native.ACQUIRE_SHARED if shared else 0,
            clock=_native.CLOCK_MONOTONIC,
            deadline=ctypes.pointer(deadline) if deadline is not None else None,
            cancel=ctypes.pointer(self.cancel))
        self.answer: "asyncio.Future[int]" = self.loop.create_future()
        self.finished: "asyncio.Future[None]" = self.loop.create_future()
        self.requests: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        threading.Thread(target=self._run, daemon=True,
                         name="bakery holder of %s" % lock._what).start()

    # ------------------------------------------------- the holder thread --

    def _tell(self, fut: "asyncio.Future[Any]", value: Any = None,
              exc: Optional[BaseException] = None) -> bool:
        def resolve() -> None:
            if fut.done():
                return
            if exc is not None:
                fut.set_exception(exc)
            else:
                fut.set_result(value)
        try:
            self.loop.call_soon_threadsafe(resolve)
            return True
        except RuntimeError:            # the loop is closed: nobody to tell
            return False

    def _run(self) -> None:
        answer: list = []
        try:
            self.lock._wait_call(answer, ctypes.byref(self.opts))
        except Exception as e:          # closed meanwhile, or the path's error
            self._tell(self.answer, exc=e)
            self._tell(self.finished)
            return
        err = answer[0]
        if self._tell(self.answer, err) and err in _HELD:
            self._serve(err)
        elif err in _HELD:
            self._abandon(err)
        self._tell(self.finished)

    def _serve(self, err: int) -> None:
        while True:
            what, reply = self.requests.get()
            if what == "abandon":
                self._abandon(err)
                return
            try:
                if what == "consistent":
                    self.lock._consistent_here()
                    err = 0
                else:
                    self.lock._release_here()
            except Exception as e:      # (as the call would raise in the task)
                reply(e)
                continue
            reply(None)
            if what == "release":
                return

    def _abandon(self, err: int) -> None:
        # the task is gone: a lock taken for it is released; one taken with
        # EOWNERDEAD is kept, and this thread ends holding it, a dead owner:
        # the next holder is told in turn (a release without repair would
        # make it not recoverable for good)
        self.lock._abandon_here(err)

    # ------------------------------------------------------- the task's --

    def abandon(self) -> None:
        """The task gives up: out of line, and nothing held for it."""
        self.requests.put(("abandon", None))
        lib.bakery_cancel(ctypes.byref(self.cancel))

    def _ask(self, what: str) -> None:
        done = threading.Event()
        outcome: list = []

        def reply(e: Optional[BaseException]) -> None:
            outcome.append(e)
            done.set()

        self.requests.put((what, reply))
        done.wait()
        if outcome[0] is not None:
            raise outcome[0]

    def release(self, force: bool = False) -> None:
        if self.count > 1 and not force:
            self.count -= 1
            return
        self._ask("release")
        self.lock._task_holds.pop(self.task, None)

    async def release_async(self) -> None:
        if self.count > 1:
            self.count -= 1
            return
        fut = self.loop.create_future()

        def reply(e: Optional[BaseException]) -> None:
            self._tell(fut, e)

        self.requests.put(("release", reply))
        e = await _until_done(fut)
        if e is not None:
            raise e
        self.lock._task_holds.pop(self.task, None)

    def consistent(self) -> None:
        self._ask("consistent")
        if self.release_after_consistent:
            self.release()


async def acquire(lock: Any, blocking: bool, timeout: float, shared: bool,
                  in_with: bool) -> bool:
    """acquire_async of LOCK, a Lock or a PathLock; IN_WITH: for ``async
    with`` (after an OwnerDead, consistent() releases too).

    What this asks of LOCK: ``_what`` (its name in messages),
    ``_task_holds``, ``_reentrant`` (a task's second acquire counts, else
    raises Deadlock), and the calls ``_try_here(shared)`` (a try on the
    calling thread: True, False, or None when that thread holds it
    already), ``_wait_call(answer, opts)`` (bakery_acquire's wait in the
    holder thread, its answer appended), ``_acquired(err, True)``,
    ``_release_here()``, ``_consistent_here()`` and ``_abandon_here(err)``
    (a lock taken for a task that is gone: released, unless the answer was
    EOWNERDEAD)."""
    task = _current_task()
    if task is None:
        raise RuntimeError("acquire_async() must be awaited in an asyncio task")
    hold = lock._task_holds.get(task)
    if hold is not None:
        if lock._reentrant:
            hold.count += 1
            return True
        raise make_error(errno.EDEADLK, lock._what, "this task holds it already")
    # free: taken on the loop's own thread at once
    try:
        got: Optional[bool] = lock._try_here(shared)
    except OwnerDead:
        lock._task_holds[task] = _LoopHold(lock, task, in_with and not shared)
        raise
    if got:
        lock._task_holds[task] = _LoopHold(lock, task, False)
        return True
    if not blocking:
        return False
    return await _wait(lock, task, timeout, shared, in_with)


async def _wait(lock: Any, task: Any, timeout: float, shared: bool, in_with: bool) -> bool:
    holder = _Holder(lock, shared,
                     _native.monotonic_deadline(timeout) if timeout >= 0 else None, task)
    try:
        err = await asyncio.shield(holder.answer)
    except asyncio.CancelledError:
        holder.abandon()
        await _until_done(holder.finished)
        raise
    if err in _HELD:
        holder.release_after_consistent = in_with and not shared
        lock._task_holds[task] = holder
    return bool(lock._acquired(err, True))


async def enter(lock: Any, seconds: float, shared: bool) -> None:
    """``async with lock:`` and ``async with lock.hold():``: SECONDS at
    most (-1: no limit)."""
    if not await acquire(lock, True, seconds, shared, True):
        raise make_error(errno.ETIMEDOUT, lock._what,
                         "not acquired within %g seconds" % seconds)


async def release(lock: Any) -> None:
    """``async with``'s exit: the task's hold released (by its holder)."""
    hold = task_hold(lock)
    if hold is None:
        lock.release()
    else:
        await hold.release_async()

