# SPDX-License-Identifier: MIT
"""Region and Lock: the C library's bakery_t and bakery_lock_t."""

import ctypes
import errno
import math
import os
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional, Union

from . import _native, status as _status
from ._handle import Handle
from ._native import lib
from .errors import OwnerDead, make_error

Name = Union[str, bytes]


def _encode(name: Name, what: str) -> bytes:
    """NAME as bytes for C, refusing what C would silently cut short."""
    if not isinstance(name, (str, bytes)):
        raise TypeError("%s must be str or bytes, not %s" % (what, type(name).__name__))
    raw = os.fsencode(name)
    if b"\0" in raw:
        raise make_error(errno.EINVAL, repr(name), "%s contains a NUL character" % what)
    return raw


def _region_name(name: Name) -> str:
    text = os.fsdecode(name)
    return text if text.startswith("/") else "/" + text


def _count(value: Optional[int], what: str, limit: int) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("%s must be an int" % what)
    if not 1 <= value <= limit:
        raise make_error(errno.EINVAL, None, "%s must be from 1 to %d" % (what, limit))
    return value


def _mode(value: Optional[int]) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("mode must be an int, such as 0o660")
    if not 1 <= value <= 0o7777:
        raise make_error(errno.EINVAL, None, "mode must be permission bits, such as 0o660")
    return value


def _algo(algo: Optional[str]) -> int:
    if algo is None:
        return _native.ALGO_DEFAULT
    if not isinstance(algo, str):
        raise TypeError("algo must be a str such as 'black-white', or None")
    out = ctypes.c_int()
    if b"\0" in algo.encode() or lib.bakery_algo_parse(algo.encode(), ctypes.byref(out)):
        raise make_error(errno.EINVAL, repr(algo),
                         "unknown algorithm (lamport, boulangerie, black-white, jayanti)")
    return out.value


def unlink(name: Name) -> None:
    """Remove region NAME's name; processes that have it open keep using it."""
    err = lib.bakery_unlink(_encode(name, "region name"))
    if err:
        raise make_error(err, _region_name(name))


def _close_quietly(handle: Handle, close_fn: Any) -> None:
    try:
        handle.close(close_fn)
    except Exception:
        pass        # a held lock at exit: the kernel releases it with the process


class Region:
    """A region: a POSIX shared-memory object holding named locks.

    ``Region("/jobs")`` opens an existing region; with ``create=True`` it is
    created if missing (``exclusive=True``: fail with :class:`bakery.Exists`
    if it exists).  ``slots`` (participating threads, all processes),
    ``locks`` (named locks) and ``mode`` (permission bits, default 0o600)
    apply only when the region is created.  ``recover=False`` leaves dead
    participants' slots alone while opening.

    A Region may be used by every thread of a process; pickled (for instance
    to a ``multiprocessing`` child), it opens the region again by name.
    Close it with :meth:`close` or a ``with`` block; a Region that is garbage
    collected is closed too.
    """

    def __init__(self, name: Name, create: bool = False, *, exclusive: bool = False,
                 slots: Optional[int] = None, locks: Optional[int] = None,
                 mode: Optional[int] = None, recover: bool = True) -> None:
        raw = _encode(name, "region name")
        self.name: str = _region_name(name)
        cfg = _native.Config(_count(slots, "slots", _native.MAX_SLOTS),
                             _count(locks, "locks", _native.MAX_LOCKS),
                             _mode(mode))
        flags = (_native.CREATE if create else 0) | (_native.EXCL if exclusive else 0)
        flags |= 0 if recover else _native.NORECOVER
        if exclusive and not create:
            raise make_error(errno.EINVAL, self.name, "exclusive=True needs create=True")
        pointer = ctypes.c_void_p()
        err = lib.bakery_open(raw, flags, ctypes.byref(cfg), ctypes.byref(pointer))
        if err:
            raise make_error(err, self.name)
        self._handle = Handle(pointer.value, self.name)
        self._locks: "weakref.WeakSet[Lock]" = weakref.WeakSet()
        self._finalizer = weakref.finalize(self, _close_quietly, self._handle, lib.bakery_close)

    def lock(self, name: str, algo: Optional[str] = None, *,
             holders: Optional[int] = None) -> "Lock":
        """The lock NAME of this region, created if missing.

        ``algo`` ('lamport', 'boulangerie', 'black-white', 'jayanti') is fixed
        when the lock is created; None takes the lock's own (or the library
        default, black-white, for a new lock).  ``holders`` (k) is the
        capacity of a new lock: up to k holders at once, in arrival order (a
        counting semaphore whose units have owners; lamport and boulangerie
        only, lamport by default); joining, None takes the lock's own and
        another value than its own raises :class:`bakery.AlgorithmMismatch`."""
        return Lock(self, name, algo, holders=holders)

    def status(self) -> Dict[str, Any]:
        """The region's header, its slots in use and its locks: the same data
        (keys and values) as ``bakery status REGION --json``."""
        with self._handle.use() as pointer:
            return _status.snapshot(pointer, self.name)

    def unlink_lock(self, name: str, force: bool = False) -> None:
        """Remove the lock NAME from the region (``bakery rm``), freeing its
        table entry.  Only while nobody holds or waits for it
        (:class:`bakery.Busy` otherwise), for the region's owner
        (:class:`bakery.PermissionDenied`); :class:`bakery.NotFound` if there
        is no such lock.  A lock that owes a repair (its holder died inside
        and nobody has repaired since) is kept, so that its next holder is
        told: :class:`bakery.OwnerDead` or :class:`bakery.NotRecoverable`
        (the lock is not held by the caller), unless ``force`` is true.
        Lock objects still open on it raise :class:`bakery.LockRemoved` on
        their next acquire."""
        raw = _encode(name, "lock name")
        flags = _native.UNLINK_FORCE if force else 0
        with self._handle.use() as pointer:
            err = lib.bakery_lock_unlink_flags(pointer, raw, flags)
        if err:
            raise make_error(err, name)

    def recover(self) -> int:
        """Reap dead participants' slots now; the number reclaimed."""
        n = ctypes.c_uint()
        with self._handle.use() as pointer:
            err = lib.bakery_recover(pointer, ctypes.byref(n))
        if err:
            raise make_error(err, self.name)
        return n.value

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self._handle.closed

    def close(self) -> None:
        """Close this region's locks, then the region.  Busy if this thread
        holds one of them or another thread is inside a call on them."""
        for lock in list(self._locks):
            lock.close()
        self._handle.close(lib.bakery_close)
        self._finalizer.detach()

    def __enter__(self) -> "Region":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self) -> Any:
        return (Region, (self.name,))

    def __repr__(self) -> str:
        return "<bakery.Region %r%s>" % (self.name, " closed" if self.closed else "")


def _monotonic_deadline(timeout: float) -> _native.Timespec:
    ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + int(timeout * 1e9)
    return _native.Timespec(ns // 1000000000, ns % 1000000000)


def _reopen_lock(region: str, name: str, algo: Optional[str],
                 holders: Optional[int] = None) -> "Lock":
    return Region(region).lock(name, algo, holders=holders)


class Lock:
    """A named lock of a :class:`Region`: fair (first come, first served) and
    crash-proof.  Ownership is per thread, as with ``threading.Lock``'s
    owner-aware cousins: the thread that acquires it releases it.

    ``with lock:`` acquires and releases it.  If the previous holder died
    holding it, acquiring raises :class:`bakery.OwnerDead` *with the lock
    held*: repair the protected state, then call ``e.lock.consistent()``,
    which marks it repaired and, since the ``with`` body did not run,
    releases it.  Released without ``consistent()``, the lock becomes
    :class:`bakery.NotRecoverable` for good.

    ``with lock.read():`` (or ``acquire(shared=True)``) takes it as a
    reader: readers are inside together, a writer (``with lock:``) with
    nobody, and both queue in arrival order, so neither starves.  A reader
    that dies changes nothing: its share comes back, nobody is told.  A
    reader told :class:`bakery.OwnerDead` (a *writer* died) holds the lock
    shared: it may read the state to decide what to do, must not write it,
    and cannot repair it (``consistent()`` raises
    :class:`bakery.PermissionDenied`): it calls ``release()``, and the next
    writer is told in turn.
    """

    def __init__(self, region: Region, name: str, algo: Optional[str] = None, *,
                 holders: Optional[int] = None) -> None:
        if not isinstance(name, str):
            raise TypeError("lock name must be str, not %s" % type(name).__name__)
        raw = _encode(name, "lock name")
        self.region = region
        self.name = name
        self._algo_asked = algo
        self._holders_asked = holders
        self._what = "%s %s" % (region.name, name)
        self._release_after_consistent: Optional[int] = None
        pointer = ctypes.c_void_p()
        cfg = _native.LockConfig(_algo(algo), _count(holders, "holders", _native.MAX_HOLDERS))
        with region._handle.use() as b:
            err = lib.bakery_lock_open_config(b, raw, ctypes.byref(cfg), ctypes.byref(pointer))
        if err:
            raise make_error(err, self._what)
        self._handle = Handle(pointer.value, self._what)
        region._locks.add(self)
        self._finalizer = weakref.finalize(self, _close_quietly, self._handle,
                                           lib.bakery_lock_close)

    # ---------------------------------------------------------- acquiring --

    def acquire(self, blocking: bool = True, timeout: Optional[float] = -1, *,
                shared: bool = False) -> bool:
        """Acquire the lock; True once held.

        As ``threading.Lock.acquire``: ``blocking=False`` never waits
        (False if it would have to), ``timeout`` (seconds, -1 or None for no
        limit) gives up with False when it expires.  A deadline already
        past still makes one attempt.  ``shared=True`` takes it as a reader
        (not for a lock of several holders, nor jayanti's: ErrnoError
        ENOTSUP).  Raises :class:`bakery.OwnerDead` (held; a writer repairs,
        then ``consistent()``; a reader only releases),
        :class:`bakery.NotRecoverable`, :class:`bakery.Deadlock` (this
        thread holds it already, in either mode).
        """
        timeout = self._check_timeout(blocking, timeout)
        if shared:
            trylock, clocklock, lock = (lib.bakery_tryrdlock, lib.bakery_clockrdlock,
                                        lib.bakery_rdlock)
        else:
            trylock, clocklock, lock = (lib.bakery_trylock, lib.bakery_clocklock,
                                        lib.bakery_lock)
        with self._handle.use() as p:
            if not blocking:
                err = trylock(p)
            elif timeout < 0:
                err = lock(p)
            else:
                deadline = _monotonic_deadline(timeout)
                err = clocklock(p, time.CLOCK_MONOTONIC, ctypes.byref(deadline))
        if err == 0:
            return True
        if (err == errno.EBUSY and not blocking) or err == errno.ETIMEDOUT:
            return False
        raise self._error(err)

    @staticmethod
    def _check_timeout(blocking: bool, timeout: Optional[float]) -> float:
        if timeout is None or timeout == -1:
            return -1.0
        if not blocking:
            raise ValueError("can't specify a timeout for a non-blocking call")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
            raise TypeError("timeout must be a number of seconds")
        if math.isnan(timeout) or timeout < 0:
            raise ValueError("timeout value must be a non-negative number (or -1)")
        # beyond threading's limit: no limit
        return -1.0 if timeout > threading.TIMEOUT_MAX else float(timeout)

    def _error(self, err: int) -> Exception:
        e = make_error(err, self._what)
        if isinstance(e, OwnerDead):
            e.lock = self
        return e

    def release(self) -> None:
        """Release the lock.  :class:`bakery.PermissionDenied` if this thread
        does not hold it."""
        with self._handle.use() as p:
            err = lib.bakery_unlock(p)
        if err:
            raise self._error(err)
        if self._release_after_consistent == threading.get_ident():
            self._release_after_consistent = None

    def consistent(self) -> None:
        """Mark the state protected by the lock repaired, after
        :class:`bakery.OwnerDead`.  If the OwnerDead came from a ``with``
        statement (or :meth:`hold`), also release the lock: no block will."""
        with self._handle.use() as p:
            err = lib.bakery_consistent(p)
        if err:
            raise self._error(err)
        if self._release_after_consistent == threading.get_ident():
            self.release()

    def _enter(self, timeout: Optional[float], shared: bool = False) -> None:
        try:
            acquired = self.acquire(timeout=timeout, shared=shared)
        except OwnerDead:
            if not shared:
                self._release_after_consistent = threading.get_ident()
            raise
        if not acquired:
            raise make_error(errno.ETIMEDOUT, self._what,
                             "not acquired within %g seconds" % timeout)

    def __enter__(self) -> "Lock":
        self._enter(None)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    @contextmanager
    def hold(self, timeout: Optional[float] = None) -> Iterator["Lock"]:
        """``with lock.hold(timeout=2.5):`` as ``with lock:``, but raises
        :class:`bakery.Timeout` if not acquired within TIMEOUT seconds."""
        self._enter(timeout)
        try:
            yield self
        finally:
            self.release()

    @contextmanager
    def read(self, timeout: Optional[float] = None) -> Iterator["Lock"]:
        """``with lock.read():`` holds the lock as a reader, beside other
        readers; :class:`bakery.Timeout` if not acquired within TIMEOUT
        seconds.  If a writer died holding it, raises
        :class:`bakery.OwnerDead` with the lock held shared: the block does
        not run; look if need be, then ``e.lock.release()``."""
        self._enter(timeout, shared=True)
        try:
            yield self
        finally:
            self.release()

    # ---------------------------------------------------------- inspecting --

    def info(self) -> Dict[str, Any]:
        """This lock's entry of :meth:`Region.status` (holder, waiters,
        counters, state)."""
        index = ctypes.c_uint()
        with self._handle.use() as p:
            err = lib.bakery_lock_index(p, ctypes.byref(index))
        if err:
            raise self._error(err)
        with self.region._handle.use() as b:
            return _status.lock_info(b, index.value, self._what)

    def locked(self) -> bool:
        """True if some thread (of any process) holds the lock now."""
        return self.info()["holder"] is not None

    @property
    def capacity(self) -> int:
        """The lock's capacity: how many may hold it at once (1: a mutex)."""
        out = ctypes.c_uint()
        with self._handle.use() as p:
            err = lib.bakery_lock_holders(p, ctypes.byref(out))
        if err:
            raise self._error(err)
        return out.value

    @property
    def algorithm(self) -> str:
        """The lock's algorithm, such as 'black-white'."""
        return str(self.info()["algorithm"])

    # ------------------------------------------------------------- closing --

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self._handle.closed

    def close(self) -> None:
        """Free the handle (the lock stays in the region).  Busy if this
        thread holds it or another thread is inside a call on it."""
        self._handle.close(lib.bakery_lock_close)
        self._finalizer.detach()

    def __reduce__(self) -> Any:
        return (_reopen_lock, (self.region.name, self.name, self._algo_asked,
                               self._holders_asked))

    def __repr__(self) -> str:
        return "<bakery.Lock %r in %r%s>" % (self.name, self.region.name,
                                             " closed" if self.closed else "")
