# SPDX-License-Identifier: MIT
"""The exceptions: one :class:`Error` hierarchy for every error number.

Every exception carries ``code`` (the C library's error number: a positive
errno value or a negative ``BAKERY_E*`` value) and ``message``
(``bakery_strerror``'s text for it).  Those with an errno value are also
:class:`OSError` instances with ``errno`` and ``strerror`` set, and where a
built-in ``OSError`` subclass fits they derive from it too (``NotFound`` is a
``FileNotFoundError``, ``Timeout`` a ``TimeoutError``...).
"""

import errno as _errno
from typing import Any, Dict, Optional, Type

from . import _native


class Error(Exception):
    """Any error from libbakery or from this package.

    Attributes: ``code`` (error number), ``message`` (its text, from
    ``bakery_strerror``), ``what`` (the region or lock concerned, or None).
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
    """BAKERY_EALGO: the lock exists with an algorithm this handle cannot join."""


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
    """EOWNERDEAD: the lock IS HELD by the caller, but its previous holder died
    inside its critical section.  Repair the protected state, then call
    ``e.lock.consistent()``.  ``lock`` is the :class:`bakery.Lock`."""

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
    """EACCES or EPERM: no permission, or the lock is not held by this thread."""


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
