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

The holds are kept per task in ``Lock._task_holds``.  As with
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
from .errors import Deadlock, OwnerDead, make_error

_HELD = (0, errno.EOWNERDEAD)


def _current_task() -> Optional["asyncio.Task[Any]"]:
    try:
        return asyncio.current_task()
    except RuntimeError:                # no event loop runs in this thread
        return None


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
        self.release_after_consistent = release_after_consistent

    def release(self) -> None:
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
            self.lock._handle.call(answer, lib.bakery_acquire, ctypes.byref(self.opts))
        except Exception as e:          # closed meanwhile
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
        if err == 0:
            self.lock._unlock_quietly()

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

    def release(self) -> None:
        self._ask("release")
        self.lock._task_holds.pop(self.task, None)

    async def release_async(self) -> None:
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
    """Lock.acquire_async; IN_WITH: for ``async with`` (after an OwnerDead,
    consistent() releases too)."""
    task = _current_task()
    if task is None:
        raise RuntimeError("acquire_async() must be awaited in an asyncio task")
    if task in lock._task_holds:
        raise make_error(errno.EDEADLK, lock._what, "this task holds it already")
    # free: taken on the loop's own thread at once
    try:
        got: Optional[bool] = lock.acquire(blocking=False, shared=shared)
    except OwnerDead:
        lock._task_holds[task] = _LoopHold(lock, task, in_with and not shared)
        raise
    except Deadlock:
        got = None                      # this thread holds it, for another task
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


async def enter(lock: Any, timeout: Optional[float], shared: bool) -> None:
    """``async with lock:`` (TIMEOUT None) and ``async with lock.hold():``."""
    seconds = lock._check_timeout(True, timeout)
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

