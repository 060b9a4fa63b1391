# SPDX-License-Identifier: MIT
"""PathLock and ReadWritePathLock: the file-lock interface (acquire's proxy
and Timeout, release, with, is_locked, a count per object and thread),
threads and processes excluded (with an occupancy check of their own),
rename, replacement and a reused inode, OwnerDead, readers and a writer,
signals (Ctrl-C, a SIGALRM whose handler raises) that never leave the lock
held, asyncio, fork, and 10,000 distinct paths without a leak.

Every path lock of this process and its children lives in a region of its
own (BAKERY_PATH_REGION, set before the first path lock), removed at the
end."""

import asyncio
import multiprocessing
import os
import pickle
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import unittest

import bakery
from bakery import _native

from support import AsyncHelpers, join, region_name, wait_until
from test_async import CancelWhileAwaiting, InterruptedTasks, RaiseInTask
from test_processes import ProcessTest, _count_under_lock
from test_signals import OUTCOME_TIMEOUT, RaiseAtPoint, Waiter, interrupted_everywhere

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

    def line(self, path):
        """The Lock the path lock of PATH is, for its holders and queue."""
        info = bakery.PathLock(path).info()
        return bakery.Region(info["region"]).lock(info["lock"])

    def assert_free_for_another_process(self, path):
        result = FORK.Value("i", -1)
        self.assertEqual(join(self.start(FORK, _try_path, path, result)), 0)
        self.assertEqual(result.value, 1, "the lock was not free for another process")

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


def _try_path(path, result):
    try:
        with bakery.PathLock(path).acquire(blocking=False):
            result.value = 1
    except bakery.Timeout:
        result.value = 0


class _TakeThenRaise:
    """PathLock._take as it returns into a signal handler that raises: the
    lock call is made, its answer kept, then KeyboardInterrupt."""

    def __init__(self, take):
        self.take = take

    def __call__(self, answer, handle, wait):
        self.take(answer, handle, wait)
        raise KeyboardInterrupt


class TestSignals(PathTest):
    """Signals while the main thread waits in ``with PathLock(path):``, for
    real (a child interpreter, signalled while this process holds the
    lock), and an exception the moment the lock call returns (on purpose):
    it propagates with the lock not held, and the waiter out of line."""

    def setUp(self):
        super().setUp()
        self.log = self.path("log")
        open(self.log, "w").close()

    def waiter(self, path):
        """test_signals' waiter, on PATH's PathLock."""
        return Waiter(self, lock="path=" + path)

    def interrupt_waiter(self, signum, outcome):
        path = self.path("job.lock")
        line = self.line(path)
        with bakery.PathLock(path):
            waiter = self.waiter(path)
            wait_until(lambda: waiter.pid in [q["pid"] for q in line.info()["queue"]],
                       "the child to wait in line")
            os.kill(waiter.pid, signum)
            self.assertEqual(waiter.expect(outcome, OUTCOME_TIMEOUT),
                             outcome + " free out handled=0")
            self.assertEqual(line.info()["waiters"], 0)
        self.assert_free_for_another_process(path)     # the waiter still lives
        self.assertEqual(waiter.finish(), 0)
        with open(self.log) as f:
            self.assertEqual(f.read(), "")              # the with body never ran

    def test_sigalrm_handler_that_raises_while_waiting(self):
        self.interrupt_waiter(signal.SIGALRM, "alarm")

    def test_ctrl_c_while_waiting(self):
        self.interrupt_waiter(signal.SIGINT, "KeyboardInterrupt")

    def test_sigalrm_as_the_lock_is_handed_over(self):
        # released, and the waiter signalled at once: the exception comes
        # while it waits, or once it holds the lock (the with block then
        # releases it); either way the lock is not left held
        path = self.path("job.lock")
        line = self.line(path)
        lock = bakery.PathLock(path)
        for _ in range(5):
            lock.acquire()
            waiter = self.waiter(path)
            wait_until(lambda: waiter.pid in [q["pid"] for q in line.info()["queue"]],
                       "the child to wait in line")
            lock.release()
            os.kill(waiter.pid, signal.SIGALRM)
            self.assertIn(waiter.expect(""), ("alarm free out handled=0",
                                              "entered free out handled=0"))
            self.assertEqual(line.info()["holders"], [])
            self.assert_free_for_another_process(path)
            self.assertEqual(waiter.finish(), 0)

    def test_lock_taken_is_released_before_it_propagates(self):
        path = self.path("job.lock")
        for shared, enter in ((False, lambda lock: lock.__enter__()),
                              (False, lambda lock: lock.acquire()),
                              (False, lambda lock: lock.acquire(blocking=False)),
                              (False, lambda lock: lock.acquire(timeout=5)),
                              (True, lambda lock: lock.__enter__())):
            lock = bakery.PathLock(path, shared=shared)
            lock._take = _TakeThenRaise(lock._take)
            with self.assertRaises(KeyboardInterrupt):
                enter(lock)
            self.assertFalse(lock.is_locked)
            self.assertEqual(self.line(path).info()["holders"], [])
            self.assert_free(path)

    def test_a_wait_in_another_thread_is_released_the_same(self):
        # (a thread other than the main one runs no handler: the lock call
        # blocks; an exception as it returns is handled the same way)
        path = self.path("job.lock")
        lock = bakery.PathLock(path)
        lock._take = _TakeThenRaise(lock._take)
        raised = []

        def other():
            try:
                lock.acquire(timeout=60)
            except KeyboardInterrupt:
                raised.append(True)

        t = threading.Thread(target=other)
        t.start()
        t.join(60)
        self.assertEqual(raised, [True])
        self.assert_free(path)

    def test_release_interrupted_still_releases(self):
        import bakery.pathlock as module
        path = self.path("job.lock")
        lock = bakery.PathLock(path)
        real = module._path_unlock
        calls = []

        def raise_first(handle):        # the exception before the unlock ran
            if not calls:
                calls.append(handle)
                raise KeyboardInterrupt
            return real(handle)

        with self.assertRaises(KeyboardInterrupt):
            with lock:
                module._path_unlock = raise_first
        module._path_unlock = real
        self.assertFalse(lock.is_locked)
        self.assert_free(path)

    def held(self, path):
        return self.line(path).info()["holders"] != []

    def test_a_release_interrupted_anywhere_releases(self):
        # past the first instruction of the function called (test_signals)
        path = self.path("job.lock")
        lock = bakery.PathLock(path)
        interrupted_everywhere(self, "release", lock.acquire, lock.release,
                               lambda: self.held(path))
        interrupted_everywhere(self, "__exit__", lock.__enter__,
                               lambda: lock.__exit__(None, None, None), lambda: self.held(path))
        proxies = []
        interrupted_everywhere(self, "__exit__", lambda: proxies.append(lock.acquire()),
                               lambda: proxies.pop().__exit__(None, None, None),
                               lambda: self.held(path))
        self.assertFalse(lock.is_locked)

    def test_an_acquire_interrupted_anywhere_holds_only_if_it_returns(self):
        path = self.path("job.lock")
        lock = bakery.PathLock(path)
        for n in range(1, 500):
            raiser = RaiseAtPoint("acquire", n)
            took = False
            sys.setprofile(raiser)
            try:
                lock.acquire()
                took = True
            except KeyboardInterrupt:
                pass
            finally:
                sys.setprofile(None)
            self.assertEqual(self.held(path), took, "point %d" % n)
            self.assertEqual(lock.is_locked, took, "point %d" % n)
            if took:
                lock.release()
            if not raiser.raised:
                break
        self.assertGreater(n, 1)

    def test_owner_dead_is_kept_and_raised(self):
        path = self.path("job.lock")
        join(self.start(FORK, _die_holding, path))
        lock = bakery.PathLock(path)
        lock._take = _TakeThenRaise(lock._take)
        with self.assertRaises(bakery.OwnerDead) as caught:
            with lock:
                self.fail("the with body ran")
        self.assertIsInstance(caught.exception.__cause__, KeyboardInterrupt)
        self.assertTrue(lock.is_locked)                 # held: repair, then
        caught.exception.lock.consistent()              # consistent() releases
        self.assertFalse(lock.is_locked)
        self.assert_free(path)


class TestAsync(AsyncHelpers, PathTest):
    """``async with PathLock(path):`` and ``await lock.acquire_async()``:
    the task keeps its place in line while the loop runs other tasks,
    leaves the line when cancelled, holds per task (reentrant), and repairs
    an owner death through the task."""

    def queued_here(self, line):
        return [q["pid"] for q in line.info()["queue"]].count(os.getpid())

    def test_place_in_line_kept_while_the_loop_runs(self):
        path = self.path("job.lock")
        line = self.line(path)
        _, release = self.hold_in_child(path)
        lock = bakery.PathLock(path)
        ticks, inside = [], []

        async def ticker(stop):
            while not stop.is_set():
                ticks.append(1)
                await asyncio.sleep(0.001)

        async def task():
            async with lock:
                inside.append(lock.is_locked)
                async with lock:                        # reentrant per task
                    inside.append(lock.lock_counter)

        async def main():
            stop = asyncio.Event()
            ticking = asyncio.create_task(ticker(stop))
            waiter = asyncio.create_task(task())
            await self.until(lambda: self.queued_here(line) == 1, "the task to wait in line")
            before = len(ticks)
            await asyncio.sleep(0.2)
            self.assertGreater(len(ticks), before + 3)      # the loop ran meanwhile
            self.assertEqual(inside, [])
            release.set()
            await waiter
            stop.set()
            await ticking

        self.run_async(main())
        self.assertEqual(inside, [True, 2])
        self.assertFalse(lock.is_locked)
        self.assertEqual(line.info()["holders"], [])
        self.assert_free(path)

    def test_cancelled_while_waiting_leaves_the_line(self):
        path = self.path("job.lock")
        line = self.line(path)
        _, release = self.hold_in_child(path)

        async def main():
            waiter = asyncio.create_task(bakery.PathLock(path).acquire_async())
            await self.until(lambda: self.queued_here(line) == 1, "the task to wait in line")
            waiter.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await waiter
            self.assertEqual(line.info()["waiters"], 0)     # out at once

        self.run_async(main())
        release.set()
        self.assert_free_for_another_process(path)

    def test_timeout_try_and_tasks_of_one_loop(self):
        path = self.path("job.lock")
        lock = bakery.PathLock(path)
        order = []

        async def second():
            async with lock:                # held by the first task: waits
                order.append("second")

        async def held_elsewhere():
            with self.assertRaises(bakery.Timeout):
                await bakery.PathLock(path).acquire_async(timeout=0.1)
            with self.assertRaises(bakery.Timeout):
                async with bakery.PathLock(path, timeout=0.1):
                    self.fail("not acquired: the block must not run")
            with self.assertRaises(bakery.Timeout):
                await lock.acquire_async(blocking=False)
            self.assertFalse(lock.is_locked)

        async def is_locked_in_a_task():
            return lock.is_locked           # (the other task's hold is not its own)

        async def main():
            async with await lock.acquire_async(timeout=60):
                task = asyncio.create_task(second())
                await asyncio.sleep(0.2)
                order.append("first")
                self.assertTrue(lock.is_locked)
                self.assertFalse(await asyncio.create_task(is_locked_in_a_task()))
                with self.assertRaises(bakery.Timeout):
                    await bakery.PathLock(path).acquire_async(blocking=False)
            await task

        proc, release = self.hold_in_child(path)
        self.run_async(held_elsewhere())
        release.set()
        join(proc)                          # free: main() takes it on the loop's thread
        self.run_async(main())
        self.assertEqual(order, ["first", "second"])
        self.assert_free(path)

    def test_owner_dead_repaired_through_the_task(self):
        path = self.path("job.lock")
        join(self.start(FORK, _die_holding, path))
        lock = bakery.PathLock(path)

        async def main():
            with self.assertRaises(bakery.OwnerDead) as caught:
                async with lock:
                    self.fail("the with body ran")
            self.assertTrue(lock.is_locked)
            caught.exception.lock.consistent()      # repaired, and released
            self.assertFalse(lock.is_locked)

        self.run_async(main())
        self.assert_free(path)


class TestExceptionInATask(InterruptedTasks, PathTest):
    """test_async's interrupted tasks, for a PathLock: a KeyboardInterrupt
    anywhere in a task's release or acquisition, and a cancellation at any
    of their awaits, leave the lock free, or held for the task when the
    acquisition returned (or raised OwnerDead)."""

    def setUp(self):
        super().setUp()
        path = self.path("job.lock")
        self.lock = bakery.PathLock(path)
        self.lock_of_path = self.line(path)

    def held(self):
        return self.lock_of_path.info()["holders"] != []

    def slots(self):
        return self.lock_of_path.region.status()["slots"]

    def dying_acquire(self):
        bakery.PathLock(self.lock.path).acquire()  # (counts are per object and thread)

    def test_release(self):
        proxies = []

        async def enter_a_proxy():
            proxies.append(await self.lock.acquire_async())

        async def in_the_task():            # (not named release: the outer is)
            self.lock.release()

        exits = [(self.lock.__aenter__, lambda: self.lock.__aexit__(None, None, None)),
                 (enter_a_proxy, lambda: proxies.pop().__aexit__(None, None, None))]
        for by_a_holder in (False, True):
            for enter, exit in exits:
                for injector in (RaiseInTask, CancelWhileAwaiting):
                    self.interrupted(injector, "__aexit__", self.take(enter, by_a_holder),
                                     exit, self.assert_released)
            points = self.interrupted(RaiseInTask, "release",
                                      self.take(self.lock.acquire_async, by_a_holder),
                                      in_the_task, self.assert_released)
            self.assertGreater(points, 5)

    def test_acquire(self):
        for busy in (False, True):
            async def take():
                if busy:
                    self.busy_until_the_loop_runs()

            for outer, enter in (("acquire_async", self.lock.acquire_async),
                                 ("__aenter__", self.lock.__aenter__)):
                for injector in (RaiseInTask, CancelWhileAwaiting):
                    self.interrupted(injector, outer, take, enter, self.assert_held_if_returned)

    def test_owner_dead(self):
        for waits in (False, True):
            points = self.interrupted(RaiseInTask, "acquire_async", self.owner_dies(waits),
                                      self.lock.acquire_async, self.owner_dead_told(waits))
            self.assertGreater(points, 20)


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
