/* SPDX-License-Identifier: MIT */
/*
 * exit_wake.pml -- the ordering protocol of the exit's wake-up: a holder's
 *                  number := 0 against a waiter that counts itself in and
 *                  goes to sleep, on a machine with store buffers (x86-64's
 *                  TSO), with the exit's barrier left out while the
 *                  region's exit_fences and the lock's lock_fences are 0
 *                  and membarrier(2) makes up for it, the holder killed at
 *                  any step, the waiter that marks the lock killed
 *                  half-way, and the lock's mark aged back down to 0.
 *
 * Mirrors: the exit's store, exit_store in lib/algo/algo.h (called by the
 * exits of lib/algo/common.c, black_white.c and jayanti.c), followed by
 * bakery__reg_signal; the waiter of lib/wait.c (await_sleep, and
 * bakery__park_behind_slow, which takes the same steps) with its fence
 * step bakery__exit_fence_remote of lib/exitfence.h and, out of line,
 * bakery__exit_fence_make of lib/exitfence.c (F1's STALE case among its
 * steps); the aging A1, A2, bakery__exit_fences_age of lib/exitfence.c,
 * called from exit_store.  Not an algorithm step of a paper: the protocol
 * that makes a release wake whoever sleeps on it.
 *
 * The protocol with the barrier (a fenced exit):
 *   exiter  E1  number := 0, with a full barrier (xchg)
 *           E2  w := waiters (a load)
 *           E3  if w != 0: seq += 1 (a locked add), FUTEX_WAKE(seq)
 *   waiter  W1  seen := seq
 *           W2  waiters += 1 (a locked add), full barrier
 *           W3  re-read number (its condition); if 0, done
 *           W4  futex_waitv on (seq, seen) and on the holder's liveness
 *               token: the kernel queues it only while seq == seen, a
 *               FUTEX_WAKE ends the sleep, and so does the holder's death
 *               (robust futex: the kernel marks the token and wakes its
 *               FUTEX_WAITERS sleepers)
 *           W5  waiters -= 1
 * Either the exiter's load at E2 sees the count, or the waiter's re-read at
 * W3 sees number = 0, or its sleep at W4 sees the bump.
 *
 * Without the barrier.  The exit of a process registered for
 * MEMBARRIER_CMD_GLOBAL_EXPEDITED (at open) is:
 *   exiter  E1  number := 0, a plain store: into the store buffer
 *           E1b load exit_fences (the region's word) and lock_fences (the
 *               lock's), in either order; if either is not 0, a full
 *               fence (a locked instruction: it waits for the buffer to
 *               drain)
 *           E2, E3 as above
 * so the decision is made after the store.  Without the fence, x86 lets
 * E2's load pass the store still in the buffer.  An exiter whose process
 * is not registered keeps the xchg.
 *
 * The lock's word lock_fences: 0, exits may skip their barrier; 1
 * (SETTING); 2 (SET); 3 (STALE: SET being aged).  The exit fences on 1, 2
 * and 3.  A registered waiter's fence step, between W2 and W3
 * (bakery__exit_fence_remote, bakery__exit_fence_make):
 *           F1  lf := lock_fences; if lf == 2: nothing more (exits of the
 *               lock fence), go to W3; if lf == 3: CAS(lock_fences,
 *               3 -> 2) (it fails if an ager took the word to 0
 *               meanwhile; the result is ignored), nothing more, go to W3
 *           F2  if lf == 0: CAS(lock_fences, 0 -> 1); won if it succeeded
 *           F3  membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)
 *           F4  if won: lock_fences := 2
 * A waiter that reads 1 makes its own membarrier and leaves the word.  A
 * setter may die between F2 and F4: the word stays 1 for ever and every
 * later waiter makes the membarrier (correct, only slower).
 * The kernel's semantics (membarrier(2)): when the call returns, every
 * running thread of every process registered for it has passed a full
 * barrier (an IPI to each CPU running one; a thread not running passed the
 * scheduler's barrier when it was switched out); threads of processes not
 * registered get no IPI.  Here: one atomic step that empties the store
 * buffers of the registered processes at that moment; a store made after
 * it is not drained by it (the buffer is a channel: the membarrier takes
 * what is in it, nothing later).  Only the exiter makes plain stores (a
 * waiter's are locked instructions, which go to memory at once), so its
 * buffer is the only one: one entry, number := 0, drained by a Drain
 * process at any moment, before E2 or long after.  The locked add of E3
 * drains it first.
 *
 * Why a waiter that reads 2 may skip F3 (without the aging): an exit
 * whose E1b load saw lock_fences = 0 made that load before the setter's
 * CAS, and made its store E1 before that load (program order), so the
 * store was in its buffer or in memory when the setter's membarrier, made
 * after its CAS, ran; that membarrier lands it before the setter stores
 * 2, and a waiter that read 2 re-reads number after that.  An exit whose
 * load saw 1 or 2 fences, and pairs with the waiter's own barrier at W2.
 *
 * The aging (AGE=1; bakery__exit_fences_age): in the C code an exit that
 * fenced (it read a word not 0), on every 1024th passage of its thread
 * in the lock, after its fence, takes the word one step down:
 *   ager    A1  CAS(lock_fences, 2 -> 3)
 *           A2  CAS(lock_fences, 3 -> 0)
 * each one locked instruction, a full barrier (the ager's own buffer is
 * empty afterwards).  Nothing else lowers the word, and 1 is never aged:
 * a setter between F2 and F4 may still be to make its membarrier (one
 * killed there leaves 1 for good, as without the aging).  So a lock that
 * had a sleeper goes back to fenceless exits once nobody has slept in it
 * for a while, and a waiter that finds 3 puts 2 back without a
 * membarrier.  The model's Ager is a process of its own that makes A1 or
 * A2 at any moment, any number of times (AGES may bound them): more
 * general than tying it to an exit, since the exits of every holder of
 * the lock age, and the model's exiter aging after its fence is one of
 * these runs (its buffer drained just before, which Drain may do at any
 * moment).  The Ager has no state of its own, so the state space stays
 * finite without a bound; a CAS that fails changes nothing and is not a
 * step.
 *
 * Why a waiter that reads 2 or 3 may skip F3 even though the word may go
 * down: the waiter reads at F1, after its increment and the barrier of
 * W2, so its count is in memory when it reads.  An exit whose E1b load
 * saw 1, 2 or 3 fences, as above.  An exit whose load saw 0 made it
 * either after the waiter's F1 or before it.  After: that 0 was stored by
 * an ager's A2 after the waiter's read (the word was 2 or 3 then, and
 * only A2 takes it to 0), and TSO keeps the exit's later load E2 of the
 * count after its load of the word, so E2 sees the waiter's count and the
 * exit wakes it.  Before: the word went from that 0 to the 2 or 3 the
 * waiter read, which takes a CAS 0 -> 1 after the exit's load (only F2
 * raises 0) and then that setter's F4 (nothing else takes 1 to 2; a 3
 * put back to 2 came from a 2 as well), so that setter's membarrier,
 * after its CAS, landed the exit's store before the 2, as above.  Aging 1
 * to 0 breaks the second case (AGE_SETTING: the exit reads the reset 0
 * after the setter's membarrier, and the setter still stores 2); making
 * F1 before W2 breaks the first (MEMBARRIER_EARLY: the waiter's read of 2
 * comes before its count).
 *
 * A process to which membarrier is refused (a seccomp filter, a kernel
 * without MEMBARRIER_CMD_GLOBAL_EXPEDITED) is not registered: at open,
 * before any of its threads takes a ticket, it sets exit_fences := 1 (a
 * locked store, never cleared); its own exits always take the barrier; its
 * waiters neither make the membarrier nor touch lock_fences.  An exiter may
 * have read exit_fences = 0 just before such an open (its store already
 * made), so that process's waiters sleep with a bound (the sleep may end
 * by a timeout, after which the waiter goes round again) during a grace
 * period after their open.  The grace is finite: the model lets it end at
 * any moment at which no exit that read exit_fences = 0 is unfinished (its
 * load of the count not yet made, or its store still buffered) -- the
 * timing assumption the grace stands for; the runs include those where it
 * never ends.  A waiter decides whether its sleep is bounded before its
 * re-read of number, as the C code does (bakery__exit_fence_remote, after
 * the count increment and its barrier; LATE_GRACE below shows why it
 * must).  A registered waiter's sleeps are unbounded.
 *
 * The holder may die at every step (CRASH=1, default): before its exit,
 * between any two steps of it.  Its death wakes every sleeper on its
 * token.  Its buffered store still drains afterwards, as on the hardware:
 * x86 never discards a store that has entered the store buffer (it has
 * retired); it reaches memory whatever the thread does next, its death
 * included.  A waiter whose CAS won may die after it, before or after its
 * membarrier and before its store of 2 (WCRASH=1, default): the word stays
 * 1.  Its count on the line either stays (nothing takes it back: the exit
 * still sees it) or is taken back at once (the exit has one reason fewer
 * to wake anybody); both are explored.
 *
 * Processes: the exiter (it holds the lock at the start: number = 1),
 * WAITERS waiters on its line (1 or 2, each of its own process:
 * registered if its bit in REG_MASK is set, refused if not), the exiter's
 * Drain, and with OTHER=1 a registered sleeper of the same lock on another
 * holder's line (counted there, not here: the exiter never wakes it) which
 * makes the fence step F1..F4 once and may die between F2 and F4, and
 * with AGE=1 the Ager.  A waiter makes one wait; the exiter makes one
 * exit.
 *
 * Checked:
 *   - invalid end state (the lost wake-up): a waiter asleep for ever on
 *     seq == seen while the exiter has ended and its store has drained;
 *   - assertion: a waiter whose sleep ends other than by a timeout (a
 *     wake-up, or seq already moved at the futex call) sees number == 0 or
 *     the holder dead, without a further look (no wasted wake-up: the bump
 *     comes after the store has landed).
 *
 * Switches:
 *   WAITERS=1|2      the waiters on the exiter's line (default 1)
 *   REG_MASK         bit w set: waiter w's process registered (default 3)
 *   OTHER=0|1        a registered sleeper on another line of the lock
 *                    (default 0)
 *   LOCK_FENCES0     lock_fences at the start (default 0; 2: a lock that
 *                    has had a sleeper; 1: its setter died; 3: being aged)
 *   AGE=0|1          the Ager: A1 and A2 at any moment (default 0)
 *   AGES             at most that many steps of the Ager (default 0: no
 *                    bound)
 *   EXITER_REG=0|1   the exiter's process registered (default 1); if not, it
 *                    was refused: exit_fences is 1 from the start (its open)
 *                    and its exit takes the barrier
 *   EARLY_SET=1      the refused waiters' processes open before the exiter
 *                    reads exit_fences (default 0: at any moment)
 *   GRACE=0|1        a refused waiter's sleeps are bounded during its grace
 *                    (default 1)
 *   CRASH=0|1        the holder may die at every step (default 1)
 *   WCRASH=0|1       a setter may die between its CAS and its store of 2
 *                    (default 1)
 *   MEMBARRIER_EARLY=1  the whole fence step F1..F4 before W2, not after.
 *                    Without the aging (AGE=0) it passes (it failed
 *                    without the lock's word): an exit that read 0 made
 *                    its store before the CAS, which the membarrier
 *                    follows whatever the order of W2 and F1..F4; an exit
 *                    that read 1 or 2 fences and pairs with W2.  With
 *                    AGE=1 it must fail (below)
 * Must-fail (invalid end state, the lost wake-up):
 *   NO_MEMBARRIER=1     the registered waiters make no membarrier (F3 left
 *                       out, the word kept): store buffering, E2 reads 0,
 *                       W3 reads 1
 *   SKIP_ON_SETTING=1   (WAITERS=2) a waiter skips F3 when it reads 1, not
 *                       only 2: the setter's membarrier comes after its
 *                       re-read
 *   SET_EARLY=1         (WAITERS=2) the setter stores 2 before its
 *                       membarrier: a waiter reads 2 and re-reads number
 *                       while the store is still buffered
 *   LOAD_FIRST=1        (OTHER=1) the exit loads the words before its store
 *                       (the old order): it reads 0 before the setter's
 *                       CAS, makes its store after the setter's membarrier,
 *                       and a waiter that read 2 skips its own (with the
 *                       setter on the exiter's line instead, it passes:
 *                       the setter's count comes before the store)
 *   FENCELESS_UNREG=1   (with EXITER_REG=0) the exit is fenceless although
 *                       its process is not registered (it was not refused
 *                       either: exit_fences stays 0): the IPI does not
 *                       reach it, the setter's membarrier drains nothing
 *   GRACE=0             (refused waiter, EARLY_SET=0) the exiter read
 *                       exit_fences = 0 before the open, its store is still
 *                       buffered at W3: the unbounded sleep never ends
 *   LATE_GRACE=1        the waiter decides whether its sleep is bounded
 *                       after its re-read of number: the grace ends between
 *                       a stale re-read and the sleep, which is unbounded
 *   MEMBARRIER_EARLY=1  (AGE=1) the fence step before W2: the waiter sets
 *                       the word (its membarrier drains nothing yet) or
 *                       reads 2; A1 and A2 take it to 0; the exit stores,
 *                       reads 0, skips its fence and loads a count of 0;
 *                       the waiter counts itself in and re-reads the old
 *                       number.  It takes two steps of the Ager (AGES=1
 *                       passes)
 *   STALE_UNFENCED=1    (AGE=1, OTHER=1) the exit does not fence on 3
 *                       (fence = ef != 0 || lf == 1 || lf == 2): the other
 *                       line's sleeper sets the word, A1 takes it to 3,
 *                       the exit stores, reads 3 and loads a count of 0,
 *                       and the waiter counts itself in, reads 3 and skips
 *                       F3.  With the setter on the exiter's line instead
 *                       (WAITERS=2, no OTHER) it passes: the setter's
 *                       count, still on the line, makes the exit wake the
 *                       line
 *   AGE_SETTING=1       (AGE=1, OTHER=1) the Ager also takes 1 to 0 (a
 *                       reset that does not wait for the setter's 2): the
 *                       other line's sleeper makes its CAS and its
 *                       membarrier, the Ager resets the word, the exit
 *                       stores, reads 0 and loads a count of 0, the
 *                       sleeper stores 2, the waiter counts itself in,
 *                       reads 2 or 3 and skips F3.  With the setter on the
 *                       exiter's line instead it passes, for the same
 *                       reason
 */

#ifndef WAITERS
#define WAITERS 1
#endif
#ifndef REG_MASK
#define REG_MASK 3
#endif
#ifndef OTHER
#define OTHER 0
#endif
#ifndef LOCK_FENCES0
#define LOCK_FENCES0 0
#endif
#ifndef EXITER_REG
#define EXITER_REG 1
#endif
#ifndef EARLY_SET
#define EARLY_SET 0
#endif
#ifndef GRACE
#define GRACE 1
#endif
#ifndef CRASH
#define CRASH 1
#endif
#ifndef WCRASH
#define WCRASH 1
#endif
#ifndef NO_MEMBARRIER
#define NO_MEMBARRIER 0
#endif
#ifndef MEMBARRIER_EARLY
#define MEMBARRIER_EARLY 0
#endif
#ifndef SKIP_ON_SETTING
#define SKIP_ON_SETTING 0
#endif
#ifndef SET_EARLY
#define SET_EARLY 0
#endif
#ifndef LOAD_FIRST
#define LOAD_FIRST 0
#endif
#ifndef FENCELESS_UNREG
#define FENCELESS_UNREG 0
#endif
#ifndef LATE_GRACE
#define LATE_GRACE 0
#endif
#ifndef AGE
#define AGE 0
#endif
#ifndef AGES
#define AGES 0
#endif
#ifndef STALE_UNFENCED
#define STALE_UNFENCED 0
#endif
#ifndef AGE_SETTING
#define AGE_SETTING 0
#endif

#define REGISTERED(w) (((REG_MASK) >> (w)) & 1)
/* the waiters whose process is refused */
#if WAITERS > 1
#define NREFUSED ((1 - REGISTERED(0)) + (1 - REGISTERED(1)))
#else
#define NREFUSED (1 - REGISTERED(0))
#endif
/* a refused exiter's process set exit_fences at its open */
#if !EXITER_REG && !FENCELESS_UNREG
#define EXIT_FENCES0 1
#else
#define EXIT_FENCES0 0
#endif

/* lock_fences */
#define SETTING 1
#define SET     2
#define STALE   3

/* memory: the holder's register line, the lock's word, the region's word */
byte number = 1;        /* the holder's ticket (it holds the lock) */
byte waiters;           /* the line's waiter count */
byte seq;               /* the line's futex word */
byte lock_fences = LOCK_FENCES0;
bit  exit_fences = EXIT_FENCES0;
bit  hdead;             /* the holder's liveness token: its owner died */

/* the exiter's store buffer: its one plain store, number := 0 */
chan sb = [1] of { byte };

/* the kernel: waiter w queued on seq (futex_waitv) */
bit  asleep[WAITERS];

/* ghosts */
byte nopen;             /* refused processes that have opened */
bit  e_win;             /* the exit read exit_fences == 0 */
bit  e_past;            /* the exit has loaded the count (or the exiter died) */
/* an exit that read exit_fences == 0 is unfinished */
#define WIN_OPEN (e_win && (!e_past || len(sb) > 0))

#if CRASH
#define MAYBE_DIE if :: goto dead :: skip fi
#else
#define MAYBE_DIE skip
#endif

#if WCRASH
#define SETTER_MAYBE_DIE if :: won -> goto wdead :: true -> skip fi
#else
#define SETTER_MAYBE_DIE skip
#endif

/* membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED): every registered process
 * passes a full barrier; the exiter's buffer is the only one, and the
 * call drains what is in it now, not a store made later */
#if NO_MEMBARRIER
#define MEMBARRIER skip
#elif EXITER_REG
#define MEMBARRIER \
	atomic { if :: len(sb) > 0 -> sb?mv; number = mv :: else -> skip fi }
#else
#define MEMBARRIER skip         /* no IPI reaches an unregistered process */
#endif

/* F1: may the waiter skip the membarrier?  (STALE: below) */
#if SKIP_ON_SETTING
#define SKIP_IT (lf != 0)
#else
#define SKIP_IT (lf == SET)
#endif

/* E1b: does the exit fence? */
#if STALE_UNFENCED
#define FENCE_IT (ef != 0 || lf == SETTING || lf == SET)
#else
#define FENCE_IT (ef != 0 || lf != 0)
#endif

/* F1..F4 of a registered waiter (bakery__exit_fence_remote,
 * bakery__exit_fence_make) */
inline fence_step()
{
	won = 0;
	/* F1 */ lf = lock_fences;
	if
	:: lf == STALE ->
		/* being aged: back to SET (a CAS; it fails if an ager has
		 * taken the word to 0 meanwhile; the result is ignored), and
		 * no membarrier: our read came after W2 */
		atomic {
			if
			:: lock_fences == STALE -> lock_fences = SET
			:: else -> skip
			fi
		}
	:: lf != STALE && SKIP_IT -> skip       /* SET: the lock's exits fence */
	:: else ->
		/* F2: the first to sleep in the lock marks it */
		if
		:: lf == 0 ->
			atomic {
				if
				:: lock_fences == 0 -> lock_fences = SETTING; won = 1
				:: else -> skip
				fi
			}
		:: else -> skip
		fi;
		SETTER_MAYBE_DIE;
#if SET_EARLY
		if :: won -> lock_fences = SET :: else -> skip fi;
#endif
		/* F3 */ MEMBARRIER;
#if !SET_EARLY
		SETTER_MAYBE_DIE;
		/* F4: every exit that read 0 has drained its store */
		if :: won -> lock_fences = SET :: else -> skip fi
#endif
	fi
}

/* The grace of a refused waiter may end once no exit that read
 * exit_fences == 0 is unfinished (it cannot start again: exit_fences is 1
 * since our open).  Then the next sleep is unbounded. */
#define GRACE_STEP \
	if :: graced && !WIN_OPEN -> graced = 0 :: true -> skip fi; \
	bounded = graced

active [WAITERS] proctype Waiter()
{
	byte w = _pid;
	bit reg = REGISTERED(_pid);
	bit graced, bounded, woken, won;
	byte seen, mv, lf;

	if
	:: !reg ->
		/* open: membarrier refused; before any ticket of ours */
		atomic { exit_fences = 1; nopen++ };
		graced = GRACE
	:: else -> skip
	fi;
again:
	/* W1 */ seen = seq;
#if MEMBARRIER_EARLY
	if :: reg -> fence_step() :: else -> skip fi;
#endif
	/* W2: a locked add, a full barrier too (nothing of ours is buffered) */
	waiters++;
#if !MEMBARRIER_EARLY
	if :: reg -> fence_step() :: else -> skip fi;
#endif
#if !LATE_GRACE
	/* is the next sleep bounded?  (bakery__exit_fence_remote's cap) */
	GRACE_STEP;
#endif
	/* W3: the condition */
	if
	:: number == 0 -> waiters--; goto done
	:: else -> skip
	fi;
#if LATE_GRACE
	GRACE_STEP;
#endif
	/* W4: queued only while seq == seen (the kernel's check and queueing
	 * are one step under its lock; a token already marked dead returns at
	 * once as well) */
	atomic { if :: seq == seen -> asleep[w] = 1 :: else -> skip fi };
	if
	:: atomic { !asleep[w] || hdead -> asleep[w] = 0; woken = 1 }
	:: atomic { bounded && asleep[w] -> asleep[w] = 0; woken = 0 }  /* timeout */
	fi;
	/* W5 */ waiters--;
	if
	:: woken ->
		/* woken by the exit or the death: the condition holds */
		assert(number == 0 || hdead);
		goto done
	:: else ->
		/* a timeout: the condition again, then round again */
		if
		:: number == 0 -> goto done
		:: else -> goto again
		fi
	fi;
wdead:
	/* a setter died between its CAS and its store of SET: the word
	 * stays SETTING; its count stays, or is taken back */
#if !MEMBARRIER_EARLY
	if :: waiters-- :: skip fi;
#endif
done:
	skip
}

active proctype Exiter()
{
	bit fence;
	byte w, k, ef, lf;

	MAYBE_DIE;                      /* in the critical section */
#if EXITER_REG || FENCELESS_UNREG
#if !LOAD_FIRST
	/* E1: a plain store, into the store buffer */
	sb!0;
	MAYBE_DIE;
#endif
#if EARLY_SET
	(nopen == NREFUSED);            /* the refused processes have opened */
#endif
	/* E1b: the two words, in either order (exit_store) */
	if
	:: atomic { ef = exit_fences; e_win = (ef == 0) }; lf = lock_fences
	:: lf = lock_fences; atomic { ef = exit_fences; e_win = (ef == 0) }
	fi;
	fence = FENCE_IT;
	MAYBE_DIE;
#if LOAD_FIRST
	/* E1 after the look (the old order) */
	sb!0;
	MAYBE_DIE;
#endif
	if
	:: fence -> (len(sb) == 0); MAYBE_DIE   /* the full fence: drained */
	:: else -> skip
	fi;
#else
#if EARLY_SET
	(nopen == NREFUSED);
#endif
	/* E1: not registered, xchg: to memory with a full barrier */
	atomic { len(sb) == 0 -> number = 0 };
	MAYBE_DIE;
#endif
	/* E2: loads memory, past a store still in the buffer */
	atomic { w = waiters; e_past = 1 };
	if
	:: w > 0 ->
		MAYBE_DIE;
		/* E3: a locked add drains the buffer first */
		atomic { len(sb) == 0 -> seq++ };
		MAYBE_DIE;
		/* FUTEX_WAKE: every sleeper queued on seq */
		atomic {
			for (k : 0 .. WAITERS - 1) {
				asleep[k] = 0
			}
		}
	:: else -> skip
	fi;
	goto done;
dead:
	/* the kernel marks the token and wakes its sleepers (hdead ends
	 * their sleep); a buffered store still drains */
	atomic { hdead = 1; e_past = 1 };
done:
	skip
}

/* The memory side of the exiter's store buffer: at any time, also after
 * the exiter's death. */
active proctype Drain()
{
	byte v;

end:	do
	:: atomic { sb?v -> number = v }
	od
}

#if AGE
/* The aging of lock_fences (bakery__exit_fences_age, called from
 * exit_store): A1 CAS(SET -> STALE), A2 CAS(STALE -> 0), each one locked
 * instruction.  In the C code an exit makes them (its own store drained
 * by its fence first); here a process of its own at any moment, which
 * covers every exiter of the lock, the model's exiter included (its
 * buffer drains at any moment too).  Any number of them (the process has
 * no state: the state space stays finite), or at most AGES.  A CAS that
 * fails changes nothing: only those that succeed are steps. */
#if AGES
#define AGE_STEP(from, to) \
	atomic { n < AGES && lock_fences == from -> lock_fences = to; n++ }
#else
#define AGE_STEP(from, to) \
	atomic { lock_fences == from -> lock_fences = to }
#endif

active proctype Ager()
{
#if AGES
	byte n;
#endif

end:	do
	:: /* A1 */ AGE_STEP(SET, STALE)
	:: /* A2 */ AGE_STEP(STALE, 0)
#if AGE_SETTING
	:: AGE_STEP(SETTING, 0)         /* must-fail */
#endif
	od
}
#endif

#if OTHER
/* A registered sleeper of the same lock on another holder's line: its
 * fence step only (its count, condition and sleep are on that line). */
active proctype Other()
{
	bit won;
	byte mv, lf;

	fence_step();
wdead:
	skip
}
#endif
