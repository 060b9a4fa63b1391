#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""workers.py - multiprocessing workers share a counter under one bakery lock
while one of them is SIGKILLed in the middle of an update; the survivors
repair the state, carry on, and prove that nothing was lost.

The shared state is a JSON file: the total and each worker's own count.  An
update writes the new state to a side file, then renames it over the old one
(the commit).  The victim is killed after writing the side file but before
the commit, holding the lock.  The next worker to take the lock is told
(bakery.OwnerDead), throws the half-done update away and marks the lock
consistent.  At the end: total == the sum of the counts, every survivor's
count is exactly what it did, and the lock saw exactly one owner death.

Usage: workers.py [WORKERS [ROUNDS]]   (exit status 0 when nothing was lost)
"""

import json
import multiprocessing
import os
import signal
import sys
import tempfile

import bakery


def read_state(path):
    with open(path) as f:
        return json.load(f)


def update(path, worker, half_done=None):
    """One increment, inside the lock.  HALF_DONE (the victim's): set it after
    writing the side file, and wait there to be killed."""
    state = read_state(path)
    state["total"] += 1
    state["by"][worker] = state["by"].get(worker, 0) + 1
    with open(path + ".next", "w") as f:
        json.dump(state, f)
    if half_done is not None:
        half_done.set()
        signal.pause()                  # SIGKILLed here, holding the lock
    os.replace(path + ".next", path)    # the commit


def repair(path):
    """After an owner death: drop the dead worker's uncommitted update."""
    try:
        os.unlink(path + ".next")
    except FileNotFoundError:
        pass


def locked_update(lock, path, name, repairs, half_done=None):
    try:
        with lock:
            update(path, name, half_done)
    except bakery.OwnerDead as e:
        repair(path)
        e.lock.consistent()             # repaired; this also releases it
        repairs.put(name)
        with lock:                      # and now this round's own update
            update(path, name, half_done)


def victim(lock, path, rounds, repairs, half_done):
    for _ in range(rounds // 2):
        locked_update(lock, path, "victim", repairs)
    locked_update(lock, path, "victim", repairs, half_done)   # never returns


def survivor(lock, path, name, rounds, repairs, killed):
    # half the rounds before the kill and half after, so that a survivor
    # is the next holder after the death however the processes are scheduled
    for i in range(rounds):
        if i == rounds // 2:
            killed.wait()
        locked_update(lock, path, name, repairs)


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    region_name = "/bakery-workers-%d" % os.getpid()
    workdir = tempfile.mkdtemp(prefix="bakery-workers-")
    path = os.path.join(workdir, "state.json")
    with open(path, "w") as f:
        json.dump({"total": 0, "by": {}}, f)

    region = bakery.Region(region_name, create=True)
    lock = region.lock("counter")
    repairs = multiprocessing.Queue()
    half_done, killed = multiprocessing.Event(), multiprocessing.Event()
    doomed = multiprocessing.Process(target=victim,
                                     args=(lock, path, rounds, repairs, half_done))
    survivors = {"w%d" % i: multiprocessing.Process(
                     target=survivor, args=(lock, path, "w%d" % i, rounds, repairs, killed))
                 for i in range(workers - 1)}
    doomed.start()
    for p in survivors.values():
        p.start()
    half_done.wait()
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.join()
    killed.set()
    for p in survivors.values():
        p.join()

    state = read_state(path)
    info = lock.info()
    repaired_by = []
    while not repairs.empty():          # the workers have exited: all is in the pipe
        repaired_by.append(repairs.get())
    print("total %d; by worker %s" % (state["total"], json.dumps(state["by"], sort_keys=True)))
    print("victim killed holding the lock with exit %d; repaired by %s"
          % (doomed.exitcode, ", ".join(repaired_by)))
    checks = {
        "the total is the sum of the counts": state["total"] == sum(state["by"].values()),
        "every survivor's work is counted":
            all(state["by"].get(n) == rounds and p.exitcode == 0 for n, p in survivors.items()),
        "the victim's work up to its death is counted": state["by"].get("victim") == rounds // 2,
        "the victim was killed": doomed.exitcode == -signal.SIGKILL,
        "one owner death, one repair": info["owner_deaths"] == 1 and len(repaired_by) == 1,
        "the half-done update was thrown away": not os.path.exists(path + ".next"),
        "the lock is usable": info["state"] == "ok" and lock.acquire(timeout=60),
    }
    lock.release()
    region.close()
    bakery.unlink(region_name)
    os.unlink(path)
    os.rmdir(workdir)
    for what, ok in checks.items():
        print("%s: %s" % ("ok" if ok else "FAILED", what))
    print("nothing lost" if all(checks.values()) else "SOMETHING WAS LOST")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
