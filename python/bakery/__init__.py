# SPDX-License-Identifier: MIT
"""bakery: fair, crash-proof locks shared by unrelated processes.

A Python interface to the libbakery C library (loaded with ctypes; set
``BAKERY_LIBRARY`` to a library's path to choose another one)::

    import bakery
    region = bakery.Region("/jobs", create=True)
    lock = region.lock("nightly")
    with lock:                  # first come, first served
        ...

Locks live in a POSIX shared-memory region that any process opens by name;
a holder that dies is detected and the next acquirer is told
(:class:`OwnerDead`).  :class:`PathLock` is the lock of a file or directory,
as a file lock is (``with bakery.PathLock("/tmp/job.lock"):``).  See
docs/python.md and ``man 3 bakery``.
"""

from ._native import version as _library_version
from .errors import (AlgorithmMismatch, BadRegion, Busy, Closed, Deadlock, Error,
                     ErrnoError, Exists, InvalidArgument, LibraryError, LockRemoved,
                     LockTableFull, NoFreeSlot, NotFound, NotRecoverable, OutOfMemory, OwnerDead,
                     PermissionDenied, Timeout, TooManyRegions, VersionMismatch)
from .pathlock import PathLock, ReadWritePathLock
from .region import Lock, Region, region_layout, unlink

__version__ = "0.1.0"

__all__ = [
    "Region", "Lock", "unlink", "region_layout", "library_version", "PathLock", "ReadWritePathLock",
    "Error", "LibraryError", "ErrnoError", "OwnerDead", "NotRecoverable", "Timeout",
    "NotFound", "Exists", "PermissionDenied", "Busy", "Deadlock", "InvalidArgument",
    "OutOfMemory", "Closed", "BadRegion", "VersionMismatch", "AlgorithmMismatch",
    "NoFreeSlot", "LockTableFull", "LockRemoved", "TooManyRegions",
]


def library_version() -> str:
    """The version of the C library in use, "MAJOR.MINOR.PATCH"."""
    return _library_version()
