# SPDX-License-Identifier: MIT
"""Regions of other users: a region whose object belongs to another user
(not the caller, not root) is refused, with an error that names its owner
and the way to share it on purpose (any_owner=True), and joined with
any_owner=True, also by a pickled Region or Lock; removing a lock needs
the region's owner; the region of path locks is checked the same way.

Needs root, to make another user's region (a child that becomes user
nobody creates it, as tests/hostile/test_squat.c does); skipped
otherwise."""

import errno
import os
import pickle
import subprocess
import sys
import unittest
from typing import Any, Callable

import bakery

from support import FORK, join, region_name

NOBODY = 65534              # named "nobody" or not: the messages say "uid 65534"
SKIP = 77                   # a child that could not become nobody


def _as_nobody(fn: Callable[..., None], *args: Any) -> None:
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    except OSError:
        os._exit(SKIP)
    fn(*args)


def _create(name: str, mode: int) -> None:
    with bakery.Region(name, create=True, exclusive=True, mode=mode) as region:
        region.lock("probe").close()


def _remove_lock(name: str, out: Any) -> None:
    """Remove NAME's lock "probe"; put the error's text (or "removed") on OUT."""
    try:
        with bakery.Region(name) as region:
            region.unlink_lock("probe")
        out.put("removed")
    except bakery.PermissionDenied as e:
        out.put(str(e))


class UsersTest(unittest.TestCase):

    def setUp(self) -> None:
        if os.geteuid() != 0:
            self.skipTest("needs root, to run a child as another user")
        self.name = region_name()
        self.addCleanup(self._unlink, self.name)

    @staticmethod
    def _unlink(name: str) -> None:
        try:
            bakery.unlink(name)
        except bakery.NotFound:
            pass

    def as_nobody(self, fn: Callable[..., None], *args: Any) -> None:
        """FN(*ARGS) in a child run as user nobody; it must succeed."""
        proc = FORK.Process(target=_as_nobody, args=(fn,) + args)
        proc.start()
        code = join(proc)
        if code == SKIP:
            self.skipTest("cannot become user nobody (uid %d) here" % NOBODY)
        self.assertEqual(code, 0, "the child as nobody failed")

    def nobodys_region(self, name: str, mode: int) -> None:
        self.as_nobody(_create, name, mode)
        self.assertEqual(os.stat("/dev/shm" + name).st_uid, NOBODY)


class TestOtherUsersRegions(UsersTest):

    def test_refused_with_its_owner_named(self):
        # the owner decides, not the mode: root could open a 0600 object
        for mode in (0o666, 0o600):
            name = "%s-%o" % (self.name, mode)
            self.addCleanup(self._unlink, name)
            self.nobodys_region(name, mode)
            for kwargs in ({}, {"create": True}, {"recover": False}):
                with self.subTest(mode=oct(mode), **kwargs):
                    with self.assertRaises(bakery.PermissionDenied) as cm:
                        bakery.Region(name, **kwargs)
                    e = cm.exception
                    self.assertEqual(e.code, errno.EPERM)
                    self.assertEqual(e.what, name)
                    self.assertIn("the region belongs to ", e.message)
                    self.assertIn("uid %d" % NOBODY, e.message)
                    self.assertIn("any_owner=True", e.message)
                    self.assertNotIn("does not hold", e.message)
                    back = pickle.loads(pickle.dumps(e))
                    self.assertEqual(str(back), str(e))

    def test_any_owner_joins_it(self):
        self.nobodys_region(self.name, 0o666)
        with bakery.Region(self.name, any_owner=True) as region:
            lock = region.lock("probe")
            with lock:
                self.assertTrue(lock.locked())
            # pickled (as to a multiprocessing worker): joined as it was
            copy = pickle.loads(pickle.dumps(lock))
            with copy:
                self.assertTrue(lock.locked())
            copy.region.close()
            pickle.loads(pickle.dumps(region)).close()
        bakery.Region(self.name, create=True, any_owner=True).close()
        # a region of one's own, or root's, is joined with it as without
        with bakery.Region(self.name + "-own", create=True, exclusive=True,
                           any_owner=True) as own:
            self.addCleanup(self._unlink, self.name + "-own")
            with own.lock("l"):
                pass

    def test_removing_a_lock_needs_the_regions_owner(self):
        with bakery.Region(self.name, create=True, exclusive=True, mode=0o666) as region:
            region.lock("probe").close()
        out = FORK.SimpleQueue()
        self.as_nobody(_remove_lock, self.name, out)   # root's region: nobody joins it
        message = out.get()
        self.assertIn("the region belongs to ", message)
        self.assertIn("uid 0)", message)
        self.assertIn("only its owner (or root) may remove its locks", message)
        self.assertNotIn("does not hold", message)

    def test_path_region_of_another_user_refused(self):
        paths = self.name + "-paths"
        self.addCleanup(self._unlink, paths)
        self.nobodys_region(paths, 0o666)
        program = ("import bakery, sys\n"
                   "try:\n"
                   "    bakery.PathLock(sys.argv[1]).acquire()\n"
                   "except bakery.PermissionDenied as e:\n"
                   "    print(e)\n")
        lock_file = "/tmp/bakery-py-test-users-%d.lock" % os.getpid()
        self.addCleanup(lambda: os.path.exists(lock_file) and os.unlink(lock_file))
        run = subprocess.run([sys.executable, "-c", program, lock_file],
                             env=dict(os.environ, BAKERY_PATH_REGION=paths),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout)
        self.assertIn("the region of path locks %s belongs to " % paths, run.stdout)
        self.assertIn("uid %d" % NOBODY, run.stdout)
        self.assertIn("BAKERY_PATH_REGION", run.stdout)


if __name__ == "__main__":
    unittest.main()
