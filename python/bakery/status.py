"""Region.status(): the data of ``bakery status --json``, as Python objects.

Read through the C library's introspection calls, like the tool.  A snapshot:
participants keep running while it is taken.
"""

import ctypes
import errno
import time
from typing import Any, Dict, List, Optional

from . import _native
from ._native import lib
from .errors import make_error

Status = Dict[str, Any]


def _algo_word(algo: int) -> str:
    name = lib.bakery_algo_name(algo)
    return name.decode("ascii") if name and algo != _native.ALGO_DEFAULT else "unknown"


def _lock_state(li: _native.LockInfo) -> str:
    if li.not_recoverable:
        return "not-recoverable"
    return "owner-died" if li.owner_dead else "ok"


def _name(raw: bytes) -> str:
    # shared memory may hold anything: bytes outside printable ASCII are
    # kept, one character each (the tool's JSON escapes them as \u00XX)
    return raw.decode("latin-1")


def _lock_dict(li: _native.LockInfo) -> Dict[str, Any]:
    return {
        "index": li.index, "name": _name(li.name), "algorithm": _algo_word(li.algo),
        "holder": li.holder if li.holder >= 0 else None,
        "waiters": li.waiters, "participants": li.participants,
        "acquisitions": li.acquisitions, "recoveries": li.recoveries,
        "owner_deaths": li.owner_deaths, "aborts": li.aborts,
        "owner_dead": bool(li.owner_dead), "not_recoverable": bool(li.not_recoverable),
        "state": _lock_state(li),
    }


def _slot_dict(si: _native.SlotInfo, locks: List[Dict[str, Any]]) -> Dict[str, Any]:
    lock: Optional[str] = next((l["name"] for l in locks if l["index"] == si.lock), None)
    return {
        "index": si.index,
        "state": "recovering" if si.state == _native.SLOT_RECOVERING else "active",
        "alive": True if si.alive > 0 else False if si.alive == 0 else None,
        "pid": si.pid, "tid": si.tid, "start_time": si.start_time,
        "pass": _native.PASS_NAMES.get(si.pass_, "unknown"),
        "lock": lock, "lock_index": si.lock,
    }


def lock_info(pointer: int, index: int, what: str) -> Dict[str, Any]:
    """One lock's entry, as in the "locks" list."""
    li = _native.LockInfo()
    err = lib.bakery_lock_info(pointer, index, ctypes.byref(li))
    if err:
        raise make_error(err, what)
    return _lock_dict(li)


def _locks(pointer: int, capacity: int, what: str) -> List[Dict[str, Any]]:
    out = []
    for i in range(capacity):
        li = _native.LockInfo()
        err = lib.bakery_lock_info(pointer, i, ctypes.byref(li))
        if err == errno.ENOENT:
            continue
        if err:
            raise make_error(err, what)
        out.append(_lock_dict(li))
    return out


def _slots(pointer: int, capacity: int, locks: List[Dict[str, Any]],
           what: str) -> List[Dict[str, Any]]:
    out = []
    for i in range(capacity):
        si = _native.SlotInfo()
        err = lib.bakery_slot_info(pointer, i, ctypes.byref(si))
        if err:
            raise make_error(err, what)
        if si.state != _native.SLOT_FREE:
            out.append(_slot_dict(si, locks))
    return out


def snapshot(pointer: int, region: str) -> Status:
    """The region's status: the same keys and values as `bakery status --json`."""
    r = _native.RegionInfo()
    err = lib.bakery_region_info(pointer, ctypes.byref(r))
    if err:
        raise make_error(err, region)
    locks = _locks(pointer, r.locks, region)
    slots = _slots(pointer, r.slots, locks, region)
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.created_ns // 1000000000))
    return {
        "region": region, "version": r.version, "size": r.size, "mode": "%04o" % r.mode,
        "creator_pid": r.creator_pid, "creator_uid": r.creator_uid,
        "created_ns": r.created_ns, "created": created,
        "slots_capacity": r.slots, "slots_used": r.slots_used,
        "locks_capacity": r.locks, "locks_used": r.locks_used,
        "slots": slots, "locks": locks,
    }
