# SPDX-License-Identifier: MIT
"""PathLock and ReadWritePathLock: the lock of a file or directory (the C
library's path locks, ``bakery_path_*``), with the interface of the common
file-lock packages.

Each outermost acquire looks at the path afresh (one ``statx``), as a file
lock opens its file afresh: a renamed file keeps its lock, a file replaced
by another gets the new file's lock.  The C library keeps the lock handles
of the files this process has open, and of the last ones it closed, in one
process-wide table keyed by the file's identity, so that acquiring a path
seen before costs a ``statx`` and a look-up; creating a PathLock costs
nothing at all.
"""

import ctypes
import errno
import math
import os
import threading
import time
from functools import partial
from typing import Any, Dict, List, Optional, Union

from . import _async, _native, _signals
from ._native import lib
from .errors import Deadlock, OwnerDead, Timeout, call_error, make_error

PathType = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

_get_ident = threading.get_ident
_path_open = lib.bakery_path_open
_path_close = lib.bakery_path_close
_path_acquire = lib.bakery_path_acquire
_path_unlock = lib.bakery_path_unlock
_OWNER_DEAD = errno.EOWNERDEAD
_NOT_ACQUIRED = (errno.EBUSY, errno.ETIMEDOUT)

# exclusive, shared: (block, try, until a deadline)
_CALLS = ((lib.bakery_path_lock, lib.bakery_path_trylock, lib.bakery_path_clocklock),
          (lib.bakery_path_rdlock, lib.bakery_path_tryrdlock, lib.bakery_path_clockrdlock))


_deadline = _native.monotonic_deadline


def _path_region() -> str:
    """The region of the process's path locks, as the C library names it."""
    return (os.environ.get(_native.PATH_REGION_ENV) or
            _native.PATH_REGION_PREFIX + str(os.geteuid()))


def _acquire_call(handle: int, answer: List[int], opts: Any) -> None:
    """bakery_path_acquire, its answer appended to ANSWER by C code."""
    answer.extend(map(_path_acquire, (handle,), (opts,)))


def _unlock_quietly(handle: int) -> None:
    """Release the lock HANDLE's thread took, whatever a signal handler
    raises meanwhile (its exception goes on once the unlock has run)."""
    done: List[int] = []
    while not done:
        try:
            done.extend(map(_path_unlock, (handle,)))
        except BaseException:
            if done:
                raise


def _check_timeout(timeout: Any) -> float:
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
        raise TypeError("timeout must be a number of seconds")
    if math.isnan(timeout):
        raise ValueError("timeout must be a number of seconds, or -1 for no limit")
    # negative, or beyond threading's limit: no limit
    return -1.0 if timeout < 0 or timeout > threading.TIMEOUT_MAX else float(timeout)


class AcquireReturnProxy:
    """What :meth:`PathLock.acquire` returns: ``with lock.acquire(timeout=5):``
    releases the lock at the end of the block."""

    __slots__ = ("lock",)

    def __init__(self, lock: "PathLock") -> None:
        self.lock = lock

    def __enter__(self) -> "PathLock":
        return self.lock

    def __exit__(self, *exc: Any) -> None:
        done: List[Any] = []            # as PathLock.__exit__
        try:
            self.lock._release_into(done, False)
        except BaseException:
            self.lock._release_interrupted(done, False)
            raise

    async def __aenter__(self) -> "PathLock":
        return self.lock

    async def __aexit__(self, *exc: Any) -> None:
        done: List[Any] = []            # as PathLock.__aexit__
        try:
            await _async.release(self.lock, done)
        except BaseException:
            self.lock._release_interrupted(done)
            raise


class PathLock:
    """The lock of the file or directory PATH, shared by every process of the
    user (and every thread) that locks the same file, by whatever path.

    As the common file-lock packages' locks: ``with lock:``, or
    ``lock.acquire(timeout=None, blocking=None)``, which returns a proxy
    usable in a ``with`` block and raises :class:`bakery.Timeout` (also a
    ``TimeoutError``) when the lock was not acquired: after TIMEOUT seconds
    (-1: no limit, 0: one attempt), or at once with ``blocking=False``.
    The defaults come from the constructor.  Reentrant per object and
    thread: each acquire counts, and the lock is released by the last
    ``release()`` (``release(force=True)``: at once).  Other threads, and
    other objects for the same file, wait as other processes do (another
    object's acquire in a thread that holds the file's lock raises
    :class:`bakery.Deadlock`).

    Fair (first come, first served) and crash-proof: if the previous holder
    died holding it, acquiring raises :class:`bakery.OwnerDead` *with the
    lock held*; repair, then ``e.lock.consistent()`` (which also releases
    it after a ``with``).

    ``create`` (default True) creates a missing file, as file locks do;
    ``shared=True`` makes a reader's lock (see :class:`ReadWritePathLock`).
    """

    def __init__(self, path: PathType, timeout: float = -1, blocking: bool = True, *,
                 create: bool = True, shared: bool = False) -> None:
        self._path = os.fspath(path)
        raw = os.fsencode(self._path)
        if not raw or b"\0" in raw:
            raise make_error(errno.EINVAL, repr(self._path), "not a path")
        self._raw = raw
        self.timeout = timeout
        self.blocking = blocking
        self._create = bool(create)
        self._flags = _native.CREATE if create else 0
        self._calls = _CALLS[1 if shared else 0]
        self._shared = bool(shared)
        # thread ident -> [count, handle], in the process of fork number
        # _fork (a lock the parent held is not held by the child)
        self._held: Dict[int, List[int]] = {}
        self._fork = _forks[0]
        self._release_after_consistent: Optional[int] = None
        # the asyncio tasks that hold it, each with its hold (_async.py)
        self._task_holds: Dict[Any, Any] = {}

    def _holds(self) -> Dict[int, List[int]]:
        if self._fork != _forks[0]:
            self._held = {}
            self._fork = _forks[0]
            self._release_after_consistent = None
            self._task_holds = {}
        return self._held

    @property
    def _what(self) -> str:
        return os.fsdecode(self._path)

    def _task_hold(self) -> Any:
        """The hold of the calling asyncio task (_async.task_hold), if any."""
        return _async.task_hold(self) if self._task_holds else None

    @property
    def path(self) -> Union[str, bytes]:
        """The path, as given."""
        return self._path

    lock_file = path

    @property
    def shared(self) -> bool:
        """True for a reader's lock."""
        return self._shared

    @property
    def is_locked(self) -> bool:
        """True while the calling thread (or asyncio task) holds the lock
        through this object."""
        return self.lock_counter > 0

    @property
    def lock_counter(self) -> int:
        """How many acquires of the calling thread (or task) are not
        released yet."""
        held = self._holds().get(_get_ident())
        if not self._task_holds:
            return held[0] if held else 0
        hold = _async.own_hold(self)
        if hold is not None:
            return int(hold.count)
        # (a hold of this thread taken for another task is not the caller's)
        return held[0] if held and not _async.thread_holds_for_a_task(self) else 0

    # ---------------------------------------------------------- acquiring --

    def acquire(self, timeout: Optional[float] = None,
                blocking: Optional[bool] = None) -> AcquireReturnProxy:
        """Acquire the lock (once more, if this thread holds it already).
        Returns a proxy for ``with``; raises :class:`bakery.Timeout` if not
        acquired, :class:`bakery.OwnerDead` (held: repair, then
        ``consistent()``), :class:`bakery.NotRecoverable`,
        :class:`bakery.Deadlock`, or the error of the path
        (:class:`bakery.NotFound`, :class:`bakery.PermissionDenied`...)."""
        # the proxy first: making it calls Python code, where a signal
        # handler may raise, and that must not come with the lock taken
        proxy = AcquireReturnProxy(self)
        self._acquire(timeout, blocking)
        return proxy

    def _acquire(self, timeout: Optional[float], blocking: Optional[bool]) -> None:
        tid = _get_ident()
        held = self._holds().get(tid)
        if held is not None:
            held[0] += 1
            return
        wait = _check_timeout(self.timeout if timeout is None else timeout)
        if blocking is None:
            blocking = self.blocking
        if not blocking:
            wait = 0
        handle = self._open()
        answer: List[int] = []
        # the error too is made inside the try, and raised after it with no
        # call in between (as in Lock.acquire): OwnerDead comes with the
        # lock held, and a handler's exception as it is made with OwnerDead
        # all the same (_interrupted)
        try:
            self._take(answer, handle, wait)
            err = answer[0]
            if err == 0 or err == _OWNER_DEAD:
                self._held[tid] = [1, handle]
            error = None if err == 0 else self._error(err, wait)
        except BaseException as e:      # a signal handler's, as a call returned
            self._interrupted(tid, handle, answer, e)
            raise
        if error is None:
            return
        if err != _OWNER_DEAD:
            _path_close(handle)
        raise error

    def _open(self) -> int:
        """A path handle on the file the path names now."""
        pointer = ctypes.c_void_p()
        try:
            err = _path_open(self._raw, self._flags, ctypes.byref(pointer))
        except BaseException:           # a signal handler's, as the call returned
            if pointer.value:
                _path_close(pointer.value)
            raise
        if err:
            raise call_error(err, "bakery_path_open", os.fsdecode(self._path), _path_region())
        return int(pointer.value or 0)

    def _take(self, answer: List[int], handle: int, wait: float) -> None:
        """Append the lock call's answer to ANSWER (by C code: an exception
        raised as the call returns leaves it there).  The main thread, which
        runs Python's signal handlers, tries first and waits only if it
        must, with the handlers running meanwhile (as Lock does): one that
        raises ends the wait."""
        if wait == 0 or _get_ident() == _signals.main_ident:
            answer.extend(map(self._calls[1], (handle,)))
            if wait == 0 or answer[0] != errno.EBUSY:
                return
            deadline = _deadline(wait) if wait > 0 else None
            _signals.acquire(answer, partial(_acquire_call, handle), self._shared, deadline)
        elif wait < 0:
            answer.extend(map(self._calls[0], (handle,)))
        else:
            answer.extend(map(self._calls[2], (handle,), (time.CLOCK_MONOTONIC,),
                              (ctypes.byref(_deadline(wait)),)))

    def _interrupted(self, tid: int, handle: int, answer: List[int], e: BaseException) -> None:
        """E was raised as an acquisition through HANDLE returned ANSWER:
        the lock must not stay held without its holder knowing.  Released
        if it was taken; if it was taken with EOWNERDEAD, kept, and
        OwnerDead raised instead (E its cause): a release here would make
        the lock not recoverable for good."""
        self._held.pop(tid, None)       # (if E came just as it was counted)
        if answer and answer[0] == _OWNER_DEAD:
            self._held[tid] = [1, handle]
            raise self._error(_OWNER_DEAD) from e
        if answer and answer[0] == 0:
            _unlock_quietly(handle)
        _path_close(handle)

    def _error(self, err: int, wait: float = 0, call: str = "") -> Exception:
        what = os.fsdecode(self._path)
        if err in _NOT_ACQUIRED:
            message = ("not acquired: held by another" if wait <= 0 else
                       "not acquired within %g seconds" % wait)
            return make_error(errno.ETIMEDOUT, what, message)
        e = call_error(err, call, what)
        if isinstance(e, OwnerDead):
            e.lock = self
        return e

    def __enter__(self) -> "PathLock":
        try:
            self._acquire(None, None)
        except OwnerDead:
            if not self._shared:
                self._release_after_consistent = _get_ident()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        # release()'s body: a call of it would be one more point where a
        # signal handler could raise before the release
        done: List[Any] = []
        try:
            self._release_into(done, False)
        except BaseException:
            self._release_interrupted(done, False)
            raise

    # ------------------------------------------------------------ asyncio --

    async def acquire_async(self, timeout: Optional[float] = None,
                            blocking: Optional[bool] = None) -> AcquireReturnProxy:
        """:meth:`acquire` for a coroutine: ``await lock.acquire_async()``
        (or ``async with await lock.acquire_async(timeout=5):``; ``async
        with lock:`` too).  Reentrant per object and task.  The task waits in line, in arrival order, while the event
        loop runs the other tasks (the wait runs in a thread of its own,
        which then holds the lock for the task until it releases it);
        cancelling the task while it waits takes it out of line."""
        proxy = AcquireReturnProxy(self)       # first, as in acquire()
        await self._acquire_async(timeout, blocking, False)
        return proxy

    async def _acquire_async(self, timeout: Optional[float], blocking: Optional[bool],
                             in_with: bool) -> None:
        wait = _check_timeout(self.timeout if timeout is None else timeout)
        if blocking is None:
            blocking = self.blocking
        if not blocking:
            wait = 0
        self._holds()
        if not await _async.acquire(self, wait != 0, wait, self._shared, in_with):
            raise self._error(errno.ETIMEDOUT, wait)

    async def __aenter__(self) -> "PathLock":
        await self._acquire_async(None, None, True)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        done: List[Any] = []            # as __exit__: all of it in one try
        try:
            await _async.release(self, done)
        except BaseException:
            self._release_interrupted(done)
            raise

    # what _async asks of a lock
    _reentrant = True

    def _try_here(self, shared: bool) -> Optional[bool]:
        if _get_ident() in self._holds():
            return None                 # this thread holds it, for another task
        try:
            self._acquire(0, False)
        except Deadlock:
            return None                 # through another object, for another task
        except Timeout:
            return False
        return True

    def _wait_call(self, answer: List[int], opts: Any) -> None:
        tid = _get_ident()
        handle = self._open()
        try:
            _acquire_call(handle, answer, opts)
        finally:
            if answer and answer[0] in (0, _OWNER_DEAD):
                self._held[tid] = [1, handle]
            else:
                _path_close(handle)

    def _acquired(self, err: int, blocking: bool) -> bool:
        if err == 0:
            return True
        if err in _NOT_ACQUIRED and blocking:
            return False
        raise self._error(err)

    def _release_here(self, done: List[int]) -> None:
        """The calling thread's release for an asyncio hold (_async); DONE
        gets an item once the unlock ran: the hold finishes it if a signal
        handler raised before."""
        self._release_thread(True, done)

    def _abandon_here(self, err: int) -> None:
        # (a lock taken with EOWNERDEAD stays with this thread, which ends)
        if err == 0:
            self._release_here([])
        else:
            self._held.pop(_get_ident(), None)

    # ---------------------------------------------------------- releasing --

    def release(self, force: bool = False) -> None:
        """Count one acquire of this thread (or asyncio task) off
        (``force``: all of them); the last one releases the lock.  Nothing
        if this thread does not hold it through this object."""
        # From the entry on, a signal handler may raise at any call of a
        # Python function (as in acquire): all of it is inside the try, and
        # a release that was not done when one did is done all the same.
        done: List[Any] = []
        try:
            self._release_into(done, force)
        except BaseException:
            self._release_interrupted(done, force)
            raise

    def _release_into(self, done: List[Any], force: bool = False) -> None:
        """The release; DONE gets an item once it is done (by a count, by
        the unlock, or by an asyncio task's hold, which releases instead)."""
        hold = self._task_hold()
        if hold is None:
            self._release_thread(force, done)
            return
        hold.release(done, force)

    def _release_interrupted(self, done: List[Any], force: bool = False) -> None:
        """A signal handler raised in a release before DONE said it was
        done: do it all the same (a with block's exit must release) -- the
        thread's, or the task's hold's, finished where it stopped; its own
        errors give way to the handler's exception."""
        _async.finish_release(lambda: self._release_into(done, force), done)

    def _release_thread(self, force: bool, done: Optional[List[int]] = None) -> None:
        answer: List[int] = [] if done is None else done
        tid = _get_ident()
        held = self._holds().get(tid)
        if held is None:
            return
        if held[0] > 1 and not force:
            held[0] -= 1
            answer.append(0)            # (no point for a handler in between)
            return
        if self._release_after_consistent == tid:
            self._release_after_consistent = None
        handle = held[1]
        try:
            del self._held[tid]
            answer.extend(map(_path_unlock, (handle,)))
        except BaseException:
            # a signal handler's: if it came before the unlock ran, the
            # unlock runs all the same (a with block's exit must release)
            if not answer:
                _unlock_quietly(handle)
                answer.append(0)
            _path_close(handle)
            raise
        _path_close(handle)
        if answer[0]:
            raise self._error(answer[0], call="bakery_path_unlock")

    def consistent(self) -> None:
        """Mark the state the lock protects repaired, after
        :class:`bakery.OwnerDead`.  If the OwnerDead came from a ``with``
        (or ``async with``) statement, also release the lock: no block
        will."""
        hold = self._task_hold()
        if hold is not None:
            hold.consistent()
            return
        self._consistent_here()
        if self._release_after_consistent == _get_ident():
            self.release(force=True)

    def _consistent_here(self) -> None:
        held = self._holds().get(_get_ident())
        if held is None:
            raise make_error(errno.EPERM, os.fsdecode(self._path), "not held by this thread")
        err = lib.bakery_path_consistent(held[1])
        if err:
            raise self._error(err, call="bakery_path_consistent")

    # ---------------------------------------------------------- inspecting --

    def info(self) -> Dict[str, Any]:
        """Where the lock of the file PATH names now is: ``region`` and
        ``lock`` (its name there, for :class:`bakery.Region`), and the file's
        identity: ``dev``, ``ino``, ``stamp`` ('birth', 'generation' or
        'none': what tells a reused inode number apart) and
        ``stamp_value``."""
        handle = self._open()
        out = _native.PathInfo()
        err = lib.bakery_path_info(handle, ctypes.byref(out))
        _path_close(handle)
        if err:
            raise self._error(err)
        return {"region": out.region.decode(), "lock": out.lock.decode(), "dev": out.dev,
                "ino": out.ino, "stamp": _native.PATH_STAMPS.get(out.stamp, "none"),
                "stamp_value": out.stamp_value}

    def __reduce__(self) -> Any:
        return (_remake_path_lock, (self._path, self.timeout, self.blocking, self._create,
                                    self._shared))

    def __repr__(self) -> str:
        return "<bakery.PathLock %r%s%s>" % (self._path, " shared" if self._shared else "",
                                            " locked" if self.is_locked else "")


def _remake_path_lock(path: PathType, timeout: float, blocking: bool, create: bool,
                      shared: bool) -> PathLock:
    return PathLock(path, timeout, blocking, create=create, shared=shared)


class ReadWritePathLock:
    """The lock of the file or directory PATH, with readers: readers hold it
    together, a writer alone, and both queue in arrival order, so that
    neither starves.  ``with rw.read_lock():`` and ``with rw.write_lock():``
    (both take ``timeout`` and ``blocking`` as :meth:`PathLock.acquire`
    does), or ``rw.reader`` and ``rw.writer``, the two :class:`PathLock`
    objects.  A thread that holds one mode and asks for the other raises
    :class:`bakery.Deadlock`.  A dead reader changed nothing: its share
    comes back, nobody is told.  A dead writer makes the next holder raise
    :class:`bakery.OwnerDead`; a reader told so may look but not repair:
    it releases, and the next writer is told in turn."""

    def __init__(self, path: PathType, timeout: float = -1, blocking: bool = True, *,
                 create: bool = True) -> None:
        self.reader = PathLock(path, timeout, blocking, create=create, shared=True)
        self.writer = PathLock(path, timeout, blocking, create=create)

    @property
    def path(self) -> Union[str, bytes]:
        return self.writer.path

    def read_lock(self, timeout: Optional[float] = None,
                  blocking: Optional[bool] = None) -> AcquireReturnProxy:
        """Acquire as a reader; a proxy for ``with``."""
        return self.reader.acquire(timeout, blocking)

    def write_lock(self, timeout: Optional[float] = None,
                   blocking: Optional[bool] = None) -> AcquireReturnProxy:
        """Acquire as the writer; a proxy for ``with``."""
        return self.writer.acquire(timeout, blocking)

    def release_read_lock(self, force: bool = False) -> None:
        self.reader.release(force)

    def release_write_lock(self, force: bool = False) -> None:
        self.writer.release(force)

    def __reduce__(self) -> Any:
        w = self.writer
        return (_remake_rw_lock, (w.path, w.timeout, w.blocking, w._create))

    def __repr__(self) -> str:
        return "<bakery.ReadWritePathLock %r>" % (self.path,)


def _remake_rw_lock(path: PathType, timeout: float, blocking: bool,
                    create: bool) -> ReadWritePathLock:
    return ReadWritePathLock(path, timeout, blocking, create=create)


_forks = [0]         # forks on the way to this process: bumped in each child


def _count_fork() -> None:
    _forks[0] += 1


os.register_at_fork(after_in_child=_count_fork)
