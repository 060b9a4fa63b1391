# SPDX-License-Identifier: MIT
"""PathLock and ReadWritePathLock: the file-lock interface (acquire's proxy
and Timeout, release, with, is_locked, a count per object and thread),
threads and processes excluded (with an occupancy check of their own),
rename, replacement and a reused inode, OwnerDead, readers and a writer,
fork, and 10,000 distinct paths without a leak.

Every path lock of this process and its children lives in a region of its
own (BAKERY_PATH_REGION, set before the first path lock), removed at the
end."""

import multiprocessing
import os
import pickle
import re
import shutil
import signal
import tempfile
import threading
import time
import unittest

import bakery
from bakery import _native

from support import join, region_name, wait_until
from test_processes import ProcessTest, _count_under_lock

FORK = multiprocessing.get_context("fork")
SPAWN = multiprocessing.get_context("spawn")
# a test region, never the user's; a spawned child that imports this
# module again keeps its parent's
REGION = os.environ.get(_native.PATH_REGION_ENV, "")
if not REGION.startswith("/bakery-py-test-"):
    REGION = region_name() + "-paths"
os.environ[_native.PATH_REGION_ENV] = REGION


def tearDownModule():
    try:
        bakery.unlink(REGION)
    except bakery.NotFound:
        pass


def _hold(path, held, release, shared=False):
    lock = bakery.PathLock(path, shared=shared)
    with lock:
        held.set()
        release.wait(60)


def _die_holding(path):
    bakery.PathLock(path).acquire()
    os.kill(os.getpid(), signal.SIGKILL)


def _many_paths(workdir, first, last):
    for i in range(first, last):
        with bakery.PathLock(os.path.join(workdir, "p%d" % i)):
            pass


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _shm_objects():
    prefix = REGION.lstrip("/")
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith(prefix))


class PathTest(ProcessTest):
    """A test with a directory of its own (self.dir), children started with
    self.start(ctx, target, ...) and reaped at the end, and helpers for
    children that hold a path's lock."""

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="bakery-py-pathlock-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def hold_in_child(self, path, shared=False):
        """A child process holding PATH's lock; its release event."""
        held, release = FORK.Event(), FORK.Event()
        proc = self.start(FORK, _hold, path, held, release, shared)
        self.assertTrue(held.wait(60), "the child never took the lock")
        self.addCleanup(release.set)
        return proc, release

    def assert_busy(self, path):
        with self.assertRaises(bakery.Timeout):
            bakery.PathLock(path).acquire(blocking=False)

    def assert_free(self, path):
        with bakery.PathLock(path).acquire(blocking=False):
            pass


class TestInterface(PathTest):

    def test_acquire_returns_a_proxy_for_with(self):
        path = self.path("job.lock")
        lock = bakery.PathLock(path)
        self.assertFalse(os.path.exists(path))          # created by the first acquire
        self.assertFalse(lock.is_locked)
        proxy = lock.acquire()
        self.assertTrue(os.path.exists(path))
        self.assertTrue(lock.is_locked)
        with proxy as inside:
            self.assertIs(inside, lock)
        self.assertFalse(lock.is_locked)
        with lock.acquire(timeout=1):
            self.assertTrue(lock.is_locked)
        with lock as inside:
            self.assertIs(inside, lock)
            self.assertEqual(lock.lock_counter, 1)
        self.assertEqual(lock.path, path)
        self.assertEqual(lock.lock_file, path)

    def test_reentrant_per_object_and_thread(self):
        lock = bakery.PathLock(self.path("job.lock"))
        lock.acquire()
        lock.acquire(blocking=False)                    # counts, never waits
        with lock:
            self.assertEqual(lock.lock_counter, 3)
        lock.release()
        self.assertTrue(lock.is_locked)
        lock.release()
        self.assertFalse(lock.is_locked)
        lock.release()                                  # not held: nothing
        lock.acquire()
        lock.acquire()
        lock.release(force=True)
        self.assertFalse(lock.is_locked)
        self.assert_free(lock.path)

    def test_threads_wait_for_each_other(self):
        lock = bakery.PathLock(self.path("job.lock"))
        outcome = []

        def other():
            try:
                lock.acquire(timeout=0.2)
            except bakery.Timeout:
                outcome.append("timeout")
            with lock:
                outcome.append("held")

        with lock:
            t = threading.Thread(target=other)
            t.start()
            wait_until(lambda: outcome, "the other thread to give up")
            self.assertFalse(t.is_alive() and outcome != ["timeout"])
        t.join(60)
        self.assertEqual(outcome, ["timeout", "held"])

    def test_another_object_in_the_same_thread_is_a_deadlock(self):
        path = self.path("job.lock")
        with bakery.PathLock(path):
            with self.assertRaises(bakery.Deadlock):
                bakery.PathLock(os.path.join(self.dir, ".", "job.lock")).acquire()

    def test_not_acquired_raises_timeout(self):
        path = self.path("job.lock")
        self.hold_in_child(path)
        lock = bakery.PathLock(path)
        with self.assertRaises(bakery.Timeout):
            lock.acquire(blocking=False)
        start = time.monotonic()
        with self.assertRaises(TimeoutError):           # bakery.Timeout is one
            lock.acquire(timeout=0.2)
        self.assertGreaterEqual(time.monotonic() - start, 0.2)
        with self.assertRaises(bakery.Timeout):
            with bakery.PathLock(path, timeout=0):
                pass
        with self.assertRaises(bakery.Timeout):
            with bakery.PathLock(path, blocking=False):
                pass
        self.assertFalse(lock.is_locked)

    def test_bad_arguments(self):
        with self.assertRaises(bakery.InvalidArgument):
            bakery.PathLock("")
        with self.assertRaises(bakery.InvalidArgument):
            bakery.PathLock("a\0b")
        with self.assertRaises(TypeError):
            bakery.PathLock(self.path("x")).acquire(timeout="soon")
        with self.assertRaises(bakery.NotFound):
            bakery.PathLock(self.path("x"), create=False).acquire()
        with self.assertRaises(bakery.NotFound):
            bakery.PathLock(self.path("no/such/dir")).acquire()
        self.assertFalse(os.path.exists(self.path("x")))
        with self.assertRaises(bakery.PermissionDenied):
            bakery.PathLock(self.path("x")).consistent()

    def test_info_names_the_lock(self):
        path = self.path("job.lock")
        info = bakery.PathLock(path).info()
        st = os.stat(path)
        self.assertEqual(info["region"], REGION)
        self.assertTrue(info["lock"].startswith(_native.PATH_LOCK_PREFIX))
        self.assertEqual((info["dev"], info["ino"]), (st.st_dev, st.st_ino))
        self.assertIn(info["stamp"], ("birth", "generation"))
        names = [entry["name"] for entry in bakery.Region(REGION).status()["locks"]]
        self.assertIn(info["lock"], names)

    def test_constants_are_the_headers(self):
        with open(os.path.join(os.environ.get("top_srcdir", os.path.join(
                os.path.dirname(__file__), "..", "..")), "lib", "bakery.h")) as f:
            header = f.read()
        self.assertIn('#define BAKERY_PATH_REGION_ENV    "%s"' % _native.PATH_REGION_ENV, header)
        self.assertIn('#define BAKERY_PATH_LOCK_PREFIX   "%s"' % _native.PATH_LOCK_PREFIX, header)
        stamps = re.search(r"enum bakery_path_stamp \{(.*?)\}", header, re.S).group(1)
        self.assertEqual(re.findall(r"BAKERY_PATH_STAMP_(\w+)", stamps),
                         [_native.PATH_STAMPS[i].upper() for i in range(3)])

    def test_pickled_lock_is_the_same_lock(self):
        lock = bakery.PathLock(self.path("job.lock"), timeout=3, shared=True)
        copy = pickle.loads(pickle.dumps(lock))
        self.assertEqual((copy.path, copy.timeout, copy.shared), (lock.path, 3, True))
        rw = pickle.loads(pickle.dumps(bakery.ReadWritePathLock(self.path("rw.lock"))))
        self.assertEqual(rw.path, self.path("rw.lock"))


class TestIdentity(PathTest):

    def test_processes_exclude_each_other_through_any_path(self):
        path = self.path("file")
        with open(os.path.join(self.dir, "counter"), "w") as f:
            f.write("0")
        open(path, "w").close()
        os.link(path, self.path("hard"))
        os.symlink("file", self.path("soft"))
        violations = SPAWN.Value("i", 0)       # shared with either kind of child
        locks = [bakery.PathLock(self.path(n)) for n in ("file", "hard", "soft")]
        procs = [self.start(FORK, _count_under_lock, lock, self.dir, 100, violations)
                 for lock in locks]
        procs.append(self.start(SPAWN, _count_under_lock, locks[0], self.dir, 100, violations))
        self.assertEqual([join(p) for p in procs], [0] * 4)
        self.assertEqual(violations.value, 0)
        with open(os.path.join(self.dir, "counter")) as f:
            self.assertEqual(int(f.read()), 400)

    def test_a_renamed_file_keeps_its_lock(self):
        old, new = self.path("a"), self.path("b")
        self.hold_in_child(old)
        os.rename(old, new)
        self.assert_busy(new)
        self.assert_free(old)                           # a new file there

    def test_a_replaced_file_gets_a_new_lock(self):
        path = self.path("a")
        lock = bakery.PathLock(path)                    # made before the replacement
        with lock:
            pass
        self.hold_in_child(path)
        self.assert_busy(path)
        with open(self.path("a.new"), "w") as f:
            f.write("new")
        os.replace(self.path("a.new"), path)
        with lock.acquire(blocking=False):              # looks at the path afresh
            pass
        self.assert_free(path)

    def test_a_reused_inode_inherits_nothing(self):
        # on the build's file system (disks reuse inode numbers at once)
        workdir = tempfile.mkdtemp(prefix="bakery-py-reuse-", dir=".")
        self.addCleanup(shutil.rmtree, workdir, True)
        old = os.path.join(workdir, "old")
        open(old, "w").close()
        ino = os.stat(old).st_ino
        old_lock = bakery.PathLock(old).info()["lock"]
        proc = self.start(FORK, _die_holding, old)
        join(proc)
        self.assertEqual(proc.exitcode, -signal.SIGKILL)
        os.unlink(old)
        new = os.path.join(workdir, "new")
        for _ in range(2000):
            open(new, "w").close()
            if os.stat(new).st_ino == ino:
                if bakery.PathLock(new).info()["lock"] != old_lock:
                    break
                time.sleep(0.001)                       # born in the same tick
            os.unlink(new)
        else:
            open(new, "w").close()
            print("inode %d was not reused: names compared only" % ino)
        with bakery.PathLock(new):                      # no OwnerDead
            pass
        self.assertNotEqual(bakery.PathLock(new).info()["lock"], old_lock)


def _die_writing(path):
    bakery.ReadWritePathLock(path).write_lock()
    os.kill(os.getpid(), signal.SIGKILL)


class TestOwnerDeadAndReaders(PathTest):

    def test_owner_dead_is_told_and_repaired(self):
        path = self.path("job.lock")
        proc = self.start(FORK, _die_holding, path)
        join(proc)
        lock = bakery.PathLock(path)
        with self.assertRaises(bakery.OwnerDead) as caught:
            with lock:
                self.fail("the with body runs after an OwnerDead")
        self.assertIs(caught.exception.lock, lock)
        self.assertTrue(lock.is_locked)                 # held: repair now
        caught.exception.lock.consistent()              # ...and released
        self.assertFalse(lock.is_locked)
        self.assert_free(path)

    def test_owner_dead_from_acquire_stays_held(self):
        path = self.path("job.lock")
        join(self.start(FORK, _die_holding, path))
        lock = bakery.PathLock(path)
        with self.assertRaises(bakery.OwnerDead):
            lock.acquire()
        lock.consistent()
        self.assertTrue(lock.is_locked)
        lock.release()
        self.assert_free(path)

    def test_readers_together_writer_alone(self):
        path = self.path("table.lock")
        _, release = self.hold_in_child(path, shared=True)
        rw = bakery.ReadWritePathLock(path)
        with rw.read_lock(blocking=False):              # beside the other reader
            with self.assertRaises(bakery.Deadlock):    # no upgrade
                rw.write_lock(blocking=False)
        with self.assertRaises(bakery.Timeout):
            rw.write_lock(timeout=0.1)
        release.set()
        with rw.write_lock(timeout=60):
            self.assertTrue(rw.writer.is_locked)
            with self.assertRaises(bakery.Deadlock):    # no downgrade
                rw.read_lock(blocking=False)

    def test_a_dead_writer_is_told_to_readers_then_repaired(self):
        path = self.path("table.lock")
        join(self.start(FORK, _die_writing, path))
        rw = bakery.ReadWritePathLock(path)
        with self.assertRaises(bakery.OwnerDead):
            rw.read_lock()
        with self.assertRaises(bakery.PermissionDenied):    # a reader cannot repair
            rw.reader.consistent()
        rw.release_read_lock()
        with self.assertRaises(bakery.OwnerDead) as caught:
            with rw.write_lock():
                pass
        caught.exception.lock.consistent()
        rw.release_write_lock()
        with rw.write_lock(blocking=False):
            pass


def _fork_and_check(lock, result):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if not lock.is_locked:                      # the parent's hold is not ours
                try:
                    lock.acquire(blocking=False)
                except bakery.Timeout:
                    code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    result.append(os.waitstatus_to_exitcode(status))


class TestForkAndLeaks(PathTest):

    def test_a_forked_child_does_not_hold_the_parents_lock(self):
        lock = bakery.PathLock(self.path("job.lock"))
        result = []
        with lock:
            _fork_and_check(lock, result)
        self.assertEqual(result, [0])

    def test_ten_thousand_paths_leave_nothing_behind(self):
        _many_paths(self.dir, 0, 500)                   # the region, the tables
        fds, objects = _fds(), _shm_objects()
        _many_paths(self.dir, 500, 10000)
        self.assertEqual(_fds(), fds)
        self.assertEqual(_shm_objects(), objects)
        self.assertEqual(objects, [REGION.lstrip("/")])
        status = bakery.Region(REGION).status()
        self.assertLessEqual(status["locks_used"], status["locks_capacity"])

    def test_distinct_paths_from_several_processes(self):
        procs = [self.start(FORK, _many_paths, self.dir, i * 2500, (i + 1) * 2500)
                 for i in range(4)]
        self.assertEqual([join(p) for p in procs], [0] * 4)
        self.assertEqual(_shm_objects(), [REGION.lstrip("/")])


if __name__ == "__main__":
    unittest.main()
