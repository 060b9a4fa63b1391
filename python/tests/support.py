# SPDX-License-Identifier: MIT
"""Shared helpers of the bakery package's tests: unique region names that
are removed afterwards, the build's tool, children with time limits."""

import itertools
import multiprocessing
import os
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

    def slot_of(self, pid: int) -> Optional[dict]:
        """The status entry of PID's slot, if it has one."""
        for slot in self.region.status()["slots"]:
            if slot["pid"] == pid:
                return slot
        return None
