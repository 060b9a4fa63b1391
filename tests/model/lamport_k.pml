/* SPDX-License-Identifier: MIT */
/*
 * lamport_k.pml -- SPIN model of Lamport's Bakery admitting up to K holders
 *                  at once (a counting semaphore with owners), with crashes,
 *                  recovery, slot reuse and aborts.
 *
 * Paper : Lamport 1974 (as in lamport.pml); the waiting section counts the
 *         tickets ahead instead of waiting for each of them to leave.
 *
 * Registers are atomic and sequentially consistent; one Promela step = one
 * shared access.
 *
 * Steps of process i (slot i):
 *   K1  choosing[i] := 1
 *   K2  for each j != i: read number[j];  num := 1 + max
 *   K3  number[i] := num
 *   K4  choosing[i] := 0                       -- end of the doorway
 *   K5  phase 1: for each j != i: await choosing[j] == 0
 *   K6  phase 2: repeat
 *           cnt := 0; for each j != i: read number[j] (once);
 *                     cnt++ if number[j] != 0 and (number[j],j) < (num,i)
 *       until cnt < K
 *       CS
 *   K9  number[i] := 0
 * A sweep that fails changes nothing but the sweeper's copies of the
 * numbers it read (seen[]): the next sweep starts only once one of those
 * numbers differs from its copy (a sweep over the same values fails the
 * same way; leaving it out drops no behaviour and keeps deadlocks visible
 * as invalid end states).  The reads of one sweep are separate steps.
 *
 * Faults (as lamport.pml): a crash at any step, then a survivor resets
 * choosing[d] := 0 and number[d] := 0 in either order, and only then the
 * slot is reused.  Abort: number[i] := 0.  Numbers above MAXNUM: the
 * process retires (see lamport.pml).
 *
 * Variant switches (-D):
 *   N=2..4          number of slots                   (default 3)
 *   K=1..3          holders admitted at once          (default 2)
 *   CRASHES, ABORTS fault budgets                     (default 0)
 *   MAXNUM=k        model bound on numbers            (default N+2)
 *   REACH=1         MUST FAIL (reachability): assert that K holders are
 *                   never inside together; a violation is the witness.
 *   NO_PHASE1=1     MUST FAIL: no K5 (a sweep may miss a ticket still
 *                   being chosen, smaller than its own).
 *   LE=1            MUST FAIL: the sweep stops at cnt <= K (off by one).
 *   SEQ=1           choosing[k] is a doorway counter (odd: in the doorway;
 *                   never wraps in practice: a 32/64-bit word), not a bit.
 *                   The choosing wait passes when the counter is even or
 *                   differs from the odd value first read: a doorway of j
 *                   that started after that read started after this
 *                   waiter's number was published, so it takes a bigger
 *                   ticket and need not be waited for.  Modelled by a
 *                   ghost bit per waiter (the slot it waits on finished
 *                   a doorway since it read it odd), set by every
 *                   choosing[j] := 0 (doorway end, retirement, reset by a
 *                   survivor): that is exactly an unbounded counter.
 *                   Default 0 (a bit): safety holds, but a waiter can
 *                   starve at the choosing wait (README).
 *   FIFO=0, DEAD_HOLDS=0, LIVENESS as in lamport.pml.
 *
 * Properties:
 *   - at most K inside : ghost ncs (a process that died inside counts
 *                        until its number is reset); assert ncs < K at
 *                        every entry;
 *   - ticket order     : ghost ahead[i] = the waiting processes (doorway
 *                        done) when i starts K1.  When i enters, each l of
 *                        them still waiting must be admissible itself:
 *                        fewer than K non-zero tickets before l's
 *                        (assert overtaken == 0).  With K = 1 that is the
 *                        doorway FIFO of lamport.pml;
 *   - no deadlock      : invalid end states (safety runs);
 *   - starvation freedom (LIVENESS, pan -a -f, weak fairness): []<> !pend[k]
 *                        for the slots in LIVE_MASK (default all).
 */

#ifndef N
#define N 3
#endif
#ifndef K
#define K 2
#endif
#ifndef CRASHES
#define CRASHES 0
#endif
#ifndef ABORTS
#define ABORTS 0
#endif
#ifndef MAXNUM
#define MAXNUM (N+2)
#endif
#ifndef REACH
#define REACH 0
#endif
#ifndef NO_PHASE1
#define NO_PHASE1 0
#endif
#ifndef LE
#define LE 0
#endif
#ifndef SEQ
#define SEQ 0
#endif
#ifndef FIFO
#define FIFO 1
#endif
#ifndef DEAD_HOLDS
#define DEAD_HOLDS 1
#endif
#if N < 2 || N > 4
#error "N must be 2, 3 or 4"
#endif

/* ---------------- shared registers (the C code's) ---------------- */
bit  choosing[N];
byte number[N];

/* ---------------- ghost state (model only) ---------------- */
byte ncs;            /* holders inside                                  */
byte wmask;          /* bit k: k finished its doorway, waits for the CS */
byte ahead[N];       /* ticket order: see header                        */
bit  pend[N];        /* liveness obligation of slot k                   */
bit  dead[N];        /* slot crashed, recovery not finished             */
bit  in_cs[N];       /* incarnation in the CS (dead: until its reset)   */
bit  abort_req[N];   /* Fault asked k to give up                        */
bit  retired[N];     /* k hit MAXNUM and retired (run cut for k)        */
bit  reach;          /* REACH: K inside                                 */
byte overtaken;      /* ticket order: an earlier waiter still blocked   */
byte crashes = CRASHES;
byte aborts  = ABORTS;
byte watch[N];       /* SEQ: 1 + the slot k's choosing wait is on, or 0 */
bit  changed[N];     /* SEQ: that slot ended a doorway since            */
byte g, h, c;        /* ghost loop indices and count (inside d_steps)   */

#define BIT(k)        (1 << (k))
#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)

#if LE
#define ADMIT(n)      ((n) <= K)
#else
#define ADMIT(n)      ((n) < K)
#endif

#if FIFO
#define AHEAD_START(k)  ahead[k] = wmask
#define AHEAD_CLR(k)    ahead[k] = 0
#define UNAHEAD(k)      for (g : 0 .. N-1) { ahead[g] = ahead[g] & ~BIT(k) }; g = 0
/* overtaken := number of processes l in ahead[i] with K or more non-zero
   tickets before l's */
#define CHECK_ORDER \
	overtaken = 0; \
	for (g : 0 .. N-1) { \
		if \
		:: (ahead[i] & BIT(g)) -> \
			c = 0; \
			for (h : 0 .. N-1) { \
				if \
				:: h != g && number[h] != 0 && LESS(number[h], h, number[g], g) -> c++ \
				:: else \
				fi \
			}; \
			if :: c >= K -> overtaken++ :: else fi \
		:: else \
		fi \
	}; g = 0; h = 0; c = 0
#else
#define AHEAD_START(k)  skip
#define AHEAD_CLR(k)    skip
#define UNAHEAD(k)      skip
#define CHECK_ORDER     skip
#endif


/* SEQ: a waiter g that read choosing[k] odd has watch[g] = k + 1; every
   choosing[k] := 0 (the counter moves on) sets changed[g] */
#if SEQ
#define DOORWAY_DONE(k) \
	for (g : 0 .. N-1) { if :: watch[g] == k + 1 -> changed[g] = 1 :: else fi }; g = 0
#define UNWATCH(k)       watch[k] = 0; changed[k] = 0
#else
#define DOORWAY_DONE(k)  skip
#define UNWATCH(k)       skip
#endif
#define RESET_CHOOSING(k)  choosing[k] = 0; DOORWAY_DONE(k)
#define RESET_NUMBER(k)    number[k] = 0; if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi

/* a new sweep only if a number differs from the failed sweep's copy */
#define DIFF(k)  (i != k && number[k] != seen[k])
#if N == 2
#define CHANGED  (DIFF(0) || DIFF(1))
#elif N == 3
#define CHANGED  (DIFF(0) || DIFF(1) || DIFF(2))
#else
#define CHANGED  (DIFF(0) || DIFF(1) || DIFF(2) || DIFF(3))
#endif
#define CLEAR_SEEN  for (g : 0 .. N-1) { seen[g] = 0 }; g = 0

active [N] proctype P()
{
	byte i = _pid; /* slot index = pid (the P's are instantiated first) */
	byte j;        /* loop index over the other slots              */
	byte num;      /* own number                                   */
	byte cnt;      /* K6: tickets ahead seen in this sweep         */
	bit  tried;    /* K6: the last sweep failed                    */
	bit  busy;     /* K5 (SEQ): choosing[j] was read odd           */
	byte seen[N];  /* K6: the numbers read by the last sweep       */

incarnation:
	{
	do
	::	/* K1 */ d_step { choosing[i] = 1; AHEAD_START(i); FIRST(j); num = 0 };
		/* K2 */
		do
		:: d_step { j < N -> if :: number[j] > num -> num = number[j] :: else fi; NEXT(j) }
		:: d_step { j >= N && num < MAXNUM -> num++; j = 0 };
		   break
		:: d_step { j >= N && num >= MAXNUM ->
			choosing[i] = 0; DOORWAY_DONE(i); retired[i] = 1; AHEAD_CLR(i); j = 0; num = 0 };
		   goto gone
		od;
		/* K3 */ number[i] = num;
		/* K4 */ d_step { choosing[i] = 0; DOORWAY_DONE(i); wmask = wmask | BIT(i); pend[i] = 1; FIRST(j) };
		{
#if !NO_PHASE1
		/* K5 */
		do
		:: d_step { j < N && !busy && choosing[j] == 0 -> NEXT(j) }
#if SEQ
		/* K5 with a doorway counter: odd first read, wait for a change */
		:: d_step { j < N && !busy && choosing[j] == 1 -> watch[i] = j + 1; busy = 1 }
		:: d_step { j < N && busy && (choosing[j] == 0 || changed[i]) ->
			UNWATCH(i); busy = 0; NEXT(j) }
#endif
		:: d_step { j >= N -> FIRST(j) }; break
		od;
#endif
		/* K6 */
		do
		:: d_step { j < N && (j != (i == 0 -> 1 : 0) || !tried || CHANGED) ->
			tried = 0; seen[j] = number[j];
			if
			:: number[j] != 0 && LESS(number[j], j, num, i) -> cnt++
			:: else
			fi;
			NEXT(j) }
		:: d_step { j >= N && !ADMIT(cnt) -> tried = 1; cnt = 0; FIRST(j) }
		:: d_step { j >= N && ADMIT(cnt) ->	/* enter the CS */
			assert(ncs < K);                       /* at most K */
#if FIFO
			CHECK_ORDER;
			assert(overtaken == 0);                /* ticket order */
#endif
			ncs++; in_cs[i] = 1;
#if REACH
			reach = (ncs >= K); assert(!reach);    /* witness */
#endif
			wmask = wmask & ~BIT(i); UNAHEAD(i); pend[i] = 0;
			j = 0; cnt = 0; tried = 0; busy = 0; CLEAR_SEEN; UNWATCH(i) };
			/* CS, then K9 */
			d_step { ncs--; in_cs[i] = 0; number[i] = 0; num = 0 };
			break
		od
		} unless {
			d_step { abort_req[i] ->
				number[i] = 0; abort_req[i] = 0;
				wmask = wmask & ~BIT(i); UNAHEAD(i); AHEAD_CLR(i);
				pend[i] = 0; j = 0; num = 0; cnt = 0; tried = 0; busy = 0; CLEAR_SEEN; UNWATCH(i) }
		}
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor (see lamport.pml) ---- */
	if
	:: d_step { dead[i] -> j = 0; num = 0; cnt = 0; tried = 0; busy = 0; CLEAR_SEEN; UNWATCH(i);
		RESET_CHOOSING(i) };
	   d_step { RESET_NUMBER(i); dead[i] = 0; pend[i] = 0 }
	:: d_step { dead[i] -> j = 0; num = 0; cnt = 0; tried = 0; busy = 0; CLEAR_SEEN; UNWATCH(i);
		RESET_NUMBER(i) };
	   d_step { RESET_CHOOSING(i); dead[i] = 0; pend[i] = 0 }
	fi;
	goto incarnation
	};
gone:
end:	skip
}

#if DEAD_HOLDS
#define DROP_CS(k)  skip
#else
#define DROP_CS(k)  if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi
#endif
#define CRASH(k)  :: d_step { crashes > 0 && !dead[k] && !retired[k] -> \
			crashes--; dead[k] = 1; abort_req[k] = 0; DROP_CS(k); \
			wmask = wmask & ~BIT(k); UNAHEAD(k); AHEAD_CLR(k); pend[k] = 1 }
#define ABORT(k)  :: d_step { aborts > 0 && (wmask & BIT(k)) && !dead[k] && !abort_req[k] -> \
			aborts--; abort_req[k] = 1 }

#if CRASHES > 0 || ABORTS > 0
active proctype Fault()
{
end_fault:
	do
	CRASH(0)
	CRASH(1)
#if N > 2
	CRASH(2)
#endif
#if N > 3
	CRASH(3)
#endif
	ABORT(0)
	ABORT(1)
#if N > 2
	ABORT(2)
#endif
#if N > 3
	ABORT(3)
#endif
	:: break
	od
}
#endif

#ifdef LIVENESS
#ifndef LIVE_MASK
#define LIVE_MASK 15
#endif
#define LIVE(k)  ([]<> (!pend[k] || !((LIVE_MASK >> k) & 1)))
#if N == 2
ltl starvation_free { LIVE(0) && LIVE(1) }
#elif N == 3
ltl starvation_free { LIVE(0) && LIVE(1) && LIVE(2) }
#else
ltl starvation_free { LIVE(0) && LIVE(1) && LIVE(2) && LIVE(3) }
#endif
#endif
