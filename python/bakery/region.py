# SPDX-License-Identifier: MIT
"""Region and Lock: the C library's bakery_t and bakery_lock_t."""

import ctypes
import errno
import math
import os
import threading
import time
import weakref
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _async, _native, _signals, status as _status
from ._handle import Handle, close_all
from ._native import lib
from .errors import Deadlock, Error, OwnerDead, call_error, make_error

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
    # read and write bits only, as bakery_open takes them (a region has
    # nothing to execute)
    if value <= 0 or value & ~0o666:
        raise make_error(errno.EINVAL, None,
                         "mode must be read/write permission bits within 0o666, such as "
                         "0o660, not %s" % oct(value))
    return value


# What bakery_open, bakery_unlink and bakery_region_layout mean by these
# codes, once the other arguments were checked here: the name is at fault.
_NAME_CAUSES = {
    errno.EINVAL: "invalid region name (printable ASCII characters, no '/' but a leading one)",
    errno.ENAMETOOLONG: "region name too long (at most %d characters after the leading '/')"
                        % _native.REGION_NAME_MAX,
}


def _name_error(code: int, name: Name) -> Optional[Error]:
    """The exception for a region call's CODE if it says the name NAME is
    bad: NAME as given (repr), not as the library would have made it."""
    cause = _NAME_CAUSES.get(code)
    return make_error(code, repr(name), cause) if cause else None


def _flags(biased: bool) -> int:
    """struct bakery_lock_config's flags for Region.lock's BIASED."""
    if not isinstance(biased, bool):
        raise TypeError("biased must be True or False")
    return _native.LOCK_BIASED if biased else 0


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
        raise _name_error(err, name) or make_error(err, _region_name(name))


def region_layout(name: Name) -> Tuple[Optional[int], bool]:
    """``(version, compatible)`` of region NAME, as ``bakery list`` shows it:
    the layout version its header names (None for a header of another kind
    altogether, which names none where this library looks), and whether this
    library can read it.  A region of another layout version, which
    :class:`Region` refuses with :class:`bakery.VersionMismatch`, is
    ``(its version, False)``.  :class:`bakery.NotFound` if there is no such
    region, :class:`bakery.BadRegion` for an object that is no region of any
    layout (or a damaged one of this layout)."""
    raw = _encode(name, "region name")
    version = ctypes.c_uint()
    err = lib.bakery_region_layout(raw, ctypes.byref(version))
    if not err:
        err = _readable(raw)
    if err == _native.EVERSION:
        return version.value or None, False
    if err:
        raise _name_error(err, name) or make_error(err, _region_name(name))
    return version.value, True


def _readable(raw: bytes) -> int:
    """0 if this library can read the region RAW, else the error: a
    read-only open, which joins nothing and reaps nothing (as `bakery list`
    opens regions)."""
    pointer = ctypes.c_void_p()
    err = lib.bakery_open(raw, _native.RDONLY, None, ctypes.byref(pointer))
    if not err:
        lib.bakery_close(pointer)
    return err


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
    ``locks`` (named locks) and ``mode`` (read/write permission bits within
    0o666, default 0o600) apply only when the region is created.
    ``recover=False`` leaves dead participants' slots alone while opening.

    A region whose object in /dev/shm belongs to another user (neither
    you nor root) is refused with :class:`bakery.PermissionDenied`, which
    names its owner: anyone may create any name there first, and a
    region's owner can break the exclusion of its locks.
    ``any_owner=True`` joins it all the same, to share a region between
    users on purpose (``BAKERY_ANY_OWNER``; ``--any-owner`` for the tool).

    A Region may be used by every thread of a process; pickled (for instance
    to a ``multiprocessing`` child), it opens the region again by name.
    Close it with :meth:`close` or a ``with`` block; a Region that is garbage
    collected is closed too.
    """

    def __init__(self, name: Name, create: bool = False, *, exclusive: bool = False,
                 slots: Optional[int] = None, locks: Optional[int] = None,
                 mode: Optional[int] = None, recover: bool = True,
                 any_owner: bool = False) -> None:
        raw = _encode(name, "region name")
        self.name: str = _region_name(name)
        cfg = _native.Config(_count(slots, "slots", _native.MAX_SLOTS),
                             _count(locks, "locks", _native.MAX_LOCKS),
                             _mode(mode))
        flags = (_native.CREATE if create else 0) | (_native.EXCL if exclusive else 0)
        flags |= 0 if recover else _native.NORECOVER
        flags |= _native.ANY_OWNER if any_owner else 0
        if exclusive and not create:
            raise make_error(errno.EINVAL, self.name, "exclusive=True needs create=True")
        pointer = ctypes.c_void_p()
        err = lib.bakery_open(raw, flags, ctypes.byref(cfg), ctypes.byref(pointer))
        if err:
            raise (_name_error(err, name) or
                   call_error(err, "bakery_open", self.name, self.name))
        self._any_owner = bool(any_owner)
        self._handle = Handle(pointer.value, self.name)
        self._locks: "weakref.WeakSet[Lock]" = weakref.WeakSet()
        self._finalizer = weakref.finalize(self, _close_quietly, self._handle, lib.bakery_close)

    def lock(self, name: str, algo: Optional[str] = None, *,
             holders: Optional[int] = None, biased: bool = False) -> "Lock":
        """The lock NAME of this region, created if missing.

        ``algo`` ('lamport', 'boulangerie', 'black-white', 'jayanti') is fixed
        when the lock is created; None takes the lock's own (or the library
        default, black-white, for a new lock).  ``holders`` (k) is the
        capacity of a new lock: up to k holders at once, in arrival order (a
        counting semaphore whose units have owners; lamport and boulangerie
        only, lamport by default); joining, None takes the lock's own and
        another value than its own raises :class:`bakery.AlgorithmMismatch`,
        as does another algorithm than its own (but lamport and boulangerie,
        which take part in one lock): its message says what the lock is.
        ``biased=True`` creates a biased lock (lamport or boulangerie, one
        holder; lamport by default): once one thread has taken it 64 times
        in a row alone, that thread's passages take no locked instruction
        and no barrier, until another thread's lock call revokes the bias
        (a membarrier).  ErrnoError ENOTSUP with another algorithm, with
        ``holders`` above 1, or where membarrier(2) is refused; joining,
        True raises AlgorithmMismatch for a lock that is not biased, and
        False (the default) joins either kind."""
        return Lock(self, name, algo, holders=holders, biased=biased)

    def status(self) -> Dict[str, Any]:
        """The region's header, its slots in use and its locks: the same data
        (keys and values) as ``bakery status REGION --json``."""
        with self._handle.use() as pointer:
            return _status.snapshot(pointer, self.name)

    def unlink_lock(self, name: str, force: bool = False) -> None:
        """Remove the lock NAME from the region (``bakery rm``), freeing its
        table entry.  Only while nobody holds or waits for it
        (:class:`bakery.Busy` otherwise; a holder or waiter that was killed
        does not count: its death is proven and recovered first), for the
        region's owner or root (:class:`bakery.PermissionDenied`, which
        names the owner, for another user who joined it with
        ``any_owner=True``); :class:`bakery.NotFound` if there is no such
        lock.  A lock that owes a repair (its holder died inside and nobody
        has repaired since) is kept, so that its next holder is told:
        :class:`bakery.OwnerDead` or :class:`bakery.NotRecoverable`, unless
        ``force`` is true.  Such an OwnerDead holds nothing and its
        ``lock`` is None: to repair, acquire the lock (OwnerDead, held),
        repair, ``consistent()``, release, then remove it.  Lock objects
        still open on it raise :class:`bakery.LockRemoved` on their next
        acquire."""
        raw = _encode(name, "lock name")
        flags = _native.UNLINK_FORCE if force else 0
        with self._handle.use() as pointer:
            err = lib.bakery_lock_unlink_flags(pointer, raw, flags)
        if err:
            raise call_error(err, "bakery_lock_unlink_flags", "%s %s" % (self.name, name),
                             self.name)

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
        """Close this region's locks, then the region -- or nothing: Busy
        if a thread of this process holds a lock of the region, or another
        thread is inside a call on it or one of its locks."""
        locks = list(self._locks)
        close_all([(lock._handle, lib.bakery_lock_close) for lock in locks] +
                  [(self._handle, lib.bakery_close)], self._check_not_held)
        for lock in locks:
            lock._finalizer.detach()
        self._finalizer.detach()

    def _check_not_held(self) -> None:
        """Busy if a live thread of this process holds a lock of the region
        (its slot says so; the pid is the same in every thread)."""
        holder = _status.holder_in_process(self._handle._pointer, os.getpid())
        if holder is not None:
            raise make_error(errno.EBUSY, self.name,
                             "thread %d of this process holds lock %s of it"
                             % (holder.tid, self._lock_name(holder.lock)))

    def _lock_name(self, index: int) -> str:
        info = _native.LockInfo()
        if index < 0 or lib.bakery_lock_info(self._handle._pointer, index, ctypes.byref(info)):
            return "?"
        return repr(info.name.decode("latin-1"))

    def __enter__(self) -> "Region":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self) -> Any:
        return (_reopen_region, (self.name, self._any_owner))

    def __repr__(self) -> str:
        return "<bakery.Region %r%s>" % (self.name, " closed" if self.closed else "")


def _reopen_region(name: str, any_owner: bool = False) -> Region:
    # a pickled Region: the region of that name, joined as the original was
    return Region(name, any_owner=any_owner)


def _reopen_lock(region: str, name: str, algo: Optional[str],
                 holders: Optional[int] = None, any_owner: bool = False,
                 biased: bool = False) -> "Lock":
    # the lock the pickled Lock was open on: if it has been removed since,
    # LockRemoved, never a new lock of that name
    return Lock(_reopen_region(region, any_owner), name, algo, holders=holders,
                biased=biased, _create=False)


_HELD = (0, errno.EOWNERDEAD)       # the answers of a call that took the lock
# the two algorithms that may take part in one lock, each its own variant
_SHARE_LOCKS = {"lamport", "boulangerie"}


def _mismatch_text(li: _native.LockInfo, cfg: _native.LockConfig) -> Optional[str]:
    """Why CFG cannot take part in the lock LI, as the tool says it: the
    lock's capacity, bias or algorithm and the one asked for, in the order
    the library checks them.  None if LI does not explain it (the lock was
    removed and made again meanwhile): the library's text then."""
    if cfg.holders and li.capacity != cfg.holders:
        return ("the lock admits %d holder%s; holders=%d cannot take part in it"
                % (li.capacity, "" if li.capacity == 1 else "s", cfg.holders))
    if cfg.flags & _native.LOCK_BIASED and not li.flags & _native.LOCK_BIASED:
        return "the lock is not biased; biased=True cannot take part in it"
    theirs, ours = _status.algo_word(li.algo), _status.algo_word(cfg.algo)
    if (cfg.algo != _native.ALGO_DEFAULT and theirs != ours and
            {theirs, ours} != _SHARE_LOCKS):
        return "the lock uses %s; algo=%r cannot take part in it" % (theirs, ours)
    return None


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

    In the main thread a wait runs Python's signal handlers: one that
    raises (Ctrl-C's KeyboardInterrupt) ends the wait, and its exception
    propagates with the lock not held.  ``async with lock:`` and
    :meth:`acquire_async` wait without blocking the event loop.
    """

    def __init__(self, region: Region, name: str, algo: Optional[str] = None, *,
                 holders: Optional[int] = None, biased: bool = False,
                 _create: bool = True) -> None:
        if not isinstance(name, str):
            raise TypeError("lock name must be str, not %s" % type(name).__name__)
        raw = _encode(name, "lock name")
        self.region = region
        self.name = name
        self._algo_asked = algo
        self._holders_asked = holders
        self._biased_asked = biased
        self._what = "%s %s" % (region.name, name)
        self._release_after_consistent: Optional[int] = None
        # the asyncio tasks that hold it, each with its hold (_async.py)
        self._task_holds: Dict[Any, Any] = {}
        pointer = ctypes.c_void_p()
        cfg = _native.LockConfig(_algo(algo), _count(holders, "holders", _native.MAX_HOLDERS),
                                 _flags(biased))
        with region._handle.use() as b:
            if _create:
                err = lib.bakery_lock_open_config(b, raw, ctypes.byref(cfg),
                                                  ctypes.byref(pointer))
            else:
                err = lib.bakery_lock_lookup(b, raw, cfg.algo, ctypes.byref(pointer))
        if err == errno.ENOENT and not _create:
            err = _native.EREMOVED
        if err == _native.EALGO:
            raise self._mismatch(raw, cfg)
        if err:
            raise make_error(err, self._what)
        self._handle = Handle(pointer.value, self._what)
        region._locks.add(self)
        self._finalizer = weakref.finalize(self, _close_quietly, self._handle,
                                           lib.bakery_lock_close)
        # bakery_lock_lookup takes no configuration: the capacity and the
        # bias asked for are checked here, as bakery_lock_open_config does
        if not _create and ((cfg.holders and cfg.holders != self.capacity) or
                            (biased and not self.biased)):
            e = self._mismatch(raw, cfg)
            self.close()
            raise e

    def _mismatch(self, raw: bytes, cfg: _native.LockConfig) -> Exception:
        """AlgorithmMismatch for joining the existing lock RAW with CFG."""
        with self.region._handle.use() as b:
            li = _status.find_lock(b, raw)
        return make_error(_native.EALGO, self._what,
                          None if li is None else _mismatch_text(li, cfg))

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

        In the main thread a blocking wait runs Python's signal handlers as
        they come: a handler that raises (Ctrl-C) ends the wait, and its
        exception propagates with the lock not held -- also when it comes
        just as the lock was taken (then the lock is released first); one
        that returns leaves the thread's place in line as it was.
        """
        timeout = self._check_timeout(blocking, timeout)
        deadline = _native.monotonic_deadline(timeout) if blocking and timeout >= 0 else None
        # the main thread runs signal handlers: it tries first, and waits
        # (with the handlers running) only if it must
        waits = blocking and not _signals.in_main_thread()
        if not waits:
            fn, args = (lib.bakery_tryrdlock if shared else lib.bakery_trylock), ()
        elif deadline is None:
            fn, args = (lib.bakery_rdlock if shared else lib.bakery_lock), ()
        else:
            fn = lib.bakery_clockrdlock if shared else lib.bakery_clocklock
            args = (time.CLOCK_MONOTONIC, ctypes.byref(deadline))
        answer: List[int] = []
        # From the call on, until the lock is returned as held, a signal
        # handler may raise at any call of a Python function (CPython runs
        # handlers on entering one, and as a C call returns): all of it is
        # inside the try, and the answer that says the lock was taken is
        # returned without another call.
        try:
            self._handle.call(answer, fn, *args)
            if answer[0] == errno.EBUSY and blocking and not waits:
                # the main thread's blocking acquisition: bakery_acquire
                # asks _signals' callback to run Python's signal handlers
                # while it waits
                _signals.acquire(answer, self._wait_call, shared, deadline)
            if answer[0] == 0:
                return True
            error = self._refusal(answer[0], blocking)
        except BaseException as e:      # a signal handler's
            self._interrupted_holding(answer, e)
            raise
        # no call from here on: EOWNERDEAD's error is raised with the lock
        # held, and a handler run by a call would take its place
        if error is None:
            return False
        raise error

    def _interrupted_holding(self, answer: List[int], e: BaseException) -> None:
        """A signal handler raised E as an acquisition returned ANSWER: the
        lock must not stay held without its holder knowing.  Released if it
        was taken; if it was taken with EOWNERDEAD, kept, and OwnerDead
        raised instead (with E as its cause): the state must be repaired or
        the lock released by whoever catches it, and a release here would
        make the lock not recoverable for good."""
        if not answer or answer[0] not in _HELD:
            return
        if answer[0] == errno.EOWNERDEAD:
            raise self._error(errno.EOWNERDEAD) from e
        self._unlock_quietly()

    def _unlock_quietly(self) -> None:
        done: List[int] = []
        while not done:                 # until the unlock has run
            try:
                self._handle.call(done, lib.bakery_unlock)
            except Exception:
                return                  # closed: nothing to release through
            except BaseException:       # another handler's: unlock all the same
                if done:
                    raise

    def _refusal(self, err: int, blocking: bool) -> Optional[Exception]:
        """For an acquisition that answered ERR, not 0: None if it just did
        not acquire (busy, timed out), else the error to raise."""
        if (err == errno.EBUSY and not blocking) or err == errno.ETIMEDOUT:
            return None
        return self._error(err)

    def _acquired(self, err: int, blocking: bool) -> bool:
        if err == 0:
            return True
        error = self._refusal(err, blocking)
        if error is None:
            return False
        raise error

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

    def _error(self, err: int, call: str = "") -> Exception:
        e = call_error(err, call, self._what)
        if isinstance(e, OwnerDead):
            e.lock = self
        return e

    def release(self) -> None:
        """Release the lock.  :class:`bakery.PermissionDenied` if this thread
        does not hold it.  In an asyncio task: the task's hold (taken with
        :meth:`acquire_async`), or, as with :class:`asyncio.Lock`, one that
        another task of its event loop took."""
        # From the entry on, a signal handler may raise at any call of a
        # Python function (as in acquire): all of it is inside the try, and
        # a release that had not run when one did runs all the same.
        answer: List[Any] = []
        try:
            self._release_into(answer)
        except BaseException:
            self._release_interrupted(answer)
            raise

    def _release_into(self, answer: List[Any]) -> None:
        """The release, its unlock's answer appended to ANSWER as it runs
        (an item too once an asyncio task's hold is released instead)."""
        hold = _async.task_hold(self) if self._task_holds else None
        if hold is None:
            self._unlock_into(answer)
            return
        hold.release(answer)

    def _release_interrupted(self, answer: List[Any]) -> None:
        """A signal handler raised in a release before ANSWER said it was
        done: do it all the same (a with block's exit must release) -- the
        calling thread's unlock, or the task's hold's release, finished
        where it stopped (its own errors give way to the handler's)."""
        if not self._task_holds:
            if not answer:
                self._unlock_quietly()
            return
        _async.finish_release(lambda: self._release_into(answer), answer)

    def _unlock_into(self, answer: List[int]) -> None:
        """The calling thread's unlock, its answer appended to ANSWER (by C
        code: an exception raised as the call returns leaves it there)."""
        self._handle.call(answer, lib.bakery_unlock)
        if answer[0]:
            raise self._error(answer[0], "bakery_unlock")
        if self._release_after_consistent == threading.get_ident():
            self._release_after_consistent = None

    def _release_here(self, answer: List[int]) -> None:
        """The calling thread's unlock for an asyncio hold (_async), its
        answer appended to ANSWER as it runs: the hold finishes it if a
        signal handler raised before."""
        self._unlock_into(answer)

    def consistent(self) -> None:
        """Mark the state protected by the lock repaired, after
        :class:`bakery.OwnerDead`.  If the OwnerDead came from a ``with``
        statement (or :meth:`hold`), also release the lock: no block will."""
        hold = _async.task_hold(self) if self._task_holds else None
        if hold is not None:
            hold.consistent()
            return
        self._consistent_here()
        if self._release_after_consistent == threading.get_ident():
            self.release()

    def _consistent_here(self) -> None:
        with self._handle.use() as p:
            err = lib.bakery_consistent(p)
        if err:
            raise self._error(err, "bakery_consistent")

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
        # release()'s body: a call of it would be one more point where a
        # signal handler could raise before the release
        answer: List[Any] = []
        try:
            self._release_into(answer)
        except BaseException:
            self._release_interrupted(answer)
            raise

    def hold(self, timeout: Optional[float] = None) -> "_Hold":
        """``with lock.hold(timeout=2.5):`` as ``with lock:``, but raises
        :class:`bakery.Timeout` if not acquired within TIMEOUT seconds.
        ``async with lock.hold(timeout=2.5):`` too."""
        return _Hold(self, timeout, False)

    def read(self, timeout: Optional[float] = None) -> "_Hold":
        """``with lock.read():`` holds the lock as a reader, beside other
        readers; :class:`bakery.Timeout` if not acquired within TIMEOUT
        seconds.  If a writer died holding it, raises
        :class:`bakery.OwnerDead` with the lock held shared: the block does
        not run; look if need be, then ``e.lock.release()``.  ``async with
        lock.read():`` too."""
        return _Hold(self, timeout, True)

    # ------------------------------------------------------------ asyncio --

    async def acquire_async(self, blocking: bool = True, timeout: Optional[float] = -1, *,
                            shared: bool = False) -> bool:
        """:meth:`acquire` for a coroutine: ``await lock.acquire_async()``.

        The task waits in line, in arrival order, while the event loop runs
        the other tasks: the wait runs in a thread of its own, which then
        holds the lock for the task (ownership is per thread) until the
        task calls :meth:`release`.  Cancelling the task while it waits
        takes it out of line (also if the lock was taken just then: it is
        released); the cancellation goes on once nothing is held."""
        timeout = self._check_timeout(blocking, timeout)
        return await _async.acquire(self, blocking, timeout, shared, False)

    async def __aenter__(self) -> "Lock":
        await _async.enter(self, -1, False)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        answer: List[Any] = []          # as __exit__: all of it in one try
        try:
            await _async.release(self, answer)
        except BaseException:
            self._release_interrupted(answer)
            raise

    # what _async asks of a lock
    _reentrant = False

    def _try_here(self, shared: bool) -> Optional[bool]:
        try:
            return self.acquire(blocking=False, shared=shared)
        except Deadlock:
            return None                 # this thread holds it, for another task

    def _wait_call(self, answer: List[int], opts: Any) -> None:
        self._handle.call(answer, lib.bakery_acquire, opts)

    def _abandon_here(self, err: int) -> None:
        if err == 0:
            self._unlock_quietly()

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

    @property
    def biased(self) -> bool:
        """True if the lock was created biased (``biased=True``), whether or
        not it is biased to a thread now (``info()["bias_slot"]``)."""
        return bool(self.info()["biased"])

    # ------------------------------------------------------------- closing --

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self._handle.closed

    def close(self) -> None:
        """Free the handle (the lock stays in the region) -- or nothing:
        Busy if a thread of this process (or an asyncio task) holds the
        lock, as a writer or a reader, or another thread is inside a call
        on it."""
        if self._task_holds:
            raise make_error(errno.EBUSY, self._what, "held by a task")
        close_all([(self._handle, lib.bakery_lock_close)], self._check_not_held)
        self._finalizer.detach()

    def _check_not_held(self) -> None:
        """Busy if a live thread of this process holds the lock (the C call
        refuses only for the calling thread; another's release would then
        find the handle closed, and the lock would stay held until that
        thread exits, a dead owner).

        Run by close_all with the handle's mutex held and no call running
        on it: no thread can be acquiring or releasing through this object
        meanwhile, and one that acquired through it before has its hold in
        the region, where this looks (its slot's registers).  Not covered:
        a thread that holds the lock beside a lower-numbered lock of the
        region while another holder of it (a reader, one of k holders)
        comes first (status.lock_holder_in_process: the introspection
        calls name one lock per slot, one holder per lock); and holds
        taken meanwhile through another Lock object of the same lock,
        which do not need this handle."""
        pointer = self._handle._pointer
        index = ctypes.c_uint()
        if pointer is None or lib.bakery_lock_index(pointer, ctypes.byref(index)):
            return          # the lock was removed: nobody holds it through this handle
        with self.region._handle.use() as b:
            holder = _status.lock_holder_in_process(b, index.value, os.getpid())
        if holder is not None:
            raise make_error(errno.EBUSY, self._what,
                             "thread %d of this process holds it%s"
                             % (holder.tid, " (as a reader)" if holder.shared and
                                holder.lock == index.value else ""))

    def __reduce__(self) -> Any:
        return (_reopen_lock, (self.region.name, self.name, self._algo_asked,
                               self._holders_asked, self.region._any_owner,
                               self._biased_asked))

    def __repr__(self) -> str:
        return "<bakery.Lock %r in %r%s>" % (self.name, self.region.name,
                                             " closed" if self.closed else "")


class _Hold:
    """``lock.hold(timeout)`` and ``lock.read(timeout)``: ``with`` and
    ``async with`` blocks that raise Timeout when not acquired in time."""

    __slots__ = ("_lock", "_timeout", "_shared")

    def __init__(self, lock: Lock, timeout: Optional[float], shared: bool) -> None:
        self._lock, self._timeout, self._shared = lock, timeout, shared

    def __enter__(self) -> Lock:
        self._lock._enter(self._timeout, self._shared)
        return self._lock

    def __exit__(self, *exc: Any) -> None:
        answer: List[Any] = []          # as Lock.__exit__
        try:
            self._lock._release_into(answer)
        except BaseException:
            self._lock._release_interrupted(answer)
            raise

    async def __aenter__(self) -> Lock:
        await _async.enter(self._lock, self._lock._check_timeout(True, self._timeout),
                           self._shared)
        return self._lock

    async def __aexit__(self, *exc: Any) -> None:
        answer: List[Any] = []          # as Lock.__aexit__
        try:
            await _async.release(self._lock, answer)
        except BaseException:
            self._lock._release_interrupted(answer)
            raise
