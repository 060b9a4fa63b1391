# SPDX-License-Identifier: MIT
"""Single-process behaviour: the API's calls, status() against the tool's
JSON, the exceptions, bad input and closed objects, threads."""

import contextlib
import errno
import json
import os
import pickle
import re
import resource
import subprocess
import sys
import threading
import time
import unittest

import bakery
from bakery import _native

from support import RegionTest, region_name, tool, wait_until

SRCDIR = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", ".."))


class TestBasics(RegionTest):

    def test_with_acquires_and_releases(self):
        lock = self.region.lock("nightly")
        self.assertFalse(lock.locked())
        with lock as held:
            self.assertIs(held, lock)
            info = lock.info()
            self.assertEqual(info["holder"], self.slot_of(os.getpid())["index"])
            self.assertEqual(self.slot_of(os.getpid())["pass"], "critical")
        self.assertFalse(lock.locked())
        self.assertEqual(lock.info()["acquisitions"], 1)

    def test_acquire_release_like_threading(self):
        lock = self.region.lock("l")
        self.assertIs(lock.acquire(), True)
        lock.release()
        self.assertIs(lock.acquire(blocking=False), True)
        lock.release()
        self.assertIs(lock.acquire(timeout=5), True)
        lock.release()
        self.assertIs(lock.acquire(timeout=None), True)
        lock.release()
        self.assertEqual(lock.info()["acquisitions"], 4)
        with self.assertRaises(ValueError):
            lock.acquire(blocking=False, timeout=1)
        with self.assertRaises(ValueError):
            lock.acquire(timeout=-2)
        with self.assertRaises(ValueError):
            lock.acquire(timeout=float("nan"))
        with self.assertRaises(TypeError):
            lock.acquire(timeout="1")
        self.assertFalse(lock.locked())

    def test_algorithm_chosen_at_creation(self):
        self.assertEqual(self.region.lock("a").algorithm, "black-white")
        self.assertEqual(self.region.lock("b", algo="jayanti").algorithm, "jayanti")
        self.assertEqual(self.region.lock("b").algorithm, "jayanti")
        with self.assertRaises(bakery.AlgorithmMismatch) as cm:
            self.region.lock("b", algo="lamport")
        self.assertEqual(cm.exception.code, _native.EALGO)
        # the lock's algorithm and the one asked for, as the tool says it
        self.assertEqual(str(cm.exception), "%s b: the lock uses jayanti; algo='lamport' "
                         "cannot take part in it" % self.name)
        with self.assertRaises(bakery.AlgorithmMismatch) as cm:
            self.region.lock("a", algo="boulangerie")
        self.assertEqual(cm.exception.message, "the lock uses black-white; "
                         "algo='boulangerie' cannot take part in it")
        # lamport and boulangerie take part in one lock
        self.region.lock("c", algo="lamport")
        self.assertEqual(self.region.lock("c", algo="boulangerie").algorithm, "lamport")

    def test_creation_settings(self):
        name = region_name()
        with bakery.Region(name, create=True, slots=8, locks=3, mode=0o640) as r:
            self.addCleanup(bakery.unlink, name)
            s = r.status()
            self.assertEqual((s["slots_capacity"], s["locks_capacity"], s["mode"]),
                             (8, 3, "0640"))
            for i in range(3):
                r.lock("l%d" % i)
            with self.assertRaises(bakery.LockTableFull):
                r.lock("one-too-many")
        self.assertTrue(r.closed)

    def test_exclusive_creation(self):
        with self.assertRaises(bakery.Exists) as cm:
            bakery.Region(self.name, create=True, exclusive=True)
        self.assertIsInstance(cm.exception, FileExistsError)
        self.assertEqual(cm.exception.errno, errno.EEXIST)

    def test_unlink_lock_frees_its_entry(self):
        name = region_name()
        with bakery.Region(name, create=True, locks=1) as r:
            self.addCleanup(bakery.unlink, name)
            typo = r.lock("typo")
            with typo:
                with self.assertRaises(bakery.Busy):
                    r.unlink_lock("typo")
            with self.assertRaises(bakery.LockTableFull):
                r.lock("meant")
            r.unlink_lock("typo")
            with self.assertRaises(bakery.NotFound):
                r.unlink_lock("typo")
            meant = r.lock("meant")
            with meant:
                with self.assertRaises(bakery.LockRemoved) as cm:
                    typo.acquire()
            self.assertEqual(cm.exception.code, _native.EREMOVED)
            self.assertEqual([lk["name"] for lk in r.status()["locks"]], ["meant"])

    def test_recover_finds_nothing_to_reap(self):
        self.assertEqual(self.region.recover(), 0)

    def test_status_is_the_tools_json(self):
        bakery_tool = tool()
        if not bakery_tool:
            self.skipTest("the build's tools/bakery is not known (top_builddir)")
        self.region.lock("first", algo="lamport")
        lock = self.region.lock("we\"ird\\name")
        with lock:
            out = subprocess.run([bakery_tool, "status", self.name, "--json"],
                                 check=True, stdout=subprocess.PIPE).stdout
            mine = self.region.status()
        self.assertEqual(mine, json.loads(out))
        self.assertEqual(len(mine["locks"]), 2)
        self.assertEqual(mine["slots"][0]["lock"], "we\"ird\\name")

    def test_status_queue_is_the_tools_json(self):
        bakery_tool = tool()
        if not bakery_tool:
            self.skipTest("the build's tools/bakery is not known (top_builddir)")
        lock = self.region.lock("line")
        waiter = self.region.lock("line")
        with lock:
            t = threading.Thread(target=lambda: (waiter.acquire(), waiter.release()))
            t.start()
            deadline = time.monotonic() + 20
            while not self.region.status()["locks"][0]["queue"] and time.monotonic() < deadline:
                time.sleep(0.01)
            out = subprocess.run([bakery_tool, "status", self.name, "--json"],
                                 check=True, stdout=subprocess.PIPE).stdout
            mine = self.region.status()
        t.join()
        self.assertEqual(mine, json.loads(out))
        queue = mine["locks"][0]["queue"]
        self.assertEqual(len(queue), 1)
        self.assertEqual(queue[0]["pid"], os.getpid())
        self.assertNotEqual(queue[0]["slot"], mine["locks"][0]["holder"])
        self.assertEqual(self.region.status()["locks"][0]["queue"], [])

    def test_unlink_keeps_open_region_working(self):
        lock = self.region.lock("l")
        bakery.unlink(self.name)
        with lock:
            pass
        with self.assertRaises(bakery.NotFound):
            bakery.Region(self.name)

    def test_pickle_reopens_by_name(self):
        lock = self.region.lock("p", algo="lamport")
        copy = pickle.loads(pickle.dumps(lock))
        self.assertIsNot(copy.region, self.region)
        self.assertEqual((copy.region.name, copy.name), (self.name, "p"))
        with copy:
            self.assertTrue(lock.locked())
        region = pickle.loads(pickle.dumps(self.region))
        self.assertEqual(region.name, self.name)
        region.close()
        copy.region.close()

    def test_unpickling_a_removed_lock_raises_removed(self):
        lock = self.region.lock("gone", holders=2)
        data = pickle.dumps(lock)
        lock.close()
        self.region.unlink_lock("gone")
        with self.assertRaises(bakery.LockRemoved) as cm:
            pickle.loads(data)
        self.assertIn("gone", str(cm.exception))
        # not made anew
        self.assertEqual([entry["name"] for entry in self.region.status()["locks"]], [])
        # a lock of that name made since is joined, with its own settings
        self.region.lock("gone", holders=3)
        with self.assertRaises(bakery.AlgorithmMismatch) as cm:
            pickle.loads(data)
        self.assertEqual(cm.exception.message,
                         "the lock admits 3 holders; holders=2 cannot take part in it")
        self.region.unlink_lock("gone")
        self.region.lock("gone", holders=2)
        self.assertEqual(pickle.loads(data).capacity, 2)


class TestVersionAndConstants(unittest.TestCase):

    def test_version_is_the_librarys(self):
        with open(os.path.join(SRCDIR, "configure.ac")) as f:
            version = re.search(r"AC_INIT\(\[libbakery\], \[([^]]+)\]", f.read()).group(1)
        self.assertEqual(bakery.library_version(), version)
        self.assertEqual(bakery.__version__, version)
        # NEWS has an entry for it, and debian/changelog (not in release
        # tarballs) follows
        with open(os.path.join(SRCDIR, "NEWS")) as f:
            self.assertIn("\n* %s " % version, f.read())
        changelog = os.path.join(SRCDIR, "debian", "changelog")
        if os.path.exists(changelog):
            with open(changelog) as f:
                self.assertTrue(f.readline().startswith("libbakery (%s)" % version))

    def test_constants_are_the_headers(self):
        with open(os.path.join(SRCDIR, "lib", "bakery.h")) as f:
            header = f.read()

        def define(name):
            return re.search(r"#define %s\s+([^/\n]+)" % name, header).group(1).strip()

        self.assertEqual(_native.ERRBASE, int(define("BAKERY_ERRBASE").strip("()")))
        for name in ("EBADREGION", "EVERSION", "EALGO", "ESLOTS", "ELOCKS", "EREMOVED",
                     "EREGIONS"):
            offset = int(re.search(r"- (\d+)", define("BAKERY_" + name)).group(1))
            self.assertEqual(getattr(_native, name), _native.ERRBASE - offset, name)
        self.assertEqual(_native.LOCK_NAME_MAX, int(define("BAKERY_LOCK_NAME_MAX")))
        self.assertEqual(_native.MAX_SLOTS, int(define("BAKERY_MAX_SLOTS").rstrip("u")))
        self.assertEqual(_native.MAX_LOCKS, int(define("BAKERY_MAX_LOCKS").rstrip("u")))
        self.assertEqual(_native.CREATE, int(define("BAKERY_CREATE").rstrip("u"), 16))
        self.assertEqual(_native.EXCL, int(define("BAKERY_EXCL").rstrip("u"), 16))
        self.assertEqual(_native.NORECOVER, int(define("BAKERY_NORECOVER").rstrip("u"), 16))
        self.assertEqual(_native.ANY_OWNER, int(define("BAKERY_ANY_OWNER").rstrip("u"), 16))
        self.assertEqual(_native.RDONLY, int(define("BAKERY_RDONLY").split()[0].rstrip("u"), 16))
        self.assertEqual(_native.MAX_THREAD_REGIONS,
                         int(define("BAKERY_MAX_THREAD_REGIONS").rstrip("u")))
        for name in ("SHARED", "TRY", "INTR"):
            self.assertEqual(getattr(_native, "ACQUIRE_" + name),
                             int(define("BAKERY_ACQUIRE_" + name).rstrip("u"), 16), name)
        self.assertEqual(_native.ACQUIRE_POLL_MS, int(define("BAKERY_ACQUIRE_POLL_MS")))
        self.assertEqual(_native.LOCK_BIASED, int(define("BAKERY_LOCK_BIASED").rstrip("u"), 16))

    def test_bad_library_path_is_a_clear_import_error(self):
        env = dict(os.environ, BAKERY_LIBRARY="/nonexistent/libbakery.so")
        run = subprocess.run([sys.executable, "-c", "import bakery"], env=env,
                             stderr=subprocess.PIPE)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn(b"ImportError: bakery: cannot load the libbakery C library", run.stderr)


class TestExceptions(unittest.TestCase):

    def test_every_code_has_its_class_and_text(self):
        cases = {
            _native.EBADREGION: bakery.BadRegion, _native.EVERSION: bakery.VersionMismatch,
            _native.EALGO: bakery.AlgorithmMismatch, _native.ESLOTS: bakery.NoFreeSlot,
            _native.ELOCKS: bakery.LockTableFull, _native.EREMOVED: bakery.LockRemoved,
            _native.EREGIONS: bakery.TooManyRegions,
            errno.EOWNERDEAD: bakery.OwnerDead,
            errno.ENOTRECOVERABLE: bakery.NotRecoverable, errno.ETIMEDOUT: bakery.Timeout,
            errno.ENOENT: bakery.NotFound, errno.EEXIST: bakery.Exists,
            errno.EACCES: bakery.PermissionDenied, errno.EPERM: bakery.PermissionDenied,
            errno.EBUSY: bakery.Busy, errno.EDEADLK: bakery.Deadlock,
            errno.EINVAL: bakery.InvalidArgument, errno.ENOMEM: bakery.OutOfMemory,
            errno.EIO: bakery.ErrnoError, _native.ERRBASE - 99: bakery.LibraryError,
        }
        from bakery.errors import make_error
        for code, cls in cases.items():
            e = make_error(code, "/r")
            self.assertIs(type(e), cls, code)
            self.assertIsInstance(e, bakery.Error)
            self.assertEqual(e.code, code)
            self.assertEqual(e.message, _native.lib.bakery_strerror(code).decode())
            self.assertEqual(str(e), "/r: " + e.message)
            self.assertEqual(isinstance(e, OSError), code > 0, code)
            if code > 0:
                self.assertEqual((e.errno, e.strerror), (code, e.message))
            back = pickle.loads(pickle.dumps(e))
            self.assertEqual((type(back), back.code, str(back)), (cls, code, str(e)))
        self.assertIn("died", str(make_error(errno.EOWNERDEAD)))
        self.assertTrue(issubclass(bakery.Timeout, TimeoutError))
        self.assertTrue(issubclass(bakery.NotFound, FileNotFoundError))
        self.assertTrue(issubclass(bakery.InvalidArgument, ValueError))


class TestBadInput(RegionTest):

    def assert_invalid(self, fn, *args, **kwargs):
        with self.assertRaises(bakery.InvalidArgument) as cm:
            fn(*args, **kwargs)
        self.assertIn(cm.exception.code, (errno.EINVAL, errno.ENAMETOOLONG))
        return cm.exception

    def test_bad_region_names(self):
        self.assert_invalid(bakery.Region, "", create=True)
        self.assert_invalid(bakery.Region, "/", create=True)
        e = self.assert_invalid(bakery.Region, "a/b", create=True)
        # the name as given, and what is wrong with it (not "/a/b: Invalid argument")
        self.assertIn("'a/b'", str(e))
        self.assertIn("invalid region name", str(e))
        self.assertIn("invalid region name", str(self.assert_invalid(bakery.unlink, "a/b")))
        self.assertIn("invalid region name", str(self.assert_invalid(bakery.region_layout, "")))
        e = self.assert_invalid(bakery.Region, "x" * 300, create=True)
        self.assertEqual(e.code, errno.ENAMETOOLONG)
        self.assertIn("at most 200 characters", str(e))
        # 200 characters after the slash are allowed: the limit is said right
        base = region_name().lstrip("/")
        longest = "/" + base + "n" * (200 - len(base))
        with bakery.Region(longest, create=True, exclusive=True):
            bakery.unlink(longest)
        e = self.assert_invalid(bakery.Region, longest + "n", create=True)
        self.assertEqual(e.code, errno.ENAMETOOLONG)
        e = self.assert_invalid(bakery.Region, self.name + "\0tail")
        self.assertIn("NUL", str(e))
        self.assert_invalid(bakery.unlink, "a\0b")
        with self.assertRaises(TypeError):
            bakery.Region(42)
        with self.assertRaises(TypeError):
            bakery.unlink(None)
        with self.assertRaises(bakery.NotFound):
            bakery.Region(region_name())
        with self.assertRaises(bakery.NotFound):
            bakery.unlink(region_name())

    def test_bad_creation_settings(self):
        name = region_name()
        self.assert_invalid(bakery.Region, name, create=True, slots=0)
        self.assert_invalid(bakery.Region, name, create=True, slots=-1)
        self.assert_invalid(bakery.Region, name, create=True, locks=1 << 40)
        self.assert_invalid(bakery.Region, name, create=True, mode=0o10000)
        for mode in (0o777, 0o700, 0o4600, 0):
            e = self.assert_invalid(bakery.Region, name, create=True, mode=mode)
            self.assertIn("within 0o666", str(e))
        self.assert_invalid(bakery.Region, name, exclusive=True)
        with self.assertRaises(TypeError):
            bakery.Region(name, create=True, slots="8")
        with self.assertRaises(bakery.NotFound):
            bakery.Region(name)     # nothing was created on the way

    def test_bad_lock_names_and_algorithms(self):
        self.assert_invalid(self.region.lock, "")
        self.assert_invalid(self.region.lock, "a/b")
        self.assert_invalid(self.region.lock, "tab\there")
        self.assert_invalid(self.region.lock, "x" * 64)
        self.assert_invalid(self.region.lock, "nul\0")
        self.assert_invalid(self.region.lock, "l", algo="quicksort")
        self.assert_invalid(self.region.lock, "l", algo="lamport\0")
        with self.assertRaises(TypeError):
            self.region.lock(b"bytes")
        with self.assertRaises(TypeError):
            self.region.lock("l", algo=1)
        self.assertEqual(self.region.status()["locks"], [])
        self.region.lock("x" * 63)      # the longest name is fine

    def test_not_a_region(self):
        if not os.path.isdir("/dev/shm"):
            self.skipTest("no /dev/shm")
        cases = {"empty": b"", "byte": b"x", "zeros": bytes(8192),
                 "text": b"not a bakery region\n" * 1000, "random": os.urandom(65536)}
        for what, content in cases.items():
            name = region_name()
            path = "/dev/shm" + name
            with open(path, "wb") as f:
                f.write(content)
            self.addCleanup(os.unlink, path)
            with self.assertRaises(bakery.BadRegion, msg=what) as cm:
                bakery.Region(name)
            self.assertEqual(cm.exception.code, _native.EBADREGION)
            self.assertIn(name, str(cm.exception))
            with self.assertRaises(bakery.BadRegion, msg=what):
                bakery.Region(name, create=True)

    def test_closed_objects(self):
        lock = self.region.lock("l")
        lock.close()
        lock.close()                    # twice is fine
        for call in (lock.acquire, lock.release, lock.consistent, lock.info, lock.locked,
                     lock.__enter__, lambda: lock.acquire(blocking=False)):
            with self.assertRaises(bakery.Closed) as cm:
                call()
            self.assertEqual(cm.exception.code, errno.EBADF)
            self.assertIsInstance(cm.exception, ValueError)
        other = self.region.lock("m")
        self.region.close()
        self.assertTrue(other.closed)   # a region closes its locks first
        for call in (lambda: self.region.lock("n"), self.region.status, self.region.recover,
                     other.acquire):
            with self.assertRaises(bakery.Closed):
                call()
        self.assertIn("closed", repr(self.region))

    def test_misuse_of_held_and_unheld_locks(self):
        lock = self.region.lock("l")
        with self.assertRaises(bakery.PermissionDenied) as cm:
            lock.release()
        self.assertEqual(cm.exception.code, errno.EPERM)
        # the cause of this call's EPERM, not every call's
        self.assertEqual(str(cm.exception),
                         "%s l: the calling thread does not hold this lock" % self.name)
        with self.assertRaises(bakery.PermissionDenied) as cm:
            lock.consistent()
        self.assertNotIn("another user", str(cm.exception))
        self.assertIn("does not hold this lock", str(cm.exception))
        with lock:
            with self.assertRaises(bakery.Deadlock):
                lock.acquire()
            with self.assertRaises(bakery.Deadlock):
                lock.acquire(blocking=False)
            with self.assertRaises(bakery.InvalidArgument):
                lock.consistent()       # not in the owner-died state
            with self.assertRaises(bakery.Busy):
                lock.close()
            with self.assertRaises(bakery.Busy):
                self.region.close()
            self.assertFalse(lock.closed)
        self.assertEqual(lock.info()["state"], "ok")
        self.region.close()
        self.assertTrue(lock.closed)


class TestRegionLayout(RegionTest):
    """bakery.region_layout(): a region's layout version, and whether this
    library reads it, as `bakery list` says them."""

    def patch_header(self, offset: int, data: bytes) -> None:
        """DATA over the region's header at OFFSET, as tools/test-cli.sh
        patches it: the layout version is the 32-bit word at 8, the magic
        the 64-bit word at 0 (its low bytes tell one kind of header from
        another)."""
        if not os.path.isdir("/dev/shm"):
            self.skipTest("no /dev/shm")
        with open("/dev/shm" + self.name, "r+b") as f:
            f.seek(offset)
            f.write(data)

    def assert_as_listed(self, layout):
        """LAYOUT is what `bakery list --json` says of the region."""
        bakery_tool = tool()
        if bakery_tool is None:
            return
        out = subprocess.run([bakery_tool, "list", "--json"], stdout=subprocess.PIPE,
                             check=True)
        row = next(r for r in json.loads(out.stdout.decode()) if r["region"] == self.name)
        self.assertEqual(layout, (row["layout_version"], row["compatible"]))

    def test_a_region_of_this_layout(self):
        layout = bakery.region_layout(self.name)
        self.assertEqual(layout, (self.region.status()["version"], True))
        self.assertEqual(bakery.region_layout(self.name[1:]), layout)   # without its '/'
        self.assertEqual(bakery.region_layout(os.fsencode(self.name)), layout)
        self.assert_as_listed(layout)

    def test_a_region_of_another_layout_version(self):
        self.patch_header(8, (3).to_bytes(4, sys.byteorder))
        self.assertEqual(bakery.region_layout(self.name), (3, False))
        self.assert_as_listed((3, False))
        with self.assertRaises(bakery.VersionMismatch):
            bakery.Region(self.name)

    def test_a_header_of_another_kind(self):
        self.patch_header(0, b"\x02")
        self.assertEqual(bakery.region_layout(self.name), (None, False))
        self.assert_as_listed((None, False))

    def test_no_such_region(self):
        name = region_name()
        with self.assertRaises(bakery.NotFound) as cm:
            bakery.region_layout(name)
        self.assertEqual(cm.exception.code, errno.ENOENT)
        self.assertIn(name, str(cm.exception))

    def test_not_a_region_and_bad_names(self):
        if not os.path.isdir("/dev/shm"):
            self.skipTest("no /dev/shm")
        name = region_name()
        with open("/dev/shm" + name, "wb") as f:
            f.write(b"not a bakery region\n" * 100)
        self.addCleanup(os.unlink, "/dev/shm" + name)
        with self.assertRaises(bakery.BadRegion):
            bakery.region_layout(name)
        for bad in ("", "/", "a/b", "x" * 300):
            with self.assertRaises(bakery.InvalidArgument, msg=bad):
                bakery.region_layout(bad)
        with self.assertRaises(bakery.InvalidArgument):
            bakery.region_layout("/a\0b")
        with self.assertRaises(TypeError):
            bakery.region_layout(3)


class TestThreads(RegionTest):

    def test_each_thread_its_own_slot_and_exclusion(self):
        lock = self.region.lock("t")
        inside = []                     # occupancy: who is in the critical section
        violations = []
        tids = set()

        def work():
            tids.add(threading.get_native_id())
            for _ in range(200):
                with lock:
                    inside.append(1)
                    if len(inside) != 1:
                        violations.append(len(inside))
                    inside.pop()

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(violations, [])
        self.assertEqual(lock.info()["acquisitions"], 800)
        self.assertEqual(len(tids), 4)

    def test_a_thread_waits_for_another(self):
        lock = self.region.lock("t")
        held, release = threading.Event(), threading.Event()
        results = {}

        def holder():
            with lock:
                results["tid"] = threading.get_native_id()
                held.set()
                release.wait()

        def waiter_work():
            results["got"] = lock.acquire()
            lock.release()

        t = threading.Thread(target=holder, daemon=True)
        waiter = threading.Thread(target=waiter_work, daemon=True)
        t.start()
        try:
            held.wait()
            slots = self.region.status()["slots"]
            self.assertEqual([s["tid"] for s in slots], [results["tid"]])
            self.assertIs(lock.acquire(blocking=False), False)  # held by the other thread
            with self.assertRaises(bakery.PermissionDenied):
                lock.release()
            # a call running in another thread keeps the handle from being freed
            waiter.start()
            wait_until(lambda: lock.info()["waiters"] == 1, "the waiter to queue")
            with self.assertRaises(bakery.Busy):
                lock.close()
        finally:
            release.set()
            t.join()
            if waiter.ident is not None:      # started
                waiter.join()
        self.assertIs(results["got"], True)
        self.assertEqual(lock.info()["acquisitions"], 2)
        self.assertEqual(lock.info()["owner_deaths"], 0)

    def test_refused_close_changes_nothing(self):
        # another thread holds a lock of the region: Busy, and every lock
        # stays open, so that its holder can still release
        lock, other = self.region.lock("t"), self.region.lock("u")
        held, release = threading.Event(), threading.Event()
        errors = []

        def holder():
            try:
                with lock:
                    held.set()
                    release.wait()
            except Exception as e:
                errors.append(e)

        t = threading.Thread(target=holder)
        t.start()
        try:
            held.wait()
            with self.assertRaises(bakery.Busy) as cm:
                self.region.close()
            self.assertIn("holds lock 't'", str(cm.exception))
            self.assertEqual((lock.closed, other.closed, self.region.closed),
                             (False, False, False))
        finally:
            release.set()
            t.join()
        self.assertEqual(errors, [])            # its with block released
        self.assertFalse(lock.locked())
        self.region.close()
        self.assertEqual((lock.closed, other.closed), (True, True))

    def close_while_another_thread_holds(self, lock, take):
        """LOCK.close() while another thread is inside TAKE() (a context
        manager): Busy, nothing closed, and that thread's release goes
        through; then the lock is free and ok (no OwnerDead) and closes."""
        held, release = threading.Event(), threading.Event()
        errors = []

        def holder():
            try:
                with take():
                    held.set()
                    release.wait(30)
            except BaseException as e:      # its release failed (Closed)
                errors.append(e)

        t = threading.Thread(target=holder)
        t.start()
        try:
            self.assertTrue(held.wait(30))
            with self.assertRaises(bakery.Busy) as cm:
                lock.close()
            self.assertIn("of this process holds it", str(cm.exception))
            self.assertFalse(lock.closed)
        finally:
            release.set()
            t.join()
        self.assertEqual(errors, [])
        info = lock.info()
        self.assertEqual((info["holder"], info["state"]), (None, "ok"))
        with lock:                          # no OwnerDead
            pass
        lock.close()
        self.assertTrue(lock.closed)

    def test_lock_close_refused_while_another_thread_holds_it(self):
        # the C call refuses only for the calling thread; a close that went
        # through would fail the holder's release (Closed), keep the lock
        # held until that thread exits and tell the next acquirer OwnerDead
        lock = self.region.lock("mutex")
        self.close_while_another_thread_holds(lock, lambda: lock)

    def test_lock_close_refused_while_another_thread_reads_it(self):
        lock = self.region.lock("rw", "lamport")
        self.close_while_another_thread_holds(lock, lock.read)

    def test_lock_close_refused_while_held_beside_a_lower_lock(self):
        # the holder's slot names the lower-numbered lock it holds too
        first, second = self.region.lock("first"), self.region.lock("second")

        @contextlib.contextmanager
        def both():
            with first, second:
                yield

        self.close_while_another_thread_holds(second, both)


class TestRegionsPerThread(unittest.TestCase):

    def test_one_region_too_many_for_a_thread(self):
        n = _native.MAX_THREAD_REGIONS + 1
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < n + 64:
            if hard != resource.RLIM_INFINITY and hard < n + 64:
                self.skipTest("%d descriptors at most" % hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64, hard))
            self.addCleanup(resource.setrlimit, resource.RLIMIT_NOFILE, (soft, hard))
        regions = []
        self.addCleanup(self._remove, regions)
        for _ in range(n):
            region = bakery.Region(region_name(), create=True, exclusive=True, slots=1, locks=1)
            regions.append(region)
        outcome = []

        def take_each():                # a fresh thread: in no region yet
            for region in regions:
                try:
                    with region.lock("l"):
                        pass
                except bakery.Error as e:
                    outcome.append(e)
                    return
                outcome.append(None)

        t = threading.Thread(target=take_each)
        t.start()
        t.join()
        self.assertEqual(len(outcome), n)
        self.assertEqual(outcome[:-1], [None] * (n - 1))
        e = outcome[-1]
        self.assertIsInstance(e, bakery.TooManyRegions)
        self.assertIsInstance(e, bakery.LibraryError)
        self.assertNotIsInstance(e, OSError)         # not "too many open files"
        self.assertEqual(e.code, _native.EREGIONS)
        self.assertIn("BAKERY_MAX_THREAD_REGIONS", str(e))
        self.assertIn("robust-list", str(e))

    @staticmethod
    def _remove(regions):
        for region in regions:
            region.close()
            bakery.unlink(region.name)


if __name__ == "__main__":
    unittest.main()
