# SPDX-License-Identifier: MIT
"""Region.status(): the data of ``bakery status --json``, as Python objects.

Read through the C library's introspection calls, like the tool.  A snapshot:
participants keep running while it is taken.
"""

import ctypes
import errno
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _native
from ._native import lib
from .errors import make_error

Status = Dict[str, Any]
_CRITICAL = 3               # BAKERY_PASS_CRITICAL


def algo_word(algo: int) -> str:
    """The name of ALGO as the tool shows it ("unknown" for none)."""
    name = lib.bakery_algo_name(algo)
    return name.decode("ascii") if name and algo != _native.ALGO_DEFAULT else "unknown"


def _mode(si: _native.SlotInfo) -> Optional[str]:
    """The mode of the passage SI is in; None when idle."""
    if si.pass_ == 0:
        return None
    return "shared" if si.shared else "exclusive"


def _holds(si: _native.SlotInfo, li: _native.LockInfo) -> bool:
    return si.pass_ == _CRITICAL and si.lock == li.index


def _owner_died(li: _native.LockInfo) -> bool:
    # the flag a recoverer set, or a holder's death proven before anyone
    # recovered it: the library's state says so (as the tool)
    return bool(li.owner_dead) or li.state == _native.LOCK_OWNER_DIED


def _proc_stat(path: str) -> Tuple[str, int]:
    """Fields 3 (state) and 22 (start time) of a /proc stat file; ("", 0) if
    it cannot be read."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        # the command name (field 2) may hold spaces and ')': skip past the last
        fields = raw[raw.rindex(b")") + 1:].split()
        return fields[0].decode("ascii"), int(fields[19])
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return "", 0


def _proc_start_time(pid: int) -> int:
    return _proc_stat("/proc/%d/stat" % pid)[1]


def _owner_stopped(si: _native.SlotInfo) -> bool:
    """Is the live owner thread stopped (SIGSTOP, a tracer)?  A process of
    that pid with another start time says nothing, as in the tool."""
    if si.alive <= 0 or si.pid <= 0 or si.tid <= 0:
        return False
    if _proc_start_time(si.pid) != si.start_time:
        return False
    state, _ = _proc_stat("/proc/%d/task/%d/stat" % (si.pid, si.tid))
    return state in ("T", "t")


def _command_name(si: _native.SlotInfo) -> str:
    """The holder's command name, or "?" when the pid is not (or no longer)
    the slot owner's process."""
    if si.pid <= 0 or _proc_start_time(si.pid) != si.start_time:
        return "?"
    try:
        with open("/proc/%d/comm" % si.pid, "rb") as f:
            return f.read().decode("utf-8", "replace").split("\n")[0]
    except OSError:
        return "?"


def _name(raw: bytes) -> str:
    # shared memory may hold anything: bytes outside printable ASCII are
    # kept, one character each (the tool's JSON escapes them as \u00XX)
    return raw.decode("latin-1")


def _holder_slot(li: _native.LockInfo,
                 slots: List[_native.SlotInfo]) -> Optional[_native.SlotInfo]:
    return next((si for si in slots if si.index == li.holder), None)


def _slot_in_use(pointer: int, index: int) -> Optional[_native.SlotInfo]:
    si = _native.SlotInfo()
    if lib.bakery_slot_info(pointer, index, ctypes.byref(si)):
        return None
    return si if si.state != _native.SLOT_FREE else None


def _queue(pointer: int, li: _native.LockInfo, capacity: int) -> List[Dict[str, Any]]:
    """The lock's waiters, first to enter first, as the tool's "queue"."""
    slots = (ctypes.c_uint * max(capacity, 1))()
    n = ctypes.c_uint()
    if lib.bakery_lock_queue(pointer, li.index, slots, capacity, ctypes.byref(n)):
        return []
    out = []
    for slot in slots[:min(n.value, capacity)]:
        si = _slot_in_use(pointer, slot)
        out.append({"slot": slot, "pid": si.pid if si is not None else None,
                    "command": _command_name(si) if si is not None else None})
    return out


def _lock_dict(li: _native.LockInfo, slots: List[_native.SlotInfo],
               queue: List[Dict[str, Any]]) -> Dict[str, Any]:
    holder = _holder_slot(li, slots)
    return {
        "index": li.index, "name": _name(li.name), "algorithm": algo_word(li.algo),
        "holder": li.holder if li.holder >= 0 else None,
        "holder_pid": holder.pid if holder is not None else None,
        "holder_command": _command_name(holder) if holder is not None else None,
        "waiters": li.waiters, "queue": queue, "participants": li.participants,
        "acquisitions": li.acquisitions, "recoveries": li.recoveries,
        "owner_deaths": li.owner_deaths, "aborts": li.aborts, "passes": li.passes,
        "owner_dead": _owner_died(li),
        "not_recoverable": bool(li.not_recoverable),
        "state": _native.LOCK_STATE_NAMES.get(li.state, "unknown"),
        "capacity": li.capacity, "holding": li.holding, "readers": li.readers,
        "reader_deaths": li.reader_deaths,
        "holders": [{"slot": si.index, "pid": si.pid, "mode": _mode(si)}
                    for si in slots if _holds(si, li)],
        "biased": bool(li.flags & _native.LOCK_BIASED),
        "bias_slot": li.bias_slot if li.bias_slot >= 0 else None,
        "bias_revocations": li.bias_revocations,
    }


def _slot_dict(si: _native.SlotInfo, locks: List[Dict[str, Any]]) -> Dict[str, Any]:
    lock: Optional[str] = next((l["name"] for l in locks if l["index"] == si.lock), None)
    return {
        "index": si.index,
        "state": "recovering" if si.state == _native.SLOT_RECOVERING else "active",
        "alive": True if si.alive > 0 else False if si.alive == 0 else None,
        "stopped": _owner_stopped(si),
        "pid": si.pid, "tid": si.tid, "start_time": si.start_time,
        "pass": _native.PASS_NAMES.get(si.pass_, "unknown"),
        "lock": lock, "lock_index": si.lock, "mode": _mode(si),
    }


def _slots_in_use(pointer: int, capacity: int, what: str) -> List[_native.SlotInfo]:
    out = []
    for i in range(capacity):
        si = _native.SlotInfo()
        err = lib.bakery_slot_info(pointer, i, ctypes.byref(si))
        if err:
            raise make_error(err, what)
        if si.state != _native.SLOT_FREE:
            out.append(si)
    return out


def holder_in_process(pointer: int, pid: int) -> Optional[_native.SlotInfo]:
    """The slot of a live thread of process PID that holds a lock of the
    region (its lock field is one it holds), or None (also if the region
    cannot be read: it was cut short, say)."""
    return _live_slot_of(pointer, pid, lambda si: si.pass_ == _CRITICAL)


def _live_slot_of(pointer: int, pid: int,
                  wanted: Callable[[_native.SlotInfo], bool]) -> Optional[_native.SlotInfo]:
    """The first slot of a live thread of process PID that WANTED accepts,
    or None (also if the region cannot be read)."""
    r = _native.RegionInfo()
    if lib.bakery_region_info(pointer, ctypes.byref(r)):
        return None
    for i in range(r.slots):
        si = _native.SlotInfo()
        if lib.bakery_slot_info(pointer, i, ctypes.byref(si)):
            return None
        if si.state == _native.SLOT_ACTIVE and si.alive == 1 and si.pid == pid and wanted(si):
            return si
    return None


def lock_holder_in_process(pointer: int, index: int, pid: int) -> Optional[_native.SlotInfo]:
    """The slot of a live thread of process PID that holds the lock INDEX
    of the region (as a writer or a reader), or None (also if the region
    cannot be read, or the entry holds no lock).

    A slot's info names one lock, the lowest-numbered of those it is
    furthest in, and the lock's info names its first holder: a thread is
    seen if it is the lock's first holder, or holds no lower-numbered lock
    of the region besides.  Missed: a thread that holds this lock beside
    lower-numbered ones while another holder of it (a reader, or one of k
    holders) comes first."""
    li = _native.LockInfo()
    if lib.bakery_lock_info(pointer, index, ctypes.byref(li)) or li.holding == 0:
        return None
    return _live_slot_of(pointer, pid, lambda si: si.index == li.holder or
                         (si.pass_ == _CRITICAL and si.lock == index))


def find_lock(pointer: int, name: bytes) -> Optional[_native.LockInfo]:
    """The table entry of the lock NAME, or None (also if the region cannot
    be read)."""
    r = _native.RegionInfo()
    if lib.bakery_region_info(pointer, ctypes.byref(r)):
        return None
    for i in range(r.locks):
        li = _native.LockInfo()
        if lib.bakery_lock_info(pointer, i, ctypes.byref(li)) == 0 and li.name == name:
            return li
    return None


def lock_info(pointer: int, index: int, what: str) -> Dict[str, Any]:
    """One lock's entry, as in the "locks" list."""
    r = _native.RegionInfo()
    li = _native.LockInfo()
    err = lib.bakery_lock_info(pointer, index, ctypes.byref(li))
    if not err:
        err = lib.bakery_region_info(pointer, ctypes.byref(r))
    if err:
        raise make_error(err, what)
    return _lock_dict(li, _slots_in_use(pointer, r.slots, what), _queue(pointer, li, r.slots))


def snapshot(pointer: int, region: str) -> Status:
    """The region's status: the same keys and values as `bakery status --json`."""
    r = _native.RegionInfo()
    err = lib.bakery_region_info(pointer, ctypes.byref(r))
    if err:
        raise make_error(err, region)
    # the tool reads the locks, then the slots: the same order here
    lock_infos = []
    for i in range(r.locks):
        li = _native.LockInfo()
        err = lib.bakery_lock_info(pointer, i, ctypes.byref(li))
        if err == errno.ENOENT:
            continue
        if err:
            raise make_error(err, region)
        lock_infos.append(li)
    slot_infos = _slots_in_use(pointer, r.slots, region)
    locks = [_lock_dict(li, slot_infos, _queue(pointer, li, r.slots)) for li in lock_infos]
    slots = [_slot_dict(si, locks) for si in slot_infos]
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.created_ns // 1000000000))
    return {
        "region": region, "version": r.version,
        # as `bakery list --json` says it (a region this library reads)
        "layout_version": r.version, "compatible": True,
        "size": r.size, "mode": "%04o" % r.mode,
        "creator_pid": r.creator_pid, "creator_uid": r.creator_uid,
        "created_ns": r.created_ns, "created": created,
        "slots_capacity": r.slots, "slots_used": r.slots_used,
        "locks_capacity": r.locks, "locks_used": r.locks_used,
        "slots": slots, "locks": locks,
    }
