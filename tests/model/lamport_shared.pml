/* SPDX-License-Identifier: MIT */
/*
 * lamport_shared.pml -- SPIN model of Lamport's Bakery with a shared
 *                       (reader) mode, with crashes, recovery, slot reuse
 *                       and aborts.
 *
 * Paper : Lamport 1974 (as in lamport.pml), extended with a per-slot mode:
 *         a waiter passes j also when both passages are shared (readers).
 *
 * Registers are atomic and sequentially consistent; one Promela step = one
 * shared access.  mode[k] is a register of its own (one bit: 1 = shared).
 *
 * Steps of process i (slot i), m = the mode of this passage:
 *   S1  choosing[i] := 1
 *   S1m mode[i] := m
 *   S2  for each j != i: read number[j];  num := 1 + max
 *   S3  number[i] := num
 *   S4  choosing[i] := 0                       -- end of the doorway
 *   for each j != i, from any other slot, round (N-1 wraps to 0, i is
 *   skipped), each once; the first is chosen nondeterministically at S4
 *   (the C code starts after its predecessor in line):
 *   S6      await choosing[j] == 0
 *   S7      repeat  read number[j] -> nj
 *                   if nj == 0 or (num,i) < (nj,j): pass
 *                   else if m == R: read mode[j] -> mj; pass if mj == R
 *           until pass
 *           (LOOK: the first look of wait_for_others, lib/algo/lamport.c: a
 *           first S7 try that fails goes back to S6 for the same j, once
 *           per j)
 *       CS
 *   S9  number[i] := 0
 * The order of the j's is free: the argument for exclusion and FIFO is made
 * for each j on its own (as lamport.pml's), whatever i passed before.
 * The S7 try is re-made from fresh reads each time; number[j] is read
 * before mode[j], in two steps.  A writer never reads mode[j] (its term
 * cannot hold), so its S7 is the blocking guard of lamport.pml.  A failed
 * reader try changes nothing but the reader's copies of number[j] and
 * mode[j]: the next try is taken only once one of the two registers differs
 * from the copy (a try that re-reads the same values fails the same way;
 * leaving it out drops no behaviour and keeps deadlocks visible as invalid
 * end states).
 *
 * Faults (as lamport.pml): a crash at any step (between the mode and number
 * writes, in the CS, in the exit too), then a survivor resets
 * choosing[d] := 0 and number[d] := 0 in either order; mode[d] is left as
 * it was (stale) for the slot's next thread.  Abort: number[i] := 0.
 * Numbers above MAXNUM: the process retires (see lamport.pml).
 *
 * Variant switches (-D):
 *   N=2..4          number of slots                   (default 3)
 *   CRASHES, ABORTS fault budgets                     (default 0)
 *   MAXNUM=k        model bound on numbers            (default N+2)
 *   RMASK, WMASK    slot k may take shared passages if bit k of RMASK is
 *                   set, exclusive ones if bit k of WMASK is set (both:
 *                   chosen anew for every passage).   (default: all, all)
 *   REACH=1         MUST FAIL (reachability): assert that two readers are
 *                   never inside together; a violation is the witness that
 *                   readers do overlap.
 *   SKIP_CHOOSING=1 MUST FAIL: a reader skips S6 (the choosing wait).
 *   MODE_FIRST=1    a reader reads mode[j] before number[j] in S7.
 *   MODE_LATE=1     the doorway writes mode[i] after number[i] (S3, then
 *                   S1m, then S4): still correct, S6 covers it.
 *   MODE_LATE=2     MUST FAIL: mode[i] is written after the doorway (S4,
 *                   then S1m): a reader behind a writer's ticket may read
 *                   the slot's stale shared mode and pass it.
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
 *                   Default 0 (a bit): safety holds, but readers behind
 *                   readers starve at the choosing wait (README).
 *   FIFO=0, DEAD_HOLDS=0, LIVENESS as in lamport.pml.
 *   LIVE_MASK=m     the liveness property checks the slots of mask m only
 *                   (default: all), e.g. only the writer's.
 *
 * Properties:
 *   - exclusion     : ghost nw, nr (writers, readers in the CS; a process
 *                     that died inside counts until its number is reset);
 *                     at every entry assert nw == 0 && (m == R || nr == 0);
 *   - FIFO (by mode): ghost ahead[i] = the waiting processes (doorway done)
 *                     whose mode conflicts with i's (not both readers) when
 *                     i starts S1; assert ahead[i] == 0 at i's CS entry;
 *   - no deadlock   : invalid end states (safety runs);
 *   - starvation freedom (LIVENESS, pan -a -f, weak fairness): []<> !pend[k]
 *                     for every k, whatever mode each passage takes.
 */

/* LOOK: the wait loop's first look at each slot (lib/algo): a failed first
   read of j's ticket condition goes back to j's doorway wait.  Off by
   default (the paper's loop); run-models.sh checks it in its LOOK
   configurations, whose state spaces it grows several times. */
#ifndef LOOK
#define LOOK 0
#endif
#ifndef N
#define N 3
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
#ifndef RMASK
#define RMASK 15
#endif
#ifndef WMASK
#define WMASK 15
#endif
#ifndef REACH
#define REACH 0
#endif
#ifndef SKIP_CHOOSING
#define SKIP_CHOOSING 0
#endif
#ifndef MODE_FIRST
#define MODE_FIRST 0
#endif
#ifndef MODE_LATE
#define MODE_LATE 0
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

#define W 0
#define R 1

/* ---------------- shared registers (the C code's) ---------------- */
bit  choosing[N];
byte number[N];
bit  mode[N];

/* ---------------- ghost state (model only) ---------------- */
byte nw;             /* writers in the CS                               */
byte nr;             /* readers in the CS                               */
byte wmask;          /* bit k: k finished its doorway, waits for the CS */
byte ahead[N];       /* FIFO: see header                                */
bit  pend[N];        /* liveness obligation of slot k                   */
bit  dead[N];        /* slot crashed, recovery not finished             */
bit  in_cs[N];       /* incarnation in the CS (dead: until its reset)   */
bit  abort_req[N];   /* Fault asked k to give up                        */
bit  retired[N];     /* k hit MAXNUM and retired (run cut for k)        */
bit  reach;          /* REACH: two readers inside                       */
byte crashes = CRASHES;
byte aborts  = ABORTS;
byte watch[N];       /* SEQ: 1 + the slot k's choosing wait is on, or 0 */
bit  changed[N];     /* SEQ: that slot ended a doorway since            */
byte g;              /* ghost loop index (inside d_steps only)          */

#define BIT(k)        (1 << (k))
#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)
/* the wait (S6, S7): `left` other slots still to pass, from j, round; j
   is 0 when none is left (states merge) */
#define WNEXT(j)      left--; \
                      if \
                      :: left == 0 -> j = 0 \
                      :: else -> j = (j + 1) % N; if :: j == i -> j = (j + 1) % N :: else fi \
                      fi

#if FIFO
/* the waiting processes whose mode conflicts with mine */
#define AHEAD_START(k, mm) \
	ahead[k] = 0; \
	for (g : 0 .. N-1) { \
		if \
		:: (wmask & BIT(g)) && !(mm == R && mode[g] == R) -> \
			ahead[k] = ahead[k] | BIT(g) \
		:: else \
		fi \
	}; g = 0
#define AHEAD_CLR(k)    ahead[k] = 0
#define UNAHEAD(k)      for (g : 0 .. N-1) { ahead[g] = ahead[g] & ~BIT(k) }; g = 0
#else
#define AHEAD_START(k, mm) skip
#define AHEAD_CLR(k)       skip
#define UNAHEAD(k)         skip
#endif

/* ghost: leave the CS (the mode register still holds the passage's mode:
   it changes only in the slot's next doorway) */
#define LEAVE_CS(k)  if :: mode[k] == R -> nr-- :: else -> nw-- fi; in_cs[k] = 0

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
#define RESET_NUMBER(k)    number[k] = 0; if :: in_cs[k] -> LEAVE_CS(k) :: else fi

#if MODE_LATE == 1
#define WRITE_MODE_EARLY  skip
#define WRITE_MODE_LATE   mode[i] = m
#define WRITE_MODE_AFTER  skip
#elif MODE_LATE == 2
#define WRITE_MODE_EARLY  skip
#define WRITE_MODE_LATE   skip
#define WRITE_MODE_AFTER  mode[i] = m
#else
#define WRITE_MODE_EARLY  mode[i] = m
#define WRITE_MODE_LATE   skip
#define WRITE_MODE_AFTER  skip
#endif

#if SKIP_CHOOSING
#define CHOOSING_OK(j)  (m == R || choosing[j] == 0)
#else
#define CHOOSING_OK(j)  (choosing[j] == 0)
#endif

/* S7 with the copies nj (number[j]) and mj (mode[j]) of the current try */
#define TICKET_OK(nj)   ((nj) == 0 || LESS(num, i, nj, j))
/* a new try only if a register differs from the failed try's copy */
#define RETRY(j)        (!tried || number[j] != nj || (m == R && mode[j] != mj))
#define PASS(j)         nj = 0; mj = 0; tried = 0; ph = 0; again = 0; WNEXT(j)
/* a first look at S7 fails: back to S6 for j, once */
#define LOOK_FAILS      nj = 0; mj = 0; ph = 0; again = 1
/* S4, the wait starting at slot k (any other one: one branch per k) */
#define S4_FROM(k)      :: d_step { i != k -> choosing[i] = 0; DOORWAY_DONE(i); \
                                     wmask = wmask | BIT(i); pend[i] = 1; j = k; left = N - 1 }

active [N] proctype P()
{
	byte i = _pid; /* slot index = pid (the P's are instantiated first) */
	byte j;        /* loop index over the other slots              */
	byte left;     /* wait: other slots still to pass (0 elsewhere) */
	byte num;      /* own number                                   */
	bit  m;        /* this passage's mode                          */
	byte ph;       /* S7 phase: 0 S6, 1 first read, 2 second read  */
	byte nj;       /* S7 copy of number[j]                         */
	bit  mj;       /* S7 copy of mode[j]                           */
	bit  tried;    /* S7: the last try failed                      */
	bit  again;    /* S6, S7 once more after a first look failed   */

incarnation:
	{
	do
	::	/* remainder region, then the doorway: S1 with the choice of mode */
		if
		:: ((RMASK >> i) & 1) ->
			d_step { choosing[i] = 1; m = R; AHEAD_START(i, R); FIRST(j); num = 0 }
		:: ((WMASK >> i) & 1) ->
			d_step { choosing[i] = 1; m = W; AHEAD_START(i, W); FIRST(j); num = 0 }
		fi;
		/* S1m */ WRITE_MODE_EARLY;
		/* S2 */
		do
		:: d_step { j < N -> if :: number[j] > num -> num = number[j] :: else fi; NEXT(j) }
		:: d_step { j >= N && num < MAXNUM -> num++; j = 0 };
		   break
		:: d_step { j >= N && num >= MAXNUM ->
			choosing[i] = 0; DOORWAY_DONE(i); retired[i] = 1; AHEAD_CLR(i); j = 0; num = 0 };
		   goto gone
		od;
		/* S3 */ number[i] = num;
		/* S1m (MODE_LATE) */ WRITE_MODE_LATE;
		/* S4, and the slot the wait starts from */
		if
		S4_FROM(0)
		S4_FROM(1)
#if N > 2
		S4_FROM(2)
#endif
#if N > 3
		S4_FROM(3)
#endif
		fi;
		/* S1m (MODE_LATE=2) */ WRITE_MODE_AFTER;
		{
		do
		/* S6 */
		:: d_step { left > 0 && ph == 0 && CHOOSING_OK(j) -> ph = 1 }
#if SEQ
		/* S6 with a doorway counter: odd first read, wait for a change */
		:: d_step { left > 0 && ph == 0 && choosing[j] == 1 -> watch[i] = j + 1; ph = 4 }
		:: d_step { left > 0 && ph == 4 && (choosing[j] == 0 || changed[i]) ->
			UNWATCH(i); ph = 1 }
#endif
		/* S7 */
#if LOOK
		/* a writer's first look fails */
		:: d_step { left > 0 && ph == 1 && !again && m == W && !TICKET_OK(number[j]) -> LOOK_FAILS }
#endif
#if MODE_FIRST
		:: d_step { left > 0 && ph == 1 && m == W && TICKET_OK(number[j]) -> PASS(j) }
		:: d_step { left > 0 && ph == 1 && m == R && RETRY(j) -> mj = mode[j]; ph = 2 }
		:: d_step { left > 0 && ph == 2 -> nj = number[j];
			if
			:: TICKET_OK(nj) || mj == R -> PASS(j)
			:: else -> tried = 1; ph = 1
			fi }
#if LOOK
		/* a reader's first look fails */
		:: d_step { left > 0 && ph == 2 && !tried && !again && !TICKET_OK(number[j]) && mj != R ->
			LOOK_FAILS }
#endif
#else
		:: d_step { left > 0 && ph == 1 && (m == W -> TICKET_OK(number[j]) : RETRY(j)) ->
			nj = number[j];
			if
			:: TICKET_OK(nj) -> PASS(j)
			:: else -> ph = 2   /* only readers get here */
			fi }
		:: d_step { left > 0 && ph == 2 -> mj = mode[j];
			if
			:: mj == R -> PASS(j)
			:: else -> tried = 1; ph = 1
			fi }
#if LOOK
		/* a reader's first look fails */
		:: d_step { left > 0 && ph == 2 && !tried && !again && mode[j] != R -> LOOK_FAILS }
#endif
#endif
		:: d_step { left == 0 ->	/* all j passed: enter the CS */
			assert(nw == 0 && (m == R || nr == 0));   /* exclusion */
#if FIFO
			assert(ahead[i] == 0);                    /* FIFO      */
#endif
			if :: m == R -> nr++ :: else -> nw++ fi;
#if REACH
			reach = (nr >= 2); assert(!reach);        /* witness   */
#endif
			in_cs[i] = 1;
			wmask = wmask & ~BIT(i); UNAHEAD(i); pend[i] = 0; j = 0 };
			/* CS, then S9 */
			d_step { LEAVE_CS(i); number[i] = 0; num = 0 };
			break
		od
		} unless {
			d_step { abort_req[i] ->
				number[i] = 0; abort_req[i] = 0;
				wmask = wmask & ~BIT(i); UNAHEAD(i); AHEAD_CLR(i);
				pend[i] = 0; j = 0; left = 0; num = 0; ph = 0; nj = 0; mj = 0; tried = 0; again = 0;
				UNWATCH(i) }
		}
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor (see lamport.pml);
	   mode[i] is not touched ---- */
	if
	:: d_step { dead[i] -> j = 0; left = 0; num = 0; ph = 0; nj = 0; mj = 0; tried = 0; again = 0; m = 0;
		UNWATCH(i);
		RESET_CHOOSING(i) };
	   d_step { RESET_NUMBER(i); dead[i] = 0; pend[i] = 0 }
	:: d_step { dead[i] -> j = 0; left = 0; num = 0; ph = 0; nj = 0; mj = 0; tried = 0; again = 0; m = 0;
		UNWATCH(i);
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
#define DROP_CS(k)  if :: in_cs[k] -> LEAVE_CS(k) :: else fi
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
/* slot k is checked if bit k of LIVE_MASK is set (default: all) */
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
