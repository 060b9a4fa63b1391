# SPDX-License-Identifier: MIT
"""The C library, loaded with ctypes, and its functions' prototypes.

Which library: the path in the environment variable ``BAKERY_LIBRARY`` if it
is set, else the installed ``libbakery.so.0`` (the ABI these prototypes
describe), else whatever :func:`ctypes.util.find_library` finds.
"""

import ctypes
import ctypes.util
import os
import time
from ctypes import (POINTER, Structure, c_char, c_char_p, c_int, c_uint,
                    c_uint32, c_int32, c_uint64, c_void_p)
from typing import Optional

SONAME = "libbakery.so.0"

# bakery.h's constants (checked against the library by the tests).
ERRBASE = -40700
EBADREGION = ERRBASE - 0
EVERSION = ERRBASE - 1
EALGO = ERRBASE - 2
ESLOTS = ERRBASE - 3
ELOCKS = ERRBASE - 4
EREMOVED = ERRBASE - 5
EREGIONS = ERRBASE - 6

CREATE = 0x1
EXCL = 0x2
NORECOVER = 0x4
RDONLY = 0x8
ANY_OWNER = 0x10
UNLINK_FORCE = 0x1

LOCK_NAME_MAX = 63
REGION_NAME_MAX = 200
MAX_SLOTS = 4096
MAX_LOCKS = 4096
MAX_HOLDERS = MAX_SLOTS
MAX_THREAD_REGIONS = 1024

ALGO_DEFAULT = 0

LOCK_BIASED = 0x1           # struct bakery_lock_config's and bakery_lock_info's flags

SLOT_FREE, SLOT_ACTIVE, SLOT_RECOVERING = 0, 1, 2
LOCK_OK, LOCK_NOT_RECOVERABLE, LOCK_OWNER_DIED, LOCK_REMOVING = 0, 1, 2, 3
LOCK_STATE_NAMES = {LOCK_OK: "ok", LOCK_NOT_RECOVERABLE: "not-recoverable",
                    LOCK_OWNER_DIED: "owner-died", LOCK_REMOVING: "removing"}
PASS_NAMES = {0: "idle", 1: "doorway", 2: "waiting", 3: "critical"}

CLOCK_MONOTONIC = 1

ACQUIRE_SHARED = 0x1
ACQUIRE_TRY = 0x2
ACQUIRE_INTR = 0x4
ACQUIRE_POLL_MS = 50

# Linux, glibc: mode_t, uid_t are 32-bit unsigned, pid_t 32-bit signed.
mode_t = c_uint32
uid_t = c_uint32
pid_t = c_int32


class Config(Structure):
    """struct bakery_config"""
    _fields_ = [("slots", c_uint), ("locks", c_uint), ("mode", mode_t),
                ("reserved", c_uint * 5)]


class RegionInfo(Structure):
    """struct bakery_region_info"""
    _fields_ = [("version", c_uint), ("slots", c_uint), ("locks", c_uint),
                ("slots_used", c_uint), ("locks_used", c_uint),
                ("size", c_uint64), ("creator_pid", pid_t),
                ("creator_uid", uid_t), ("created_ns", c_uint64),
                ("mode", mode_t), ("reserved", c_uint * 8)]


class SlotInfo(Structure):
    """struct bakery_slot_info"""
    _fields_ = [("index", c_uint), ("state", c_int), ("alive", c_int),
                ("pid", pid_t), ("tid", pid_t), ("start_time", c_uint64),
                ("pass_", c_int), ("lock", c_int), ("shared", c_int),
                ("reserved", c_uint * 8)]


class LockInfo(Structure):
    """struct bakery_lock_info"""
    _fields_ = [("index", c_uint), ("name", c_char * (LOCK_NAME_MAX + 1)),
                ("algo", c_int), ("holder", c_int), ("waiters", c_uint),
                ("participants", c_uint), ("owner_dead", c_int),
                ("not_recoverable", c_int), ("acquisitions", c_uint64),
                ("recoveries", c_uint64), ("owner_deaths", c_uint64),
                ("aborts", c_uint64),
                # extension: k holders and shared mode
                ("capacity", c_uint), ("holding", c_uint), ("readers", c_uint),
                ("reader_deaths", c_uint64), ("passes", c_uint64),
                ("state", c_int),
                # extension: biased locks
                ("flags", c_uint), ("bias_slot", c_int), ("bias_revocations", c_uint),
                ("reserved", c_uint * 4)]


class LockConfig(Structure):
    """struct bakery_lock_config"""
    _fields_ = [("algo", c_int), ("holders", c_uint), ("flags", c_uint),
                ("reserved", c_uint * 5)]


class Timespec(Structure):
    """struct timespec (64-bit Linux)"""
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


# Path locks (bakery.h, "path locks").
PATH_REGION_ENV = "BAKERY_PATH_REGION"
PATH_REGION_PREFIX = "/bakery-paths-"
PATH_LOCK_PREFIX = "path:"
PATH_STAMPS = {0: "none", 1: "birth", 2: "generation"}


class PathInfo(Structure):
    """struct bakery_path_info"""
    _fields_ = [("region", c_char * (REGION_NAME_MAX + 2)),
                ("lock", c_char * (LOCK_NAME_MAX + 1)),
                ("dev", c_uint64), ("ino", c_uint64), ("stamp", c_int),
                ("stamp_value", c_uint64)]


def monotonic_deadline(timeout: float) -> Timespec:
    """TIMEOUT seconds from now on CLOCK_MONOTONIC."""
    ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + int(timeout * 1e9)
    return Timespec(ns // 1000000000, ns % 1000000000)


# int (*interrupted)(void *arg)
INTERRUPTED = ctypes.CFUNCTYPE(c_int, c_void_p)


class AcquireOpts(Structure):
    """struct bakery_acquire_opts (clockid_t is an int)"""
    _fields_ = [("flags", c_uint), ("clock", c_int), ("deadline", POINTER(Timespec)),
                ("cancel", POINTER(c_uint32)), ("interrupted", INTERRUPTED),
                ("arg", c_void_p), ("reserved", c_void_p * 4)]


_PROTOTYPES = {
    "bakery_open": (c_int, [c_char_p, c_uint, POINTER(Config), POINTER(c_void_p)]),
    "bakery_close": (c_int, [c_void_p]),
    "bakery_unlink": (c_int, [c_char_p]),
    "bakery_lock_open": (c_int, [c_void_p, c_char_p, c_int, POINTER(c_void_p)]),
    "bakery_lock_open_config": (c_int, [c_void_p, c_char_p, POINTER(LockConfig),
                                        POINTER(c_void_p)]),
    "bakery_lock_lookup": (c_int, [c_void_p, c_char_p, c_int, POINTER(c_void_p)]),
    "bakery_lock_holders": (c_int, [c_void_p, POINTER(c_uint)]),
    "bakery_lock_close": (c_int, [c_void_p]),
    "bakery_lock": (c_int, [c_void_p]),
    "bakery_trylock": (c_int, [c_void_p]),
    "bakery_clocklock": (c_int, [c_void_p, c_int, POINTER(Timespec)]),
    "bakery_rdlock": (c_int, [c_void_p]),
    "bakery_tryrdlock": (c_int, [c_void_p]),
    "bakery_clockrdlock": (c_int, [c_void_p, c_int, POINTER(Timespec)]),
    "bakery_acquire": (c_int, [c_void_p, POINTER(AcquireOpts)]),
    "bakery_cancel": (c_int, [POINTER(c_uint32)]),
    "bakery_unlock": (c_int, [c_void_p]),
    "bakery_consistent": (c_int, [c_void_p]),
    "bakery_recover": (c_int, [c_void_p, POINTER(c_uint)]),
    "bakery_lock_unlink": (c_int, [c_void_p, c_char_p]),
    "bakery_lock_unlink_flags": (c_int, [c_void_p, c_char_p, c_uint]),
    "bakery_strerror": (c_char_p, [c_int]),
    "bakery_algo_name": (c_char_p, [c_int]),
    "bakery_algo_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "bakery_region_info": (c_int, [c_void_p, POINTER(RegionInfo)]),
    "bakery_region_layout": (c_int, [c_char_p, POINTER(c_uint)]),
    "bakery_slot_info": (c_int, [c_void_p, c_uint, POINTER(SlotInfo)]),
    "bakery_lock_info": (c_int, [c_void_p, c_uint, POINTER(LockInfo)]),
    "bakery_lock_index": (c_int, [c_void_p, POINTER(c_uint)]),
    "bakery_lock_queue": (c_int, [c_void_p, c_uint, POINTER(c_uint), c_uint, POINTER(c_uint)]),
    "bakery_version": (c_char_p, []),
    # path locks
    "bakery_path_open": (c_int, [c_char_p, c_uint, POINTER(c_void_p)]),
    "bakery_path_close": (c_int, [c_void_p]),
    "bakery_path_info": (c_int, [c_void_p, POINTER(PathInfo)]),
    "bakery_path_lock": (c_int, [c_void_p]),
    "bakery_path_trylock": (c_int, [c_void_p]),
    "bakery_path_clocklock": (c_int, [c_void_p, c_int, POINTER(Timespec)]),
    "bakery_path_rdlock": (c_int, [c_void_p]),
    "bakery_path_tryrdlock": (c_int, [c_void_p]),
    "bakery_path_clockrdlock": (c_int, [c_void_p, c_int, POINTER(Timespec)]),
    "bakery_path_acquire": (c_int, [c_void_p, POINTER(AcquireOpts)]),
    "bakery_path_unlock": (c_int, [c_void_p]),
    "bakery_path_consistent": (c_int, [c_void_p]),
}


def _candidates() -> list:
    path = os.environ.get("BAKERY_LIBRARY")
    if path:
        return [path]
    found: Optional[str] = ctypes.util.find_library("bakery")
    return [SONAME] + ([found] if found and found != SONAME else [])


def _load() -> ctypes.CDLL:
    errors = []
    for name in _candidates():
        try:
            # CDLL (not PyDLL): the GIL is released during every call, so a
            # thread blocked in bakery_lock does not stop the others
            lib = ctypes.CDLL(name)
        except OSError as e:
            errors.append(str(e))
            continue
        for fn, (restype, argtypes) in _PROTOTYPES.items():
            f = getattr(lib, fn)
            f.restype = restype
            f.argtypes = argtypes
        return lib
    raise ImportError("bakery: cannot load the libbakery C library (set BAKERY_LIBRARY "
                      "to its path, or install libbakery0): " + "; ".join(errors))


lib = _load()


def strerror(code: int) -> str:
    """bakery_strerror's text for CODE."""
    text = lib.bakery_strerror(code)
    return text.decode("utf-8", "replace") if text else "unknown error"


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return lib.bakery_version().decode("ascii")
