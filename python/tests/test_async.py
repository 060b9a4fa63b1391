# SPDX-License-Identifier: MIT
"""asyncio: ``async with lock:`` and ``await lock.acquire_async()`` keep
their place in line (FIFO with other processes) while the event loop runs
other tasks; a task cancelled while it waits leaves the line, even as the
lock is handed to it, and never leaves the lock held; shared mode, time
limits, an owner death (repaired through the task), and the per-task
ownership of holds.  A KeyboardInterrupt at any point of a task's release
or acquisition, and a cancellation at any of their awaits, leave the lock
released, or held for the task only if the acquisition returned (or
raised OwnerDead)."""

import asyncio
import contextlib
import gc
import os
import random
import signal
import sys
import threading
import time
import unittest

import bakery
from bakery import _async

from support import (FORK, AsyncHelpers, LockTest, hold_forever, hold_until, join,
                     take_in_turn)
from test_signals import RaiseAtPoint


def _hold_and_die(lock, held):
    lock.acquire()
    held.set()
    os.kill(os.getpid(), signal.SIGKILL)


class AsyncTest(AsyncHelpers, LockTest):

    def holder(self, target=hold_until):
        """Another process that holds the lock; its release event (the
        others than hold_until do not wait for it: a process killed while
        it waits for a multiprocessing Event leaves the Event stuck)."""
        held, release = FORK.Event(), FORK.Event()
        args = (self.lock, held, release) if target is hold_until else (self.lock, held)
        proc = FORK.Process(target=target, args=args)
        proc.start()
        self.addCleanup(self._reap, proc, release if target is hold_until else None)
        self.assertTrue(held.wait(120))
        return proc, release

    @staticmethod
    def _reap(proc, release):
        if release is not None:
            release.set()
        elif proc.is_alive():
            proc.kill()
        proc.join(120)

    def ours_in_line(self):
        return self.in_line(os.getpid())

    async def waiting(self, coro):
        """A task running CORO, once it waits in line."""
        task = asyncio.create_task(coro)
        await self.until(lambda: self.ours_in_line() == 1, "the task to wait in line")
        return task


class TestWaiting(AsyncTest):

    def test_place_in_line_kept_while_the_loop_runs(self):
        proc, release = self.holder()
        ticks = []

        async def ticker(stop):
            while not stop.is_set():
                ticks.append(1)
                await asyncio.sleep(0.001)

        async def task():
            async with self.lock:
                with open(self.log, "a") as f:
                    f.write("%d\n" % os.getpid())

        async def main():
            stop = asyncio.Event()
            ticking = asyncio.create_task(ticker(stop))
            waiter = await self.waiting(task())
            before = len(ticks)
            await asyncio.sleep(0.2)
            self.assertGreater(len(ticks), before + 10)     # the loop ran meanwhile
            behind = FORK.Process(target=take_in_turn, args=(self.lock, self.log))
            behind.start()
            await self.until(lambda: self.lock.info()["waiters"] == 2, "a second waiter")
            release.set()
            await waiter
            stop.set()
            await ticking
            return behind

        behind = self.run_async(main())
        self.assertEqual(join(behind), 0)
        self.assertEqual(join(proc), 0)
        self.assertEqual(self.log_order(), [os.getpid(), behind.pid])
        self.assertEqual(self.lock.info()["holders"], [])

    def test_cancelled_while_waiting_leaves_the_line(self):
        proc, release = self.holder()

        async def main():
            waiter = await self.waiting(self.lock.acquire_async())
            waiter.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await waiter
            # out of line at once, before the holder lets go
            self.assertEqual(self.ours_in_line(), 0)
            self.assertEqual(self.lock.info()["waiters"], 0)

        self.run_async(main())
        release.set()
        self.assertEqual(join(proc), 0)
        self.assert_free_for_a_third_party(self.lock)

    def test_cancelled_as_the_lock_is_handed_over(self):
        rounds = {"held": 0, "cancelled": 0}
        for _ in range(20):
            proc, release = self.holder()

            async def main():
                async def task():
                    async with self.lock:
                        await asyncio.sleep(0)
                waiter = await self.waiting(task())
                release.set()                   # the holder lets go ...
                await asyncio.sleep(random.uniform(0, 0.01))
                waiter.cancel()                 # ... and the waiter is cancelled
                try:
                    await waiter
                    rounds["held"] += 1
                except asyncio.CancelledError:
                    rounds["cancelled"] += 1

            self.run_async(main())
            self.assertEqual(join(proc), 0)
            self.assertEqual(self.lock.info()["holders"], [])
            self.assertEqual(self.lock.info()["waiters"], 0)
            self.assert_free_for_a_third_party(self.lock)
        self.assertEqual(rounds["held"] + rounds["cancelled"], 20)
        if os.environ.get("BAKERY_TEST_VERBOSE"):
            # acquisitions by the holders (20) and third parties (20), by
            # the tasks that kept the lock, and by those cancelled just then
            print(rounds, "taken as cancelled:",
                  self.lock.info()["acquisitions"] - 40 - rounds["held"])

    def test_timeout_and_try(self):
        proc, release = self.holder()

        async def main():
            self.assertIs(await self.lock.acquire_async(timeout=0.1), False)
            self.assertIs(await self.lock.acquire_async(blocking=False), False)
            with self.assertRaises(bakery.Timeout):
                async with self.lock.hold(timeout=0.1):
                    self.fail("not acquired: the block must not run")
            self.assertEqual(self.lock.info()["waiters"], 0)
            release.set()
            self.assertIs(await self.lock.acquire_async(timeout=60), True)
            self.lock.release()

        self.run_async(main())
        self.assertEqual(join(proc), 0)
        self.assertEqual(self.lock.info()["holders"], [])


class TestHolds(AsyncTest):

    def test_readers_together_and_tasks_own_their_holds(self):
        async def main():
            inside, both = [], asyncio.Event()

            async def read():
                async with self.lock.read():
                    inside.append(1)
                    if len(inside) == 2:
                        both.set()
                    await asyncio.wait_for(both.wait(), 60)

            await asyncio.gather(read(), read())       # both inside at once
            self.assertEqual(self.lock.info()["holders"], [])
            # a task's hold: taken again by it, Deadlock; as with
            # asyncio.Lock, another task of the loop may release it
            self.assertIs(await self.lock.acquire_async(), True)
            with self.assertRaises(bakery.Deadlock):
                await self.lock.acquire_async()

            async def other_task():
                self.lock.release()

            await asyncio.create_task(other_task())
            self.assertFalse(self.lock.locked())
            # wait_for runs the acquisition in a task of its own (3.11)
            self.assertIs(await asyncio.wait_for(self.lock.acquire_async(), 60), True)
            self.lock.release()
            self.assertFalse(self.lock.locked())

        self.run_async(main())

    def test_hold_taken_by_a_waiting_thread_released_by_the_task(self):
        proc, release = self.holder()

        async def main():
            waiter = await self.waiting(self.lock.acquire_async())
            release.set()
            self.assertIs(await waiter, True)
            # held by the thread that waited, for the task
            holder = self.lock.info()["holders"][0]
            self.assertEqual(holder["pid"], os.getpid())
            with self.assertRaises(bakery.Busy):
                self.lock.close()
            with self.assertRaises(bakery.Busy):
                self.region.close()
            self.lock.release()               # (a synchronous call of the task)
            self.assertEqual(self.lock.info()["holders"], [])

        self.run_async(main())
        self.assertEqual(join(proc), 0)

    def test_owner_dead_repaired_through_the_task(self):
        for contended in (False, True):
            if contended:
                proc, _ = self.holder(hold_forever)
            else:
                proc, _ = self.holder(_hold_and_die)
                self.assertEqual(join(proc), -signal.SIGKILL)

            async def main():
                waiter = asyncio.create_task(self._enter_repair())
                if contended:
                    await self.until(lambda: self.ours_in_line() == 1, "the task to wait")
                    os.kill(proc.pid, signal.SIGKILL)
                return await waiter

            self.assertEqual(self.run_async(main()), "repaired")
            if contended:
                self.assertEqual(join(proc), -signal.SIGKILL)
            info = self.lock.info()
            self.assertEqual((info["holders"], info["state"]), ([], "ok"))

    async def _enter_repair(self):
        try:
            async with self.lock:
                return "entered"
        except bakery.OwnerDead as e:
            self.assertTrue(self.lock.locked())
            e.lock.consistent()               # repaired, and released (async with)
            return "repaired"


# --- an exception or a cancellation anywhere in a task's acquire or release --

class RaiseInTask(RaiseAtPoint):
    """RaiseAtPoint in an asyncio task: the points of the task's own steps.
    (Between them runs the event loop's code: an exception there ends the
    loop, and asyncio.run then cancels the task -- CancelWhileAwaiting.)"""

    def counts(self):
        return asyncio.current_task() is not None


class CancelWhileAwaiting:
    """sys.setprofile: the task is cancelled the Nth time the coroutine
    OUTER (the first entered) suspends at an await -- by a callback of the
    event loop, as another task's cancel() would be, so that asyncio
    delivers it at that await; not if OUTER's Nth return was its last (the
    caller sets ``over`` once it is)."""

    def __init__(self, outer, n):
        self.outer, self.n = outer, n
        self.frame = None
        self.seen = 0
        self.raised = self.over = False

    def __call__(self, frame, event, arg):
        if self.frame is None:
            if event == "call" and frame.f_code.co_name == self.outer:
                self.frame = frame
        elif event == "return" and frame is self.frame:
            self.seen += 1
            if self.seen == self.n:
                asyncio.get_running_loop().call_soon(self._cancel, asyncio.current_task())

    def _cancel(self, task):
        if not self.over:
            self.raised = task.cancel()


async def interrupted_in_a_task(test, injector, outer, take, give, check):
    """For N = 1, 2, ...: TAKE() (what GIVE needs), then GIVE(), with
    INJECTOR(OUTER, N) raising or cancelling at its Nth point, then
    CHECK(n, returned, value) -- VALUE what GIVE returned, or the exception
    it raised -- until GIVE runs to its end.  How many points it had."""
    task = asyncio.current_task()
    for n in range(1, 500):
        await take()
        injected = injector(outer, n)
        with steady_points():
            sys.setprofile(injected)
            try:
                returned, value = True, await give()
            except BaseException as e:  # (the check decides which may come)
                returned, value = False, e
            finally:
                sys.setprofile(None)
                injected.over = True
        if isinstance(value, asyncio.CancelledError) and hasattr(task, "uncancel"):
            task.uncancel()             # (3.11: caught here, the task goes on)
        await check(n, returned, value)
        if not injected.raised:
            return n - 1
    test.fail("%s: never ran to its end" % outer)


@contextlib.contextmanager
def steady_points():
    """The same points in every run: no collection, whose weakref callbacks
    would take points at random (an exception raised in one is dropped,
    the release it interrupted goes on); and a KeyboardInterrupt dropped
    so (by a callback of a reference that ran out) is not printed."""
    previous = sys.unraisablehook

    def hook(unraisable):
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous(unraisable)

    collecting = gc.isenabled()
    gc.disable()
    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous
        if collecting:
            gc.enable()


@contextlib.contextmanager
def time_limit(seconds):
    """AssertionError if the block (on the main thread) takes longer."""
    def expired(signum, frame):
        raise AssertionError("still waiting after %g seconds" % seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def holder_threads(lock):
    """The threads that hold LOCK for a task or wait for it (_async).  Not
    one that never ran: an exception inside Thread.start can leave its
    start-up stuck (the Event it waits for broken, taken by Python code)."""
    return [t for t in threading.enumerate()
            if t.name == "bakery holder of " + lock._what and t.is_alive()]


async def settled(lock):
    """True once LOCK's holder threads have ended (a hold given up is
    released by its thread, just after); False if one still runs after a
    few seconds: it keeps a hold nobody can release any more."""
    deadline = time.monotonic() + 3
    await asyncio.sleep(0)              # (the callbacks due run first)
    while holder_threads(lock):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.001)
    return True


class InterruptedTasks(AsyncHelpers):
    """What the tests of interrupted tasks take and check, for self.lock,
    a Lock or a PathLock (test_pathlock); held() says if anyone holds it,
    slots() are the slots of its region."""

    def held(self):
        return self.lock.info()["holders"] != []

    def slots(self):
        return self.region.status()["slots"]

    def busy_until_the_loop_runs(self):
        """The lock held by this thread, released by the event loop as soon
        as the task waits: the task's acquisition waits in a holder thread."""
        self.lock.acquire()
        asyncio.get_running_loop().call_soon(self.lock.release)

    def take(self, enter, by_a_holder):
        """A TAKE for interrupted_in_a_task: ENTER() (acquire_async,
        __aenter__...) on the loop's thread, or BY_A_HOLDER thread."""
        async def take():
            if by_a_holder:
                self.busy_until_the_loop_runs()
            await enter()
            hold = self.lock._task_holds[asyncio.current_task()]
            self.assertIs(isinstance(hold, _async._Holder), by_a_holder)
        return take

    async def assert_free(self, n, value):
        """Nobody holds the lock, no task keeps a hold of it (after point N,
        which ended with VALUE)."""
        self.assertTrue(await settled(self.lock), "point %d: a holder thread keeps it" % n)
        self.assertEqual((self.held(), self.lock._task_holds), (False, {}),
                         "point %d: held after %r" % (n, value))

    async def assert_released(self, n, returned, value):
        """CHECK of a release: the lock free, and no hold left to a task;
        no other exception than the one that came."""
        if not returned:
            self.assertIsInstance(value, (KeyboardInterrupt, asyncio.CancelledError))
        await self.assert_free(n, value)

    async def assert_held_if_returned(self, n, returned, value):
        """CHECK of an acquisition: held for the task if it returned (then
        released here), else not held at all -- whatever the exception (one
        inside Thread.start can become threading's RuntimeError)."""
        if returned:
            self.assertEqual(list(self.lock._task_holds), [asyncio.current_task()],
                             "point %d: returned, not held for the task" % n)
            self.lock.release()
        await self.assert_free(n, value)

    def interrupted(self, injector, outer, take, give, check):
        return self.run_async(interrupted_in_a_task(self, injector, outer, take, give, check))

    def dying_acquire(self):
        """The acquisition of a thread that will die holding the lock."""
        self.lock.acquire()

    def owner_dies(self, waits):
        """A TAKE: a thread takes the lock and ends holding it -- at once
        (its death proven before the task's try), or, if the task WAITS,
        once the task waits for it."""
        async def take():
            go = threading.Event()
            dying = threading.Thread(target=lambda: (self.dying_acquire(), go.wait()))
            dying.start()
            while not self.held():
                time.sleep(0.001)
            if waits:
                asyncio.get_running_loop().call_soon(go.set)
                return
            go.set()
            dying.join()
            while any(s["tid"] == dying.native_id and s["alive"] for s in self.slots()):
                time.sleep(0.0002)      # (the kernel's word comes after join)
        return take

    def owner_dead_told(self, waits):
        """A CHECK after an owner died: OwnerDead, with the lock held for
        the task (by a holder thread if it WAITS); or the exception, the
        lock not held for the task, and the next acquisition told OwnerDead
        (the dead thread's, or that of the holder thread, which ended
        keeping it)."""
        async def check(n, returned, value):
            self.assertFalse(returned, "point %d: returned after an owner died" % n)
            if isinstance(value, bakery.OwnerDead):
                hold = self.lock._task_holds.get(asyncio.current_task())
                self.assertIs(isinstance(hold, _async._Holder), waits, "point %d" % n)
            else:
                self.assertTrue(await settled(self.lock), "point %d: a holder keeps it" % n)
                self.assertEqual(self.lock._task_holds, {}, "point %d: %r" % (n, value))
                with self.assertRaises(bakery.OwnerDead, msg="point %d" % n):
                    await self.lock.acquire_async(timeout=3)    # (not: nobody knows)
            self.assertEqual(list(self.lock._task_holds), [asyncio.current_task()],
                             "point %d: %r" % (n, value))
            self.lock.consistent()
            self.lock.release()
            await self.assert_free(n, value)
        return check


class TestExceptionInATasksRelease(InterruptedTasks, LockTest):
    """A KeyboardInterrupt anywhere in a task's release (past the first
    instruction of the function called, as for a thread: test_signals),
    and a cancellation at any of its awaits, find the lock released and
    the task's hold gone -- whether the loop's thread took it (the lock
    was free) or a holder thread, after a wait."""

    def exits(self):
        """(outer, enter, exit) of ``async with lock`` and of its holds."""
        hold = self.lock.hold(timeout=60)
        return [("__aexit__", self.lock.__aenter__, lambda: self.lock.__aexit__(None, None, None)),
                ("__aexit__", hold.__aenter__, lambda: hold.__aexit__(None, None, None))]

    def test_async_with_exit(self):
        for by_a_holder in (False, True):
            for outer, enter, exit in self.exits():
                points = self.interrupted(RaiseInTask, outer, self.take(enter, by_a_holder),
                                          exit, self.assert_released)
                self.assertGreater(points, 5)

    def test_async_with_exit_cancelled(self):
        for by_a_holder in (False, True):
            for outer, enter, exit in self.exits():
                awaits = self.interrupted(CancelWhileAwaiting, outer,
                                          self.take(enter, by_a_holder), exit,
                                          self.assert_released)
                # only a holder's release awaits (its thread's answer)
                self.assertEqual(awaits > 0, by_a_holder)

    def test_consistent_in_a_task(self):
        # after async with's OwnerDead, consistent() repairs and releases:
        # interrupted, it leaves the lock free, or held for the task --
        # repaired or not -- and the task's way out (consistent() if not
        # repaired, then release()) works, never waiting for ever
        async def take_owner_dead(waits):
            await self.owner_dies(waits)()
            with self.assertRaises(bakery.OwnerDead):
                await self.lock.__aenter__()

        async def in_the_task():
            self.lock.consistent()

        async def way_out(n, returned, value):
            if not returned:
                self.assertIsInstance(value, KeyboardInterrupt)
            if self.held():
                self.assertIn(asyncio.current_task(), self.lock._task_holds, "point %d" % n)
                with time_limit(5):
                    if self.lock.info()["state"] != "ok":
                        self.lock.consistent()
                    if self.held():
                        self.lock.release()
            await self.assert_free(n, value)

        for waits in (False, True):
            points = self.interrupted(RaiseInTask, "consistent",
                                      lambda: take_owner_dead(waits), in_the_task, way_out)
            self.assertGreater(points, 5)

    def test_release_in_a_task(self):
        async def in_the_task():        # (not named release: the outer is)
            self.lock.release()

        for by_a_holder in (False, True):
            points = self.interrupted(RaiseInTask, "release",
                                      self.take(self.lock.acquire_async, by_a_holder),
                                      in_the_task, self.assert_released)
            self.assertGreater(points, 5)


class TestExceptionInATasksAcquire(InterruptedTasks, LockTest):
    """A KeyboardInterrupt anywhere in acquire_async or ``async with``'s
    entry, and a cancellation at any of their awaits: the lock is held for
    the task if the call returned, else not at all (once a holder thread
    it started has let go).  After an owner's death, OwnerDead with the
    lock held for the task, or the exception and the next acquisition told
    of the death in turn."""

    def entries(self):
        hold = self.lock.hold(timeout=60)
        return [("acquire_async", self.lock.acquire_async),
                ("__aenter__", self.lock.__aenter__), ("__aenter__", hold.__aenter__)]

    def interrupted_entries(self, injector):
        for busy in (False, True):
            async def take():
                if busy:
                    self.busy_until_the_loop_runs()

            for outer, enter in self.entries():
                points = self.interrupted(injector, outer, take, enter,
                                          self.assert_held_if_returned)
                if injector is RaiseInTask:
                    self.assertGreater(points, 5)
                else:
                    self.assertEqual(points > 0, busy)      # only a wait awaits

    def test_acquire(self):
        self.interrupted_entries(RaiseInTask)

    def test_acquire_cancelled(self):
        self.interrupted_entries(CancelWhileAwaiting)

    def test_owner_dead(self):
        for waits in (False, True):
            points = self.interrupted(RaiseInTask, "acquire_async", self.owner_dies(waits),
                                      self.lock.acquire_async, self.owner_dead_told(waits))
            self.assertGreater(points, 20)
        awaits = self.interrupted(CancelWhileAwaiting, "acquire_async", self.owner_dies(True),
                                  self.lock.acquire_async, self.owner_dead_told(True))
        self.assertEqual(awaits, 1)


if __name__ == "__main__":
    unittest.main()
