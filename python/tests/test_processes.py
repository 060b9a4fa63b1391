# SPDX-License-Identifier: MIT
"""Across processes: exclusion (with an occupancy check of its own), FIFO
order, a SIGKILLed holder (OwnerDead), an unrepaired hand-over
(NotRecoverable), timeouts, and Region/Lock objects passed to
multiprocessing children."""

import errno
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
import unittest

import bakery

from support import RegionTest, hold_forever, hold_until, join, take_in_turn, wait_until

FORK = multiprocessing.get_context("fork")
SPAWN = multiprocessing.get_context("spawn")

ROUNDS = 100


def _count_under_lock(lock, workdir, rounds, violations):
    """In the critical section: an O_EXCL marker proves nobody else is in
    it (creating it fails if they are), and a read-modify-write of a
    counter file loses increments if two run at once."""
    marker = os.path.join(workdir, "inside")
    counter = os.path.join(workdir, "counter")
    for _ in range(rounds):
        with lock:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                with violations.get_lock():
                    violations.value += 1
                continue
            with open(counter) as f:
                n = int(f.read())
            os.sched_yield()            # widen the window a broken lock would open
            with open(counter, "w") as f:
                f.write(str(n + 1))
            os.close(fd)
            os.unlink(marker)


def _take_over_without_repair(lock, outcome):
    try:
        with lock:
            outcome.value = b"entered"
    except bakery.OwnerDead as e:
        outcome.value = b"owner-dead"
        e.lock.release()                # no consistent(): not recoverable now


def _close_in_child(lock, region):
    lock.close()                        # no call runs in this process
    region.close()


class ProcessTest(RegionTest):

    def start(self, ctx, target, *args):
        proc = ctx.Process(target=target, args=args)
        proc.start()
        self.addCleanup(self._reap, proc)
        return proc

    @staticmethod
    def _reap(proc):
        if proc.is_alive():
            proc.kill()
        proc.join()


class TestExclusion(ProcessTest):

    def check_exclusion(self, ctx, workers):
        lock = self.region.lock("counter")
        workdir = tempfile.mkdtemp(prefix="bakery-py-test-")
        self.addCleanup(shutil.rmtree, workdir)
        with open(os.path.join(workdir, "counter"), "w") as f:
            f.write("0")
        violations = ctx.Value("i", 0)
        procs = [self.start(ctx, _count_under_lock, lock, workdir, ROUNDS, violations)
                 for _ in range(workers)]
        self.assertEqual([join(p) for p in procs], [0] * workers)
        self.assertEqual(violations.value, 0)
        with open(os.path.join(workdir, "counter")) as f:
            self.assertEqual(int(f.read()), workers * ROUNDS)
        self.assertEqual(lock.info()["acquisitions"], workers * ROUNDS)

    def test_forked_workers_exclude_each_other(self):
        self.check_exclusion(FORK, 4)

    def test_spawned_workers_reopen_the_lock_by_name(self):
        # spawn pickles the Lock: each child opens the region by name again
        self.check_exclusion(SPAWN, 2)


class TestOrder(ProcessTest):

    def test_first_come_first_served(self):
        lock = self.region.lock("fifo")
        log = tempfile.NamedTemporaryFile(prefix="bakery-py-fifo-", delete=False)
        log.close()
        self.addCleanup(os.unlink, log.name)
        lock.acquire()
        arrivals = []
        for _ in range(4):
            proc = self.start(FORK, take_in_turn, lock, log.name)
            # the next one starts only once this one waits (past the doorway)
            wait_until(lambda: (self.slot_of(proc.pid) or {}).get("pass") == "waiting",
                       "child %d to wait" % proc.pid)
            arrivals.append(proc)
        lock.release()
        self.assertEqual([join(p) for p in arrivals], [0] * 4)
        with open(log.name) as f:
            order = [int(line) for line in f]
        self.assertEqual(order, [p.pid for p in arrivals])


class TestDeaths(ProcessTest):

    def kill_holder(self, lock):
        held = FORK.Event()
        proc = self.start(FORK, hold_forever, lock, held)
        self.assertTrue(held.wait(120))
        os.kill(proc.pid, signal.SIGKILL)
        self.assertEqual(join(proc), -signal.SIGKILL)

    def test_owner_dead_after_sigkill(self):
        lock = self.region.lock("dies")
        self.kill_holder(lock)
        with self.assertRaises(bakery.OwnerDead) as cm:
            with lock:
                self.fail("the with body must not run after an owner death")
        e = cm.exception
        self.assertIs(e.lock, lock)
        self.assertEqual((e.code, e.errno), (errno.EOWNERDEAD, errno.EOWNERDEAD))
        info = lock.info()
        self.assertEqual(info["holder"], self.slot_of(os.getpid())["index"])  # held here
        self.assertEqual((info["state"], info["owner_deaths"]), ("owner-died", 1))
        e.lock.consistent()             # repaired, and released (the with did not run)
        info = lock.info()
        self.assertEqual((info["holder"], info["state"]), (None, "ok"))
        with lock:
            pass
        self.assertEqual(lock.info()["acquisitions"], 3)

    def test_owner_dead_from_acquire_keeps_lock_until_release(self):
        lock = self.region.lock("dies")
        self.kill_holder(lock)
        with self.assertRaises(bakery.OwnerDead):
            lock.acquire(timeout=60)
        lock.consistent()
        self.assertTrue(lock.locked())  # acquire()'s caller releases
        lock.release()
        self.assertFalse(lock.locked())
        self.assertIs(lock.acquire(blocking=False), True)
        lock.release()

    def test_not_recoverable_after_release_without_consistent(self):
        lock = self.region.lock("dies")
        self.kill_holder(lock)
        outcome = FORK.Array("c", 16)
        proc = self.start(FORK, _take_over_without_repair, lock, outcome)
        self.assertEqual(join(proc), 0)
        self.assertEqual(outcome.value, b"owner-dead")
        for attempt in (lambda: lock.acquire(), lambda: lock.acquire(blocking=False),
                        lambda: lock.acquire(timeout=1), lock.__enter__):
            with self.assertRaises(bakery.NotRecoverable) as cm:
                attempt()
            self.assertIn("not recoverable", str(cm.exception))
            self.assertIsInstance(cm.exception, OSError)
        self.assertEqual(lock.info()["state"], "not-recoverable")
        with self.assertRaises(bakery.NotRecoverable) as cm:
            self.region.unlink_lock("dies")
        self.assertIn("not removed", str(cm.exception))

    def test_unlink_lock_keeps_a_lock_that_owes_a_repair(self):
        lock = self.region.lock("dies")
        self.kill_holder(lock)
        self.region.recover()
        with self.assertRaises(bakery.OwnerDead) as cm:
            self.region.unlink_lock("dies")
        self.assertIsNone(cm.exception.lock)        # refused: not held
        self.assertEqual(lock.info()["state"], "owner-died")
        self.region.unlink_lock("dies", force=True)
        with self.assertRaises(bakery.LockRemoved):
            lock.acquire(blocking=False)


    def test_unlink_lock_proves_a_killed_holder_dead(self):
        # no recover() first: the unlink proves the death itself, so
        # OwnerDead (not Busy), which holds nothing and says so
        lock = self.region.lock("dies")
        self.kill_holder(lock)
        with self.assertRaises(bakery.OwnerDead) as cm:
            self.region.unlink_lock("dies")
        e = cm.exception
        self.assertEqual(e.code, errno.EOWNERDEAD)
        self.assertIsNone(e.lock)
        self.assertNotIn("acquired", str(e))
        self.assertIn("not removed", str(e))
        self.assertIn("not held", str(e))
        info = lock.info()
        self.assertEqual((info["holder"], info["state"]), (None, "owner-died"))
        # as the docs say: take it, repair, consistent(), then remove it
        with self.assertRaises(bakery.OwnerDead) as cm:
            with lock:
                self.fail("the with body must not run after an owner death")
        cm.exception.lock.consistent()
        self.region.unlink_lock("dies")
        with self.assertRaises(bakery.LockRemoved):
            lock.acquire(blocking=False)


class TestFork(ProcessTest):

    def test_child_can_close_what_a_parents_thread_was_using(self):
        lock = self.region.lock("f")
        lock.acquire()
        waiter = threading.Thread(target=lambda: (lock.acquire(), lock.release()), daemon=True)
        waiter.start()
        try:
            wait_until(lambda: lock.info()["waiters"] == 1, "the thread to wait")
            with self.assertRaises(bakery.Busy):
                lock.close()            # here the waiting thread uses it
            proc = self.start(FORK, _close_in_child, lock, self.region)
            self.assertEqual(join(proc), 0)
        finally:
            lock.release()
            waiter.join()
        self.assertEqual(lock.info()["acquisitions"], 2)


class TestTimeouts(ProcessTest):

    def test_timeouts_while_another_process_holds(self):
        lock = self.region.lock("busy")
        held, release = FORK.Event(), FORK.Event()
        proc = self.start(FORK, hold_until, lock, held, release)
        self.assertTrue(held.wait(120))
        self.assertIs(lock.acquire(blocking=False), False)
        for timeout in (0, 0.2):
            start = time.monotonic()
            self.assertIs(lock.acquire(timeout=timeout), False)
            self.assertGreaterEqual(time.monotonic() - start, timeout)
        start = time.monotonic()
        with self.assertRaises(bakery.Timeout) as cm:
            with lock.hold(timeout=0.2):
                self.fail("not acquired: the body must not run")
        self.assertGreaterEqual(time.monotonic() - start, 0.2)
        self.assertIsInstance(cm.exception, TimeoutError)
        info = lock.info()
        self.assertEqual((info["acquisitions"], info["waiters"]), (1, 0))  # gave up cleanly
        release.set()
        self.assertIs(lock.acquire(timeout=120), True)
        lock.release()
        with lock.hold(timeout=120):
            self.assertTrue(lock.locked())
        self.assertEqual(join(proc), 0)


if __name__ == "__main__":
    unittest.main()
