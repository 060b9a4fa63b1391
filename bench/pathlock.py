# SPDX-License-Identifier: MIT
"""bench/pathlock.py - what a lock per file costs from Python, uncontended:
bakery.PathLock against what the common file-lock packages do with
fcntl.flock, in one run.  Every figure is the best of many rounds of ROUND
holds each, the variants taking turns, so that a busy machine costs them
all alike.

  pathlock-object     `with lock:`, one PathLock object kept
  pathlock-per-hold   `with bakery.PathLock(path):`, a new object each time
  region-lock         `with lock:` on an ordinary lock of a region (Lock)
  flock-per-hold      open(O_RDWR | O_CREAT | O_TRUNC) + flock(LOCK_EX) +
                      flock(LOCK_UN) + close: a file-lock package's hold
  flock-held          flock(LOCK_EX) + flock(LOCK_UN) on a descriptor kept
  stat                os.stat of the file, for reference
  region-per-file     what a lock per file cost before path locks, as
                      `bakery run --file` named it then: the region
                      /bakery-file-DEV-INODE opened, its lock taken and
                      released, the region closed (fewer rounds: it is slow)
  pathlock-distinct   `with bakery.PathLock(path):` on DISTINCT files, each
                      new to the lock table (which fills and is reclaimed)
  flock-distinct      open + flock + flock + close of the same files

Run with the library and package of a build (`make bench-path` does):
BAKERY_LIBRARY=_build/lib/.libs/libbakery.so PYTHONPATH=python python3 bench/pathlock.py
"""

import fcntl
import os
import shutil
import sys
import tempfile
import time

ROUND = 200
ROUNDS = 300
DISTINCT = 10000


def main():
    workdir = tempfile.mkdtemp(prefix="bakery-pathlock-bench-")
    region = "/bakery-pathlock-bench-%d" % os.getpid()
    os.environ["BAKERY_PATH_REGION"] = region      # before the first path lock
    import bakery
    try:
        run(bakery, workdir)
    finally:
        shutil.rmtree(workdir, True)
        for name in (region, region + "-plain"):
            try:
                bakery.unlink(name)
            except bakery.NotFound:
                pass


def run(bakery, workdir):
    path = os.path.join(workdir, "lock")
    open(path, "w").close()
    lock = bakery.PathLock(path)
    region = bakery.Region(os.environ["BAKERY_PATH_REGION"] + "-plain", create=True)
    plain = region.lock("plain")
    fd = os.open(path, os.O_RDWR)

    def pathlock_object():
        with lock:
            pass

    def pathlock_per_hold():
        with bakery.PathLock(path):
            pass

    def region_lock():
        with plain:
            pass

    def flock_per_hold():
        f = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)
        os.close(f)

    def flock_held():
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(fd, fcntl.LOCK_UN)

    def stat():
        os.stat(path)

    variants = [("pathlock-object", pathlock_object), ("pathlock-per-hold", pathlock_per_hold),
                ("region-lock", region_lock), ("flock-per-hold", flock_per_hold),
                ("flock-held", flock_held), ("stat", stat)]
    best = {name: float("inf") for name, _ in variants}
    for _ in range(ROUNDS):
        for name, hold in variants:
            start = time.perf_counter_ns()
            for _ in range(ROUND):
                hold()
            best[name] = min(best[name], (time.perf_counter_ns() - start) / ROUND)
    print("Python %s, library %s" % (sys.version.split()[0], bakery.library_version()))
    print("%-18s %10s" % ("variant", "us/hold"))
    for name, _ in variants:
        print("%-18s %10.2f" % (name, best[name] / 1000))
    print("%-18s %10.2f" % ("region-per-file", region_per_file(bakery, path) / 1000))
    path_us, flock_us = distinct_files(bakery, workdir)
    print("%-18s %10.2f   (%d distinct files, each new to the lock table)" % (
        "pathlock-distinct", path_us, DISTINCT))
    print("%-18s %10.2f   (the same files)" % ("flock-distinct", flock_us))
    os.close(fd)
    region.close()


def region_per_file(bakery, path):
    st = os.stat(path)
    name = "/bakery-file-%x-%x-bench-%d" % (st.st_dev, st.st_ino, os.getpid())
    best = float("inf")
    try:
        for _ in range(30):
            start = time.perf_counter_ns()
            for _ in range(20):
                with bakery.Region(name, create=True, slots=256) as region:
                    with region.lock("file"):
                        pass
            best = min(best, (time.perf_counter_ns() - start) / 20)
    finally:
        bakery.unlink(name)
    return best


def distinct_files(bakery, workdir):
    """DISTINCT files created (not timed), then each locked once with a
    PathLock (each new to the lock table), then each with flock."""
    names = [os.path.join(workdir, "d%d" % i) for i in range(DISTINCT)]
    for name in names:
        open(name, "w").close()
    start = time.perf_counter_ns()
    for name in names:
        with bakery.PathLock(name):
            pass
    middle = time.perf_counter_ns()
    for name in names:
        f = os.open(name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)
        os.close(f)
    end = time.perf_counter_ns()
    for name in names:
        os.unlink(name)
    return (middle - start) / DISTINCT / 1000, (end - middle) / DISTINCT / 1000


if __name__ == "__main__":
    main()
