# SPDX-License-Identifier: MIT
"""Shared helpers of the bakery package's tests: unique region names that
are removed afterwards, the build's tool, children with time limits, and
what those children do with a lock."""

import itertools
import multiprocessing
import os
import tempfile
import time
import unittest
from typing import Any, Callable, Optional

import bakery

_counter = itertools.count()
CHILD_TIMEOUT = 120.0       # seconds: generous, only a hung test waits so long


def region_name() -> str:
    """A name no other test (nor a parallel run) uses."""
    return "/bakery-py-test-%d-%d" % (os.getpid(), next(_counter))


def tool() -> Optional[str]:
    """The just-built `bakery` tool, if the build directory is known."""
    build = os.environ.get("top_builddir")
    path = os.path.join(build, "tools", "bakery") if build else None
    return path if path and os.access(path, os.X_OK) else None


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = CHILD_TIMEOUT) -> Any:
    """Poll PREDICATE until it is true; fail the test after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.01)


def join(proc: multiprocessing.process.BaseProcess) -> Optional[int]:
    """Wait for a child at most CHILD_TIMEOUT seconds (SIGKILL after); its exit code."""
    proc.join(CHILD_TIMEOUT)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise AssertionError("child %d did not finish in time" % proc.pid)
    return proc.exitcode


# --- what a forked child does with a lock -----------------------------------

FORK = multiprocessing.get_context("fork")


def take_in_turn(lock: "bakery.Lock", log: str) -> None:
    """Append this process's pid to LOG while holding LOCK."""
    with lock:
        with open(log, "a") as f:
            f.write("%d\n" % os.getpid())


def hold_until(lock: "bakery.Lock", held: Any, release: Any) -> None:
    with lock:
        held.set()
        release.wait()


def hold_forever(lock: "bakery.Lock", held: Any) -> None:
    """Hold LOCK until killed (waiting for no multiprocessing Event: one
    whose waiter is killed stays stuck)."""
    lock.acquire()
    held.set()
    while True:
        time.sleep(60)


def try_once(lock: "bakery.Lock", result: Any) -> None:
    result.value = 1 if lock.acquire(blocking=False) else 0
    if result.value:
        lock.release()


class RegionTest(unittest.TestCase):
    """A test with a fresh region, self.region, unlinked at the end."""

    def setUp(self) -> None:
        self.name = region_name()
        self.region = bakery.Region(self.name, create=True, exclusive=True)
        self.addCleanup(self._remove)

    def _remove(self) -> None:
        try:
            self.region.close()
        except bakery.Error:
            pass
        try:
            bakery.unlink(self.name)
        except bakery.NotFound:
            pass

    def assert_free_for_a_third_party(self, lock: "bakery.Lock") -> None:
        """Another process's try takes LOCK at once: nobody holds it, and
        nobody is in line ahead."""
        result = FORK.Value("i", -1)
        proc = FORK.Process(target=try_once, args=(lock, result))
        proc.start()
        self.assertEqual(join(proc), 0)
        self.assertEqual(result.value, 1, "the lock was not free for a third party")

    def slot_of(self, pid: int) -> Optional[dict]:
        """The status entry of PID's slot, if it has one."""
        for slot in self.region.status()["slots"]:
            if slot["pid"] == pid:
                return slot
        return None


class LockTest(RegionTest):
    """A RegionTest with a lock of it, self.lock, and a file, self.log,
    where children write their pids as they get the lock (take_in_turn)."""

    def setUp(self) -> None:
        super().setUp()
        self.lock = self.region.lock("l")
        fd, self.log = tempfile.mkstemp(prefix="bakery-py-test-log-")
        os.close(fd)
        self.addCleanup(os.unlink, self.log)

    def in_line(self, pid: int) -> int:
        """How many of PID's slots wait for the lock."""
        return [q["pid"] for q in self.lock.info()["queue"]].count(pid)

    def log_order(self) -> list:
        with open(self.log) as f:
            return [int(line) for line in f]
