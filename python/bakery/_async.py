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

A task's release is done whatever exception comes in the middle of it
(a signal handler's, or a cancellation at its await): as for a thread's
(region.Lock.release), the whole of it runs inside the caller's one
``try``, which finishes a release that had not happened -- each step
leaves a mark that no handler can separate from it, so that it is done
once, never twice.  Likewise an acquisition raises with nothing held
(but for OwnerDead, raised with the lock held for the task).

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
from typing import Any, Callable, List, Optional

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


def _forget(hold: Any, done: List[Any]) -> None:
    """HOLD's task holds nothing any more: HOLD out of its lock's task
    holds, and DONE told so by the same C call (list.extend running
    dict.pop), which no signal handler can split: a release interrupted
    just after is not done twice, nor one interrupted before skipped."""
    done.extend(map(hold.lock._task_holds.pop, (hold.task,), (None,)))


class _LoopHold:
    """A task's hold taken on the event loop's own thread."""

    def __init__(self, lock: Any, task: Any) -> None:
        self.lock, self.task = lock, task
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.release_after_consistent = False
        self.count = 1                  # (a reentrant lock's acquires)
        self.unlocked: List[int] = []   # the unlock's answer, once it ran

    def release(self, done: List[Any], force: bool = False) -> None:
        """DONE gets an item once released (or one acquire counted off);
        called again after an exception, it finishes what is left."""
        if self.count > 1 and not force:
            self.count -= 1
            done.append(0)              # (no point for a handler in between)
            return
        if not self.unlocked:
            self.lock._release_here(self.unlocked)
        _forget(self, done)

    async def release_async(self, done: List[Any]) -> None:
        self.release(done)

    def consistent(self) -> None:
        self.lock._consistent_here()
        if self.release_after_consistent:
            _release_to_the_end(self)


class _Reply:
    """The holder thread's answer to one request, for a thread that waits
    (wait()) or a task (future): None, or the exception its call raised."""

    def __init__(self, holder: "_Holder") -> None:
        self.holder = holder
        self.gate = threading.Lock()
        self.gate.acquire()             # opened by the answer
        self.future: "asyncio.Future[Any]" = holder.loop.create_future()
        self.error: Optional[BaseException] = None

    def __call__(self, error: Optional[BaseException]) -> None:    # (the holder thread)
        self.error = error
        self.gate.release()
        self.holder._tell(self.future, error)

    def wait(self) -> None:
        """Until the answer came.  Through a C lock's with, which no signal
        handler can leave taken -- as one can a threading.Event's lock,
        taken by Python code (and a release interrupted in its wait waits
        again)."""
        with self.gate:
            pass


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
        self.releasing: Optional[_Reply] = None    # the release asked for
        self.repairing: Optional[_Reply] = None    # a consistent() not answered yet
        # whether the thread goes on to wait, and whether the task gave up
        # first: decided under the mutex (give_up)
        self.mutex = threading.Lock()
        self.waits = self.gave_up = False
        self.worker = threading.Thread(target=self._run, daemon=True,
                                       name="bakery holder of %s" % lock._what)

    def start(self) -> None:
        self.worker.start()

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
        with self.mutex:
            self.waits = not self.gave_up
        if not self.waits:
            return                      # given up before it ran: nothing to do
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
                    self.lock._release_here([])
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

    def give_up(self) -> bool:
        """The task gives up: out of line, and nothing held for it.  True
        if the thread waits (or waited), and releases what it may have
        taken; False if it never will: not started yet -- as after an
        exception inside Thread.start, where nothing tells a thread about
        to run from one never started -- it ends as it starts."""
        with self.mutex:                # (a C lock: no point in between)
            self.gave_up = True
            waits = self.waits
        self.requests.put(("abandon", None))
        lib.bakery_cancel(ctypes.byref(self.cancel))
        return waits

    def _asked_repair(self) -> _Reply:
        """The reply to the repair request (consistent()), which is made
        now unless one is still unanswered: a consistent() interrupted as
        it waited leaves its request with the thread, and the next one
        waits for that answer (asked again once the repair was done, the
        library would refuse it: nothing to repair)."""
        if self.repairing is None:
            reply = _Reply(self)
            self.repairing = reply      # (no point between this and the put)
            self.requests.put(("consistent", reply))
        return self.repairing

    def _asked_release(self) -> _Reply:
        """The reply to the release request, which is made now unless it
        was already: a release interrupted after asking waits for that
        reply (asked twice, the thread, gone after the first, would never
        answer the second)."""
        if self.releasing is None:
            reply = _Reply(self)
            self.releasing = reply      # (no point between this and the put)
            self.requests.put(("release", reply))
        return self.releasing

    def _released(self, reply: _Reply, done: List[Any]) -> None:
        if reply.error is not None:     # still held, and served: ask again
            self.releasing = None
            raise reply.error
        _forget(self, done)

    def release(self, done: List[Any], force: bool = False) -> None:
        """As _LoopHold.release, by the holder thread (its answer waited
        for on this thread)."""
        if self.count > 1 and not force:
            self.count -= 1
            done.append(0)              # (no point for a handler in between)
            return
        reply = self._asked_release()
        reply.wait()
        self._released(reply, done)

    async def release_async(self, done: List[Any]) -> None:
        if self.count > 1:
            self.count -= 1
            done.append(0)
            return
        reply = self._asked_release()
        await _until_done(reply.future)
        self._released(reply, done)

    def consistent(self) -> None:
        reply = self._asked_repair()
        reply.wait()
        self.repairing = None           # (answered: a new one may be asked)
        if reply.error is not None:
            raise reply.error
        if self.release_after_consistent:
            _release_to_the_end(self)


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
    ``_error(err)``, ``_release_here(done)`` (the calling thread's unlock,
    DONE given an item once it ran), ``_release_into(done)`` (its release,
    the thread's or a task's hold's), ``_consistent_here()`` and
    ``_abandon_here(err)`` (a lock taken for a task that is gone: released,
    unless the answer was EOWNERDEAD)."""
    task = _current_task()
    if task is None:
        raise RuntimeError("acquire_async() must be awaited in an asyncio task")
    hold = lock._task_holds.get(task)
    if hold is not None:
        if lock._reentrant:
            hold.count += 1
            return True
        raise make_error(errno.EDEADLK, lock._what, "this task holds it already")
    # free: taken on the loop's own thread at once, and kept for the task
    # with no call in between (where a signal handler could raise): the
    # hold is made first
    hold = _LoopHold(lock, task)
    try:
        got: Optional[bool] = lock._try_here(shared)
    except OwnerDead:
        hold.release_after_consistent = in_with and not shared
        lock._task_holds[task] = hold
        raise
    if got:
        lock._task_holds[task] = hold
        return True
    if not blocking:
        return False
    return await _wait(lock, task, timeout, shared, in_with)


async def _wait(lock: Any, task: Any, timeout: float, shared: bool, in_with: bool) -> bool:
    holder = _Holder(lock, shared,
                     _native.monotonic_deadline(timeout) if timeout >= 0 else None, task)
    holder.release_after_consistent = in_with and not shared
    # From the thread's start on, all of it is inside the try: an
    # exception (a signal handler's, a cancellation) gives the wait up.
    # The answer's error is raised after it, with no call in between (as
    # in Lock.acquire): OwnerDead comes with the lock held.
    try:
        holder.start()
        err = await asyncio.shield(holder.answer)
        if err in _HELD:
            lock._task_holds[task] = holder
        if err == 0:
            return True                 # (no call since the hold was kept)
        error = _refusal(lock, err)
    except BaseException as e:
        if lock._task_holds.get(task) is holder:
            # E came as the task was told EOWNERDEAD: the lock stays held
            # for it, and OwnerDead is raised (E its cause), as a thread's
            # acquisition does -- a release would make it not recoverable
            raise lock._error(errno.EOWNERDEAD) from e
        await _give_up(holder, e)
        raise
    if error is None:
        return False
    raise error


def _refusal(lock: Any, err: int) -> Optional[Exception]:
    """The error LOCK raises for the answer ERR, not 0; None if it just did
    not acquire (timed out)."""
    try:
        lock._acquired(err, True)
    except Exception as e:
        return e
    return None


async def _give_up(holder: _Holder, e: BaseException) -> None:
    """The task gives the wait up (E): out of line, and a lock taken for it
    meanwhile released by its thread -- waited for, so that E goes on with
    nothing held; but for E closing the coroutine (GeneratorExit: no await
    may come), which goes on as the thread releases."""
    if holder.give_up() and not isinstance(e, GeneratorExit):
        await _until_done(holder.finished)


async def enter(lock: Any, seconds: float, shared: bool) -> None:
    """``async with lock:`` and ``async with lock.hold():``: SECONDS at
    most (-1: no limit)."""
    if not await acquire(lock, True, seconds, shared, True):
        raise make_error(errno.ETIMEDOUT, lock._what,
                         "not acquired within %g seconds" % seconds)


async def release(lock: Any, done: List[Any]) -> None:
    """``async with``'s exit: the task's hold released (by its holder), or
    the thread's; DONE gets an item once it is.  Called inside the exit's
    own try, whose except finishes a release not done
    (_release_interrupted) -- but for a hold's, finished here: while it
    awaited, other tasks may have taken holds, and the one released must
    be the one finished."""
    hold = task_hold(lock)
    if hold is None:
        lock._release_into(done)
        return
    try:
        await hold.release_async(done)
    except BaseException:
        finish_release(lambda: hold.release(done), done)
        raise


def _release_to_the_end(hold: Any) -> None:
    """HOLD released (consistent()'s release after ``async with``), and
    forgotten, whatever interrupts it once begun: the lock must not be left
    free and the hold kept."""
    done: List[Any] = []
    try:
        hold.release(done)
    except BaseException:
        finish_release(lambda: hold.release(done), done)
        raise


def finish_release(release: Callable[[], None], done: List[Any]) -> None:
    """A release interrupted before DONE said it was done: RELEASE (which
    goes on where it stopped) until it is, whatever further signal handlers
    raise meanwhile (as region.Lock._unlock_quietly); its own errors give
    way to the exception that interrupted it."""
    while not done:
        try:
            release()
            return
        except Exception:
            return
        except BaseException:
            if done:
                raise

