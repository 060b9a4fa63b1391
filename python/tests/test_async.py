# SPDX-License-Identifier: MIT
"""asyncio: ``async with lock:`` and ``await lock.acquire_async()`` keep
their place in line (FIFO with other processes) while the event loop runs
other tasks; a task cancelled while it waits leaves the line, even as the
lock is handed to it, and never leaves the lock held; shared mode, time
limits, an owner death (repaired through the task), and the per-task
ownership of holds."""

import asyncio
import os
import random
import signal
import unittest

import bakery

from support import FORK, LockTest, hold_forever, hold_until, join, take_in_turn


def _hold_and_die(lock, held):
    lock.acquire()
    held.set()
    os.kill(os.getpid(), signal.SIGKILL)


class AsyncTest(LockTest):

    def run_async(self, coro):
        return asyncio.run(asyncio.wait_for(coro, 120))

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

    async def until(self, predicate, what):
        for _ in range(12000):
            if predicate():
                return
            await asyncio.sleep(0.01)
        self.fail("timed out waiting for " + what)

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


if __name__ == "__main__":
    unittest.main()
