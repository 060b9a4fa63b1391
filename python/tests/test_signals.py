# SPDX-License-Identifier: MIT
"""Signals while the main thread waits for a lock (Ctrl-C, a SIGALRM whose
handler raises): the wait ends, the exception propagates with the lock not
held and the waiter out of line, and the next one gets the lock at once; a
handler that returns leaves the waiter's place in line as it was; an
exception that comes just as the lock was taken does not leave it held.
Each waiter is a child interpreter of its own, signalled for real while
this process holds the lock."""

import os
import queue
import signal
import subprocess
import sys
import threading
import time
import unittest

import bakery

from support import (CHILD_TIMEOUT, FORK, LockTest, RegionTest, hold_until, join, take_in_turn,
                     wait_until)
OUTCOME_TIMEOUT = 60.0      # how long a signalled waiter may take to say how it ended

# The waiter: reports "ready", waits in `with lock:` (the lock "l" of the
# region, or with "path=FILE" for the region, FILE's PathLock), then reports how it
# ended, whether it holds the lock and whether it is still in line, and
# waits for a line on stdin before it exits (the parent looks meanwhile).
WAITER = r"""
import os, signal, sys, threading, time
import bakery

region_name, mode, log = sys.argv[1], sys.argv[2], sys.argv[3]
if region_name.startswith("path="):     # a PathLock, and the lock it is
    lock = bakery.PathLock(region_name[len("path="):])
    info = lock.info()
    line = bakery.Region(info["region"]).lock(info["lock"])
else:
    lock = line = bakery.Region(region_name).lock("l")
handled = []


def on_alarm(signum, frame):
    raise TimeoutError("alarm")


def on_usr1(signum, frame):
    handled.append(signum)


signal.signal(signal.SIGALRM, on_alarm)
signal.signal(signal.SIGUSR1, on_usr1)
if mode == "other-thread":
    # SIGINT reaches another thread, whose C-level handler only sets
    # Python's flag: the main thread's sleep is not interrupted
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
print("ready", flush=True)
# The signal may come at any point, also after the with statement (the
# lock given back) and before the late ones are ignored: all of that is in
# the try, and the lock call is made once.  (Each test sends one signal.)
outcome = None
while True:
    try:
        if outcome is None:
            with lock:
                with open(log, "a") as f:
                    f.write("%d\n" % os.getpid())
            outcome = "entered"
        for late in (signal.SIGINT, signal.SIGALRM):    # one that comes late: no matter
            signal.signal(late, signal.SIG_IGN)
        break
    except KeyboardInterrupt:
        outcome = outcome or "KeyboardInterrupt"
    except TimeoutError:
        outcome = outcome or "alarm"
info = line.info()
mine = [h for h in info["holders"] if h["pid"] == os.getpid()] or getattr(lock, "is_locked", 0)
queued = [q for q in info["queue"] if q["pid"] == os.getpid()]
print(outcome, "holds" if mine else "free", "queued" if queued else "out",
      "handled=%d" % len(handled), flush=True)
sys.stdin.readline()
"""


class Waiter:
    """A child interpreter running WAITER (on LOCK, as WAITER's first
    argument, if given), and its lines."""

    def __init__(self, test, mode="plain", lock=None):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WAITER, lock or test.name, mode, test.log],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, universal_newlines=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        test.addCleanup(self.finish)
        self.pid = self.proc.pid
        self.expect("ready")

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.strip())

    def expect(self, what, timeout=CHILD_TIMEOUT):
        """The child's next line, which starts with WHAT."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("child %d said nothing within %g s (waiting for %r)"
                                 % (self.pid, timeout, what)) from None
        if not line.startswith(what):
            raise AssertionError("child %d said %r, not %r" % (self.pid, line, what))
        return line

    def finish(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("\n")
                self.proc.stdin.flush()
                self.proc.wait(CHILD_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()
        return self.proc.returncode


class SignalTest(LockTest):

    def wait_in_line(self, waiter):
        wait_until(lambda: (self.slot_of(waiter.pid) or {}).get("pass") == "waiting",
                   "child %d to wait in line" % waiter.pid)

    def interrupt_waiter(self, mode, signum, outcome):
        """A waiter in line behind this process, signalled: it leaves the
        line, the exception propagates, the lock is not held."""
        self.lock.acquire()
        try:
            waiter = Waiter(self, mode)
            self.wait_in_line(waiter)
            os.kill(waiter.pid, signum)
            self.assertEqual(waiter.expect(outcome, OUTCOME_TIMEOUT),
                             outcome + " free out handled=0")
            self.assertEqual(self.in_line(waiter.pid), 0)
            self.assertEqual(self.lock.info()["waiters"], 0)
        finally:
            self.lock.release()
        self.assert_free_for_a_third_party(self.lock)
        self.assertEqual(waiter.finish(), 0)
        with open(self.log) as f:
            self.assertEqual(f.read(), "")          # the with body never ran

    def test_ctrl_c_while_waiting(self):
        self.interrupt_waiter("plain", signal.SIGINT, "KeyboardInterrupt")

    def test_sigalrm_handler_that_raises(self):
        self.interrupt_waiter("plain", signal.SIGALRM, "alarm")

    def test_ctrl_c_caught_by_another_thread(self):
        # the main thread's sleep is never interrupted: the wait looks at
        # Python's handlers every BAKERY_ACQUIRE_POLL_MS all the same
        self.interrupt_waiter("other-thread", signal.SIGINT, "KeyboardInterrupt")

    def test_handler_that_returns_keeps_the_place_in_line(self):
        self.lock.acquire()
        try:
            waiter = Waiter(self)
            self.wait_in_line(waiter)
            behind = FORK.Process(target=take_in_turn, args=(self.lock, self.log))
            behind.start()
            self.addCleanup(behind.join)
            wait_until(lambda: self.lock.info()["waiters"] == 2, "a second waiter")
            for _ in range(3):
                os.kill(waiter.pid, signal.SIGUSR1)
                time.sleep(0.1)
            queue_pids = [q["pid"] for q in self.lock.info()["queue"]]
            self.assertEqual(queue_pids, [waiter.pid, behind.pid])
        finally:
            self.lock.release()
        self.assertEqual(waiter.expect("entered"), "entered free out handled=3")
        self.assertEqual(join(behind), 0)
        self.assertEqual(self.log_order(), [waiter.pid, behind.pid])
        self.assertEqual(waiter.finish(), 0)

    def test_ctrl_c_as_the_lock_is_handed_over(self):
        # released, and the waiter signalled at once: the exception comes
        # while it waits, or just after it took the lock; either way it
        # propagates with the lock not held
        for _ in range(5):
            self.lock.acquire()
            waiter = Waiter(self)
            self.wait_in_line(waiter)
            self.lock.release()
            os.kill(waiter.pid, signal.SIGINT)
            line = waiter.expect("")
            self.assertIn(line, ("KeyboardInterrupt free out handled=0",
                                 "entered free out handled=0"))
            self.assertEqual(self.lock.info()["holders"], [])
            self.assert_free_for_a_third_party(self.lock)
            self.assertEqual(waiter.finish(), 0)


class _Raiser:
    """Handle.call as it returns into a signal handler that raises: the
    call is made, its answer kept, then KeyboardInterrupt."""

    def __init__(self, handle, times=1):
        self.call, self.times = handle.call, times

    def __call__(self, answer, fn, *args):
        self.call(answer, fn, *args)
        if self.times:
            self.times -= 1
            raise KeyboardInterrupt


class TestExceptionAsTheCallReturns(RegionTest):
    """An exception raised the moment the C call returned (CPython runs
    signal handlers there): made to happen on purpose."""

    def test_lock_taken_is_released_before_it_propagates(self):
        lock = self.region.lock("l")
        for enter in (lock.__enter__, lock.acquire, lambda: lock.acquire(blocking=False),
                      lambda: lock.acquire(timeout=5), lock.read().__enter__):
            lock._handle.call = _Raiser(lock._handle)
            with self.assertRaises(KeyboardInterrupt):
                enter()
            del lock._handle.call
            self.assertEqual(lock.info()["holders"], [])
            self.assertIs(lock.acquire(blocking=False), True)
            lock.release()

    def test_release_interrupted_still_releases(self):
        lock = self.region.lock("l")
        with self.assertRaises(KeyboardInterrupt):
            with lock:
                lock._handle.call = _Raiser(lock._handle)
        del lock._handle.call
        self.assertEqual(lock.info()["holders"], [])

    def test_owner_dead_is_kept_and_raised(self):
        lock = self.region.lock("l")
        killer = FORK.Process(target=_hold_and_die, args=(lock,))
        killer.start()
        self.assertEqual(join(killer), -signal.SIGKILL)
        lock._handle.call = _Raiser(lock._handle)
        with self.assertRaises(bakery.OwnerDead) as cm:
            with lock:
                self.fail("the with body ran")
        del lock._handle.call
        self.assertIsInstance(cm.exception.__cause__, KeyboardInterrupt)
        self.assertEqual(lock.info()["state"], "owner-died")
        self.assertEqual(len(lock.info()["holders"]), 1)   # held here: repair, then
        cm.exception.lock.consistent()                      # consistent() releases
        self.assertEqual(lock.info()["holders"], [])
        self.assertEqual(lock.info()["state"], "ok")


class _RaiseOnEntering:
    """sys.setprofile: once the lock call's answer was appended (the
    ``extend`` of Handle.call returned), KeyboardInterrupt at the next
    Python function entered -- where CPython runs a pending handler."""

    def __init__(self):
        self.armed = self.raised = False

    def __call__(self, frame, event, arg):
        if event == "c_return" and getattr(arg, "__name__", "") == "extend":
            self.armed = True
        elif event == "call" and self.armed:
            sys.setprofile(None)
            self.raised = True
            raise KeyboardInterrupt


class TestExceptionAfterTheCall(RegionTest):
    """A handler that raises on the way from the lock call back to the
    caller, at the first Python function entered: either the exception
    propagates with the lock not held, or the call returns with the lock
    held; never the exception with the lock held."""

    def test_no_lock_held_behind_an_exception(self):
        lock = self.region.lock("l")
        for enter in (lock.__enter__, lock.acquire, lambda: lock.acquire(blocking=False),
                      lambda: lock.acquire(timeout=5), lock.read().__enter__):
            raiser = _RaiseOnEntering()
            took = False
            sys.setprofile(raiser)
            try:
                enter()
                took = True
            except KeyboardInterrupt:
                pass
            finally:
                sys.setprofile(None)
            holders = [h["pid"] for h in lock.info()["holders"]]
            self.assertEqual(holders, [os.getpid()] if took else [],
                             "acquired: %s, an exception raised: %s" % (took, raiser.raised))
            if took:
                lock.release()


class RaiseAtPoint:
    """sys.setprofile: KeyboardInterrupt at the Nth point, after the entry
    of the function named OUTER, where CPython may run a pending signal
    handler: a Python function entered ("call") or a C one returned
    ("c_return").  OUTER's own entry is the one point no Python code can
    cover (docs/python.md)."""

    def __init__(self, outer, n):
        self.outer, self.n = outer, n
        self.inside = self.raised = False
        self.seen = 0

    def __call__(self, frame, event, arg):
        if not self.inside:
            self.inside = event == "call" and frame.f_code.co_name == self.outer
            return
        if event in ("call", "c_return") and self.counts():
            self.seen += 1
            if self.seen == self.n:
                sys.setprofile(None)
                self.raised = True
                raise KeyboardInterrupt

    def counts(self):
        """Is this point one (all are, here; test_async's are a task's)?"""
        return True


def interrupted_everywhere(test, outer, take, give, held):
    """TAKE the lock, then GIVE it back (a call of OUTER) with a handler
    raising at each point inside in turn, until GIVE runs to its end: the
    lock is released whichever point it was (HELD() says if it still is)."""
    for n in range(1, 500):
        take()
        raiser = RaiseAtPoint(outer, n)
        sys.setprofile(raiser)
        try:
            give()
        except KeyboardInterrupt:
            pass
        finally:
            sys.setprofile(None)
        test.assertFalse(held(), "%s: still held after a handler raised at point %d"
                         % (outer, n))
        if not raiser.raised:
            test.assertGreater(n, 1, "%s: no point inside" % outer)
            return
    test.fail("%s: never ran to its end" % outer)


class TestExceptionInARelease(RegionTest):
    """A handler that raises anywhere in a release, past the first
    instruction of the function called, finds the lock released."""

    def held(self, lock):
        return lock.info()["holders"] != []

    def test_release(self):
        lock = self.region.lock("l")
        interrupted_everywhere(self, "release", lock.acquire, lock.release,
                               lambda: self.held(lock))

    def test_with_exit(self):
        lock = self.region.lock("l")
        interrupted_everywhere(self, "__exit__", lock.__enter__,
                               lambda: lock.__exit__(None, None, None), lambda: self.held(lock))

    def test_hold_exit(self):
        lock = self.region.lock("l")
        hold = lock.hold(timeout=5)
        interrupted_everywhere(self, "__exit__", hold.__enter__,
                               lambda: hold.__exit__(None, None, None), lambda: self.held(lock))


def _hold_and_die(lock):
    lock.acquire()
    os.kill(os.getpid(), signal.SIGKILL)


class TestSignalsElsewhere(RegionTest):

    def test_other_threads_wait_as_before(self):
        # only the main thread runs handlers: another thread's wait ends
        # when the lock is released, whatever the signals
        lock = self.region.lock("l")
        lock.acquire()
        got = []
        t = threading.Thread(target=lambda: got.append(lock.acquire(timeout=60)))
        t.start()
        wait_until(lambda: lock.info()["waiters"] == 1, "the thread to wait")
        old = signal.signal(signal.SIGUSR1, lambda *a: None)
        try:
            signal.pthread_kill(t.ident, signal.SIGUSR1)
            time.sleep(0.1)
            self.assertEqual(lock.info()["waiters"], 1)
        finally:
            signal.signal(signal.SIGUSR1, old)
            lock.release()
        t.join()
        self.assertEqual(got, [True])

    def test_unraisable_hook_of_the_application_still_called(self):
        seen = []
        old = sys.unraisablehook
        sys.unraisablehook = seen.append
        try:
            lock = self.region.lock("l")
            held, release = threading.Event(), threading.Event()
            t = threading.Thread(target=hold_until, args=(lock, held, release))
            t.start()
            held.wait()
            threading.Timer(0.2, release.set).start()
            with lock:                   # a wait: it wraps the hook
                pass
            t.join()

            class Noisy:
                def __del__(self):
                    raise ValueError("from __del__")

            Noisy()
            self.assertEqual([type(u.exc_value) for u in seen], [ValueError])
        finally:
            sys.unraisablehook = old

    def wait_once(self, lock):
        """One wait of the main thread for LOCK (a wait wraps the hook)."""
        held, release = threading.Event(), threading.Event()
        t = threading.Thread(target=hold_until, args=(lock, held, release))
        t.start()
        held.wait()
        threading.Timer(0.1, release.set).start()
        with lock:
            pass
        t.join()

    def test_hooks_installed_between_waits_all_chain(self):
        # the usual idiom: a hook that calls the one it replaced; one
        # installed before a wait and one after are both called, the
        # latest first, and the default is not
        calls = []
        old = sys.unraisablehook

        def chaining(tag):
            previous = sys.unraisablehook

            def hook(unraisable):
                calls.append(tag)
                if tag == "first":
                    return              # the end of the application's chain
                previous(unraisable)
            return hook

        try:
            lock = self.region.lock("l")
            sys.unraisablehook = chaining("first")
            self.wait_once(lock)
            sys.unraisablehook = chaining("second")
            self.wait_once(lock)

            class Noisy:
                def __del__(self):
                    raise ValueError("from __del__")

            Noisy()
            self.assertEqual(calls, ["second", "first"])
        finally:
            sys.unraisablehook = old


if __name__ == "__main__":
    unittest.main()
