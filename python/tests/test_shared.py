# SPDX-License-Identifier: MIT
"""Shared (reader) mode and locks of several holders: readers inside
together and a writer with nobody (each checked by who is seen inside,
not by timing), k holders and not k + 1, status() against the tool's JSON
with readers inside, and deaths: a dead reader gives its share back
unnoticed, a dead writer is reported to a reader (who cannot repair) and
to the next writer, a dead holder's unit comes back."""

import errno
import json
import multiprocessing
import os
import signal
import subprocess
import threading

import bakery

from support import RegionTest, join, tool, wait_until

FORK = multiprocessing.get_context("fork")


def _hold(lock, shared, held, release, told):
    """Hold LOCK (as a reader if SHARED) until RELEASE is set; TOLD is set
    to 1 if it was told a holder died (a writer repairs then)."""
    try:
        lock.acquire(shared=shared)
    except bakery.OwnerDead:
        told.value = 1
        if not shared:
            lock.consistent()
    held.set()
    release.wait()
    lock.release()


def _hold_until_killed(lock, shared, held):
    lock.acquire(shared=shared)
    held.set()
    threading.Event().wait()


def _reader_after_death(lock, outcome):
    """Read after a writer's death: told, holding shared, cannot repair."""
    try:
        with lock.read():
            outcome.value = b"entered"
    except bakery.OwnerDead as e:
        try:
            e.lock.consistent()
            outcome.value = b"repaired"
        except bakery.PermissionDenied:
            outcome.value = b"told"
        e.lock.release()


class SharedTest(RegionTest):

    def start(self, target, *args):
        proc = FORK.Process(target=target, args=args)
        proc.start()
        self.addCleanup(self._reap, proc)
        return proc

    @staticmethod
    def _reap(proc):
        if proc.is_alive():
            proc.kill()
        proc.join()

    def holding(self, lock, shared, told=None):
        """A child holding LOCK (shared or not) until the returned event is
        set; TOLD (a shared int) is set to 1 if it was told of a death."""
        held, release = FORK.Event(), FORK.Event()
        told = told if told is not None else FORK.Value("i", 0)
        proc = self.start(_hold, lock, shared, held, release, told)
        self.assertTrue(held.wait(120), "the child never got the lock")
        return proc, release

    def killed_inside(self, lock, shared):
        """A child that dies of SIGKILL holding LOCK."""
        held = FORK.Event()
        proc = self.start(_hold_until_killed, lock, shared, held)
        self.assertTrue(held.wait(120), "the child never got the lock")
        os.kill(proc.pid, signal.SIGKILL)
        join(proc)


class TestReaders(SharedTest):

    def test_readers_overlap_and_exclude_writers(self):
        lock = self.region.lock("table")
        reader, release = self.holding(lock, shared=True)
        # another reader is let in beside it, without waiting
        self.assertTrue(lock.acquire(blocking=False, shared=True))
        info = lock.info()
        self.assertEqual((info["holding"], info["readers"]), (2, 2))
        self.assertEqual([h["mode"] for h in info["holders"]], ["shared", "shared"])
        lock.release()
        # a writer is not
        self.assertFalse(lock.acquire(blocking=False))
        self.assertFalse(lock.acquire(timeout=0.1))
        release.set()
        self.assertEqual(join(reader), 0)
        # and with a writer inside, no reader
        writer, release = self.holding(lock, shared=False)
        self.assertFalse(lock.acquire(blocking=False, shared=True))
        self.assertFalse(lock.acquire(timeout=0.1, shared=True))
        with self.assertRaises(bakery.Timeout):
            with lock.read(timeout=0.1):
                pass
        self.assertEqual(lock.info()["holders"][0]["mode"], "exclusive")
        release.set()
        self.assertEqual(join(writer), 0)
        with lock.read() as held:
            self.assertIs(held, lock)
            self.assertEqual(self.slot_of(os.getpid())["mode"], "shared")
            with self.assertRaises(bakery.Deadlock):
                lock.acquire(shared=True)
            with self.assertRaises(bakery.Deadlock):
                lock.acquire()
        self.assertFalse(lock.locked())

    def test_status_is_the_tools_json_with_readers_inside(self):
        bakery_tool = tool()
        if not bakery_tool:
            self.skipTest("the build's tools/bakery is not known (top_builddir)")
        lock = self.region.lock("table")
        self.region.lock("pool", holders=3)
        reader, release = self.holding(lock, shared=True)
        with lock.read(timeout=120):
            out = subprocess.run([bakery_tool, "status", self.name, "--json"],
                                 check=True, stdout=subprocess.PIPE).stdout
            mine = self.region.status()
        release.set()
        join(reader)
        self.assertEqual(mine, json.loads(out))
        table, pool = mine["locks"]
        self.assertEqual((table["readers"], table["holding"], table["capacity"]), (2, 2, 1))
        self.assertEqual(sorted(h["pid"] for h in table["holders"]),
                         sorted([os.getpid(), reader.pid]))
        self.assertEqual(pool["capacity"], 3)

    def test_status_is_the_tools_json_after_deaths(self):
        bakery_tool = tool()
        if not bakery_tool:
            self.skipTest("the build's tools/bakery is not known (top_builddir)")
        table = self.region.lock("table")
        pool = self.region.lock("pool", holders=2)
        self.killed_inside(table, shared=True)      # a dead reader: not owner-died
        self.killed_inside(pool, shared=False)      # a dead holder: owner-died
        out = subprocess.run([bakery_tool, "status", self.name, "--json"],
                             check=True, stdout=subprocess.PIPE).stdout
        mine = self.region.status()
        self.assertEqual(mine, json.loads(out))
        self.assertEqual([l["state"] for l in mine["locks"]], ["ok", "owner-died"])
        self.assertEqual([h["mode"] for h in mine["locks"][0]["holders"]], ["shared"])

    def test_no_shared_mode_where_the_algorithm_has_none(self):
        lock = self.region.lock("j", algo="jayanti")
        with self.assertRaises(bakery.ErrnoError) as cm:
            lock.acquire(shared=True)
        self.assertEqual(cm.exception.errno, errno.ENOTSUP)
        with lock:          # the exclusive calls still work
            pass

    def test_dead_reader_gives_its_share_back(self):
        lock = self.region.lock("table")
        self.killed_inside(lock, shared=True)
        self.assertEqual(lock.info()["state"], "ok")
        with lock:          # no OwnerDead
            pass
        info = lock.info()
        self.assertEqual((info["reader_deaths"], info["owner_deaths"]), (1, 0))

    def test_dead_writer_is_told_to_readers_and_repaired_by_a_writer(self):
        lock = self.region.lock("table")
        self.killed_inside(lock, shared=False)
        outcome = FORK.Array("c", 16)
        self.assertEqual(join(self.start(_reader_after_death, lock, outcome)), 0)
        self.assertEqual(outcome.value, b"told")
        self.assertEqual(lock.info()["state"], "owner-died")
        with self.assertRaises(bakery.OwnerDead) as cm:
            with lock:
                pass
        cm.exception.lock.consistent()      # repaired (and released)
        self.assertEqual(lock.info()["state"], "ok")
        with lock.read():
            pass


class TestHolders(SharedTest):

    def test_k_holders_and_not_one_more(self):
        pool = self.region.lock("pool", holders=2)
        self.assertEqual(pool.capacity, 2)
        self.assertEqual(self.region.lock("pool").capacity, 2)
        self.assertEqual(pool.algorithm, "lamport")
        first, release_first = self.holding(pool, shared=False)
        second, release_second = self.holding(pool, shared=False)
        self.assertEqual(pool.info()["holding"], 2)
        self.assertFalse(pool.acquire(blocking=False))
        release_first.set()
        join(first)
        self.assertTrue(pool.acquire(timeout=120))
        pool.release()
        release_second.set()
        join(second)
        with self.assertRaises(bakery.ErrnoError) as cm:
            pool.acquire(shared=True)
        self.assertEqual(cm.exception.errno, errno.ENOTSUP)

    def test_capacity_is_fixed_at_creation(self):
        self.region.lock("pool", holders=2)
        with self.assertRaises(bakery.AlgorithmMismatch) as cm:
            self.region.lock("pool", holders=3)
        # the lock's capacity and the one asked for, as the tool says it
        self.assertEqual(str(cm.exception), "%s pool: the lock admits 2 holders; holders=3 "
                         "cannot take part in it" % self.name)
        self.assertEqual(self.region.lock("mutex").capacity, 1)
        with self.assertRaises(bakery.AlgorithmMismatch) as cm:
            self.region.lock("mutex", holders=2)
        self.assertEqual(cm.exception.message,
                         "the lock admits 1 holder; holders=2 cannot take part in it")
        with self.assertRaises(bakery.ErrnoError) as cm:
            self.region.lock("bw", algo="black-white", holders=2)
        self.assertEqual(cm.exception.errno, errno.ENOTSUP)
        for bad in (0, -1, bakery._native.MAX_HOLDERS + 1):
            with self.assertRaises(bakery.InvalidArgument):
                self.region.lock("bad", holders=bad)
        with self.assertRaises(TypeError):
            self.region.lock("bad", holders="2")

    def test_dead_holders_unit_comes_back(self):
        pool = self.region.lock("pool", holders=2)
        self.killed_inside(pool, shared=False)
        # two holders get in: one of them in the dead holder's unit, and
        # whoever proves the death first is told (either, or both)
        told = FORK.Value("i", 0)
        other, release = self.holding(pool, shared=False, told=told)
        try:
            self.assertTrue(pool.acquire(timeout=120))
        except bakery.OwnerDead as e:
            told.value += 1
            e.lock.consistent()
        self.assertGreaterEqual(told.value, 1)
        self.assertEqual(pool.info()["holding"], 2)
        pool.release()
        release.set()
        join(other)
        wait_until(lambda: pool.info()["holding"] == 0, "the pool to empty")
        self.assertEqual(pool.info()["owner_deaths"], 1)
