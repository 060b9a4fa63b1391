# SPDX-License-Identifier: MIT
"""The exceptions: one :class:`Error` hierarchy for every error number.

Every exception carries ``code`` (the C library's error number: a positive
errno value or a negative ``BAKERY_E*`` value) and ``message`` (what
happened: ``bakery_strerror``'s text for the code, or where that text lists
the causes of several calls, or there is more to say, the failed call's own:
whose region it is, what the lock is).  Those with an errno value are also
:class:`OSError` instances with ``errno`` and ``strerror`` set, and where a
built-in ``OSError`` subclass fits they derive from it too (``NotFound`` is a
``FileNotFoundError``, ``Timeout`` a ``TimeoutError``...).
"""

import errno as _errno
import os
import pwd
from typing import Any, Dict, Optional, Type

from . import _native


class Error(Exception):
    """Any error from libbakery or from this package.

    Attributes: ``code`` (error number), ``message`` (what happened, for the
    call that failed; else ``bakery_strerror``'s text for the code),
    ``what`` (the region or lock concerned, or None).
    """

    code: int
    message: str
    what: Optional[str]

    def __init__(self, code: int, message: Optional[str] = None,
                 what: Optional[str] = None) -> None:
        self.code = code
        self.message = message if message is not None else _native.strerror(code)
        self.what = what
        super().__init__(code, self.message)

    def __str__(self) -> str:
        return self.message if self.what is None else "%s: %s" % (self.what, self.message)

    def __reduce__(self) -> Any:
        # picklable (multiprocessing sends exceptions back to the parent)
        return (make_error, (self.code, self.what, self.message))


class LibraryError(Error):
    """A ``BAKERY_E*`` error: the library's own numbers, not errno values."""


class BadRegion(LibraryError):
    """BAKERY_EBADREGION: not a valid region (wrong magic, truncated, corrupted)."""


class VersionMismatch(LibraryError):
    """BAKERY_EVERSION: the region was made by an incompatible layout version."""


class AlgorithmMismatch(LibraryError):
    """BAKERY_EALGO: the lock exists with an algorithm, or a capacity
    (``holders=``), this handle cannot join, or is not biased and
    ``biased=True`` was asked for; the message names the lock's and the
    one asked for."""


class NoFreeSlot(LibraryError):
    """BAKERY_ESLOTS: no free participant slot, even after reaping dead ones."""


class LockTableFull(LibraryError):
    """BAKERY_ELOCKS: no free entry in the region's lock table."""


class LockRemoved(LibraryError):
    """BAKERY_EREMOVED: the lock was removed (:meth:`Region.unlink_lock`)
    after this Lock was opened; open the name again for a new lock."""


class TooManyRegions(LibraryError):
    """BAKERY_EREGIONS: the thread takes part in 1,024 regions already (the
    kernel's robust-list limit, not a descriptor limit: ``ulimit -n`` does
    not change it); close a Region it no longer uses."""


class ErrnoError(Error, OSError):
    """An error with an errno value: also an :class:`OSError`."""

    def __str__(self) -> str:
        return Error.__str__(self)


class OwnerDead(ErrnoError):
    """EOWNERDEAD: a holder of the lock died inside its critical section.

    From an acquisition (``with lock:``, ``acquire()``, ``hold()``,
    ``read()``...), the lock IS HELD by the caller: repair the protected
    state, then call ``e.lock.consistent()``.  ``lock`` is the
    :class:`bakery.Lock`.

    From :meth:`bakery.Region.unlink_lock`, which keeps a lock that owes a
    repair, NOTHING is held and ``lock`` is None: to repair, acquire the
    lock (which raises OwnerDead with it held), repair, ``consistent()``,
    release, then remove it; or ``unlink_lock(name, force=True)`` removes
    it with the news of the death."""

    lock: Any = None


class NotRecoverable(ErrnoError):
    """ENOTRECOVERABLE: the lock was released after an owner death without
    ``consistent()``; it can never be acquired again."""


class Timeout(ErrnoError, TimeoutError):
    """ETIMEDOUT: the lock was not acquired in time."""


class NotFound(ErrnoError, FileNotFoundError):
    """ENOENT: no such region."""


class Exists(ErrnoError, FileExistsError):
    """EEXIST: the region exists (exclusive creation)."""


class PermissionDenied(ErrnoError, PermissionError):
    """EACCES or EPERM: no permission; the region belongs to another user
    (``any_owner=True`` joins it), or only its owner may do that; or the
    lock is not held by this thread.  The message says which."""


class Busy(ErrnoError):
    """EBUSY: the object is in use (a held lock, or a call still running)."""


class Deadlock(ErrnoError):
    """EDEADLK: the calling thread already holds the lock."""


class InvalidArgument(ErrnoError, ValueError):
    """EINVAL or ENAMETOOLONG: a bad name, size, mode or algorithm."""


class OutOfMemory(ErrnoError, MemoryError):
    """ENOMEM: no memory or no mappings left."""


class Closed(ErrnoError, ValueError):
    """EBADF: the Region or Lock was closed."""


_BY_CODE: Dict[int, Type[Error]] = {
    _native.EBADREGION: BadRegion,
    _native.EVERSION: VersionMismatch,
    _native.EALGO: AlgorithmMismatch,
    _native.ESLOTS: NoFreeSlot,
    _native.ELOCKS: LockTableFull,
    _native.EREMOVED: LockRemoved,
    _native.EREGIONS: TooManyRegions,
    _errno.EOWNERDEAD: OwnerDead,
    _errno.ENOTRECOVERABLE: NotRecoverable,
    _errno.ETIMEDOUT: Timeout,
    _errno.ENOENT: NotFound,
    _errno.EEXIST: Exists,
    _errno.EACCES: PermissionDenied,
    _errno.EPERM: PermissionDenied,
    _errno.EBUSY: Busy,
    _errno.EDEADLK: Deadlock,
    _errno.EINVAL: InvalidArgument,
    _errno.ENAMETOOLONG: InvalidArgument,
    _errno.ENOMEM: OutOfMemory,
    _errno.EBADF: Closed,
}


def error_class(code: int) -> Type[Error]:
    """The exception class for an error number."""
    if code in _BY_CODE:
        return _BY_CODE[code]
    return ErrnoError if code > 0 else LibraryError


def make_error(code: int, what: Optional[str] = None, message: Optional[str] = None) -> Error:
    """An exception for CODE; WHAT (a region or lock name) is shown after the text."""
    return error_class(code)(code, message, what)


# The cause of EPERM from each call that returns it, where bakery_strerror's
# one text lists the causes of all of them.  {owner}: the region's owner
# (shm_owner), {region}: its name.
_EPERM_CAUSES = {
    "bakery_open": "the region belongs to {owner}, not to you: not joined, since its "
                   "owner could break its exclusion (any_owner=True to share it)",
    "bakery_path_open": "the region of path locks {region} belongs to {owner}, not to "
                        "you: not joined, since its owner could break its exclusion "
                        "(remove it, or name another with " + _native.PATH_REGION_ENV + ")",
    "bakery_lock_unlink_flags": "the region belongs to {owner}: only its owner (or "
                                "root) may remove its locks",
    "bakery_unlock": "the calling thread does not hold this lock",
    "bakery_consistent": "the calling thread does not hold this lock, or holds it as a "
                         "reader, who cannot repair",
}
_EPERM_CAUSES["bakery_path_unlock"] = _EPERM_CAUSES["bakery_unlock"]
_EPERM_CAUSES["bakery_path_consistent"] = _EPERM_CAUSES["bakery_consistent"]

# Other codes whose bakery_strerror text is the lock calls' and says what
# is false of another call: (code, call) -> that call's own text.  A
# refused unlink holds nothing.
_CALL_CAUSES = {
    (_errno.EOWNERDEAD, "bakery_lock_unlink_flags"):
        "not removed: a holder of the lock died inside and nobody has repaired since "
        "(the lock is not held: acquire it, repair, consistent(), release, then remove "
        "it; force=True removes it all the same)",
    (_errno.ENOTRECOVERABLE, "bakery_lock_unlink_flags"):
        "not removed: the lock is not recoverable (released without consistent() after "
        "its holder died); force=True removes it all the same",
    (_native.ELOCKS, "bakery_path_open"):
        "the region of path locks {region} is full: every lock of its table is held, "
        "waited for, or owner-died (a file whose holder died and that nobody has locked "
        "since); `bakery status {region}` lists them",
}


def shm_owner(region: str) -> str:
    """"user NAME (uid N)" for the owner of REGION's object in /dev/shm
    ("uid N" if the user has no name, "another user" if the object is
    gone), as the bakery tool says it."""
    try:
        uid = os.stat("/dev/shm/" + region.lstrip("/")).st_uid
    except OSError:
        return "another user"
    try:
        return "user %s (uid %d)" % (pwd.getpwuid(uid).pw_name, uid)
    except KeyError:
        return "uid %d" % uid


def call_error(code: int, call: str, what: Optional[str] = None,
               region: Optional[str] = None) -> Error:
    """An exception for CODE as the C function CALL returned it: where the
    library's text for CODE lists the causes of several calls (EPERM), or
    is the lock calls' (EOWNERDEAD, ENOTRECOVERABLE from an unlink), the
    message is CALL's own.  REGION: the region a message names."""
    cause = (_EPERM_CAUSES.get(call) if code == _errno.EPERM else
             _CALL_CAUSES.get((code, call)))
    if cause is not None and "{" in cause:
        cause = cause.format(region=region, owner=shm_owner(region or ""))
    return make_error(code, what, cause)
