# SPDX-License-Identifier: MIT
"""Biased locks (``biased=True``): creation and its refusals, joining, the
bias a lone thread earns (64 passages in a row), its revocation by another
thread's or process's first lock call, exclusion across revocations, the
info fields (``biased``, ``bias_slot``, ``bias_revocations``) and pickling."""

import errno
import json
import os
import pickle
import platform
import shutil
import subprocess
import tempfile
import threading
import unittest

import bakery
from bakery import _native

from support import FORK, LockTest, RegionTest, join, take_in_turn, tool, wait_until
from test_processes import _count_under_lock

# the bias is granted on x86 only (elsewhere a biased lock is an ordinary one)
X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i486", "i586", "i686")
GRANT = 64          # passages in a row of one thread alone: then the bias is its
ROUNDS = 200


class BiasedTest(RegionTest):
    """A RegionTest where biased locks can be made: skipped where the
    membarrier they need is refused (a kernel without it, a seccomp
    profile), the one cause of ENOTSUP for a lamport lock of one holder."""

    def setUp(self) -> None:
        super().setUp()
        try:
            self.region.lock("probe", algo="lamport", biased=True).close()
        except bakery.ErrnoError as e:
            if e.errno != errno.ENOTSUP:
                raise
            self.skipTest("biased locks are not supported here (membarrier refused)")
        self.region.unlink_lock("probe")

    def my_slot(self) -> int:
        """The calling thread's slot of the region."""
        me = (os.getpid(), threading.get_native_id())
        slots = [s["index"] for s in self.region.status()["slots"]
                 if (s["pid"], s["tid"]) == me]
        self.assertEqual(len(slots), 1, "the calling thread has no slot")
        return slots[0]

    def earn_bias(self, lock: "bakery.Lock", passages: int = GRANT + 6) -> None:
        """PASSAGES alone in the calling thread: the lock is then biased to
        its slot (on x86)."""
        for _ in range(passages):
            with lock:
                pass
        if not X86:
            self.skipTest("the bias is never granted on %s" % platform.machine())
        info = lock.info()
        self.assertEqual((info["bias_slot"], info["holding"]), (self.my_slot(), 0))

    def bias(self, lock: "bakery.Lock") -> tuple:
        info = lock.info()
        return info["biased"], info["bias_slot"], info["bias_revocations"]


class TestCreateAndJoin(BiasedTest):

    def test_a_biased_lock_and_its_info(self):
        lock = self.region.lock("b", biased=True)
        self.assertTrue(lock.biased)
        self.assertEqual(lock.algorithm, "lamport")     # the default of a biased lock
        self.assertEqual(lock.capacity, 1)
        self.assertEqual(self.bias(lock), (True, None, 0))
        self.assertEqual(self.region.lock("bb", algo="boulangerie", biased=True).algorithm,
                         "boulangerie")
        # a lock made without it: not biased, and never
        plain = self.region.lock("plain")
        self.assertFalse(plain.biased)
        for _ in range(GRANT + 6):
            with plain:
                pass
        self.assertEqual(self.bias(plain), (False, None, 0))
        entries = {lk["name"]: lk for lk in self.region.status()["locks"]}
        self.assertEqual([entries[n]["biased"] for n in ("b", "bb", "plain")],
                         [True, True, False])

    def test_not_for_black_white_jayanti_or_k_holders(self):
        for algo in ("black-white", "jayanti"):
            with self.subTest(algo=algo):
                with self.assertRaises(bakery.ErrnoError) as cm:
                    self.region.lock("x", algo=algo, biased=True)
                self.assertEqual(cm.exception.errno, errno.ENOTSUP)
                self.assertNotIsInstance(cm.exception, bakery.AlgorithmMismatch)
        with self.assertRaises(bakery.ErrnoError) as cm:
            self.region.lock("x", holders=2, biased=True)
        self.assertEqual(cm.exception.errno, errno.ENOTSUP)
        # refused before anything is made
        self.assertEqual(self.region.status()["locks"], [])

    def test_biased_must_be_a_bool(self):
        for bad in (1, "yes"):
            with self.subTest(biased=bad):
                with self.assertRaises(TypeError):
                    self.region.lock("x", biased=bad)

    def test_biased_cannot_join_a_plain_lock(self):
        self.region.lock("plain")
        self.region.lock("plain-lamport", algo="lamport")
        for name in ("plain", "plain-lamport"):
            with self.subTest(name=name):
                with self.assertRaises(bakery.AlgorithmMismatch) as cm:
                    self.region.lock(name, biased=True)
                self.assertEqual(cm.exception.code, _native.EALGO)
                self.assertEqual(str(cm.exception), "%s %s: the lock is not biased; "
                                 "biased=True cannot take part in it" % (self.name, name))

    def test_a_plain_open_joins_a_biased_lock(self):
        self.region.lock("b", biased=True)
        for asked in ({}, {"biased": False}, {"biased": True}, {"algo": "boulangerie"}):
            with self.subTest(**asked):
                joined = self.region.lock("b", **asked)
                self.assertTrue(joined.biased)
                with joined:
                    self.assertTrue(joined.locked())
        # another algorithm than lamport or boulangerie: as for any lock
        with self.assertRaises(bakery.AlgorithmMismatch) as cm:
            self.region.lock("b", algo="jayanti")
        self.assertEqual(cm.exception.message,
                         "the lock uses lamport; algo='jayanti' cannot take part in it")

    def test_pickle_keeps_the_bias_asked_for(self):
        lock = self.region.lock("p", biased=True)
        copy = pickle.loads(pickle.dumps(lock))
        self.addCleanup(copy.region.close)
        self.assertTrue(copy.biased)
        with copy:
            self.assertTrue(lock.locked())
        # a Lock opened without biased=True loads as such: it joins either kind
        plain_asked = pickle.dumps(self.region.lock("p"))
        data = pickle.dumps(lock)
        copy.close()
        lock.close()
        self.region.unlink_lock("p")
        self.region.lock("p")                   # made again, not biased
        with self.assertRaises(bakery.AlgorithmMismatch) as cm:
            pickle.loads(data)
        self.assertEqual(cm.exception.message,
                         "the lock is not biased; biased=True cannot take part in it")
        loaded = pickle.loads(plain_asked)
        self.addCleanup(loaded.region.close)
        self.assertFalse(loaded.biased)

    def test_status_is_the_tools_json(self):
        bakery_tool = tool()
        if not bakery_tool:
            self.skipTest("the build's tools/bakery is not known (top_builddir)")
        lock = self.region.lock("b", biased=True)
        self.region.lock("plain")
        for _ in range(GRANT + 6):
            with lock:
                pass
        out = subprocess.run([bakery_tool, "status", self.name, "--json"],
                             check=True, stdout=subprocess.PIPE).stdout
        mine = self.region.status()
        self.assertEqual(mine, json.loads(out))
        self.assertEqual([(lk["biased"], lk["bias_revocations"]) for lk in mine["locks"]],
                         [(True, 0), (False, 0)])


class TestBiasAndRevocation(BiasedTest, LockTest):

    def setUp(self) -> None:
        super().setUp()
        self.lock = self.region.lock("biased", biased=True)

    def test_a_lone_thread_earns_the_bias(self):
        for _ in range(10):
            with self.lock:
                pass
        self.assertEqual(self.bias(self.lock), (True, None, 0))   # not yet
        self.earn_bias(self.lock)
        self.assertEqual(self.bias(self.lock), (True, self.my_slot(), 0))
        self.assertEqual(self.lock.info()["acquisitions"], GRANT + 16)
        # its owner's passages through the bias count and show as any other
        with self.lock:
            info = self.lock.info()
            self.assertEqual((info["holder"], info["holding"]), (self.my_slot(), 1))
            self.assertEqual(info["bias_slot"], self.my_slot())
        self.assertEqual(self.lock.info()["acquisitions"], GRANT + 17)
        self.assertFalse(self.lock.locked())

    def test_another_process_revokes_it_and_waits_its_turn(self):
        self.earn_bias(self.lock)
        with self.lock:                 # taken through the bias
            child = FORK.Process(target=take_in_turn, args=(self.lock, self.log))
            child.start()
            self.addCleanup(lambda: child.is_alive() and child.kill())
            # its first lock call revoked the bias, and it waits in line
            wait_until(lambda: self.in_line(child.pid), "the child to wait")
            self.assertEqual(self.bias(self.lock), (True, None, 1))
            self.assertEqual(self.lock.info()["holder"], self.my_slot())
            self.assertEqual(self.log_order(), [], "the child got in beside the holder")
        self.assertEqual(join(child), 0)
        self.assertEqual(self.log_order(), [child.pid])
        self.assertEqual(self.bias(self.lock), (True, None, 1))
        self.assert_free_for_a_third_party(self.lock)

    def test_another_process_revokes_it_once_taken(self):
        self.earn_bias(self.lock)
        child = FORK.Process(target=take_in_turn, args=(self.lock, self.log))
        child.start()
        self.assertEqual(join(child), 0)
        self.assertEqual(self.log_order(), [child.pid])
        self.assertEqual(self.bias(self.lock), (True, None, 1))
        # and the lock goes on as an ordinary one for its last owner
        with self.lock:
            self.assertEqual(self.lock.info()["holder"], self.my_slot())
        self.assertEqual(self.lock.info()["acquisitions"], GRANT + 6 + 2)

    def test_another_thread_revokes_it(self):
        self.earn_bias(self.lock)
        took = []

        def take_once():
            took.append(self.lock.acquire(timeout=60))
            self.lock.release()

        t = threading.Thread(target=take_once)
        t.start()
        t.join()
        self.assertEqual(took, [True])
        self.assertEqual(self.bias(self.lock), (True, None, 1))

    def test_a_reader_revokes_it(self):
        self.earn_bias(self.lock)
        result = FORK.Value("i", -1)
        proc = FORK.Process(target=_read_once, args=(self.lock, result))
        proc.start()
        self.assertEqual(join(proc), 0)
        self.assertEqual(result.value, 1)
        self.assertEqual(self.bias(self.lock), (True, None, 1))

    def test_exclusion_across_revocations(self):
        # the owner of the bias keeps passing while two processes come in:
        # nobody inside beside anybody, and no increment lost
        self.earn_bias(self.lock)
        workdir = tempfile.mkdtemp(prefix="bakery-py-test-")
        self.addCleanup(shutil.rmtree, workdir)
        with open(os.path.join(workdir, "counter"), "w") as f:
            f.write("0")
        violations = FORK.Value("i", 0)
        procs = [FORK.Process(target=_count_under_lock,
                              args=(self.lock, workdir, ROUNDS, violations))
                 for _ in range(2)]
        for proc in procs:
            proc.start()
        _count_under_lock(self.lock, workdir, ROUNDS, violations)
        self.assertEqual([join(p) for p in procs], [0, 0])
        self.assertEqual(violations.value, 0)
        with open(os.path.join(workdir, "counter")) as f:
            self.assertEqual(int(f.read()), 3 * ROUNDS)
        info = self.lock.info()
        self.assertGreaterEqual(info["bias_revocations"], 1)
        self.assertEqual(info["acquisitions"], GRANT + 6 + 3 * ROUNDS)


def _read_once(lock, result):
    with lock.read():
        result.value = 1


if __name__ == "__main__":
    unittest.main()
