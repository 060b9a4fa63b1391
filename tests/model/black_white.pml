/* SPDX-License-Identifier: MIT */
/*
 * black_white.pml -- SPIN model of the Black-White Bakery lock as
 *                    libbakery runs it, with crashes, recovery, slot reuse
 *                    and aborts.
 *
 * Paper : Taubenfeld, "The Black-White Bakery Algorithm", Algorithm 2, and
 *         DISC 2004, Algorithm 3 with the active set = all slots.
 * Mirrors: lib/algo/black_white.c
 *
 * Registers are atomic and sequentially consistent (the C code puts a full
 * barrier at every store->load point).  One Promela step = one shared access;
 * purely local computation is folded into the step of the access it follows.
 * The ticket (mycolor[j], number[j]) of a slot is ONE atomic word in the
 * code: it is always read and written as a pair here.
 *
 * Steps of process i (slot i), matching the labels in the C code:
 *   B1  choosing[i] := 1
 *   B2  c := color                             (local copy)
 *   B3  for each j != i (increasing index): read ticket j (atomic);
 *       num := 1 + max{ number[j] : mycolor[j] == c };
 *       ticket[i] := (c, num)                  (one store)
 *   B4  choosing[i] := 0                       -- end of the doorway
 *   for each j != i, from any other slot, round (N-1 wraps to 0, i is
 *   skipped), each once; the first is chosen nondeterministically at B4
 *   (the C code starts after its predecessor in line):
 *   B6      await choosing[j] == 0
 *   B7      read ticket j (atomic);
 *           if mycolor[j] == c:
 *               await number[j] == 0 || (number[j],j) >= (num,i) || mycolor[j] != c
 *           else
 *               await number[j] == 0 || c != color || mycolor[j] == c
 *           (each await re-reads ticket j, and color, every time round)
 *           (LOOK: the first look of wait_for_others: a first B7 that fails, on
 *           one read of ticket j and, in the other-colour branch, one of
 *           color, goes back to B6 for the same j, then B7 with its branch
 *           taken afresh; once per j)
 *       CS
 *   B12 color := 1 - c
 *   B13 ticket[i] := (c, 0)
 * The order of the j's is free: Taubenfeld's argument for mutual exclusion
 * and FIFO is made for each j on its own (after its B3, i saw j out of its
 * doorway, then j's ticket gone or not ahead of its own), whatever i passed
 * before.
 * The first B7 read decides the branch and is the first evaluation of its
 * await.  The re-reads are modelled as a blocking guard over the current
 * ticket j (and color): a failed re-read changes nothing, so the blocking
 * guard has the same behaviours as the polling loop, whether ticket j and
 * color are read together or one after the other.
 *
 * Faults:
 *   crash   -- the Fault process may stop any live process at any step
 *              (at most CRASHES per run).  The stopped process's body is
 *              left through `unless { dead[i] }`; what follows the escape is
 *              the RECOVERY of slot i, performed on i's registers "by a
 *              survivor" (in the C code: any waiter, or bakery_recover()).
 *              Modelling the recoverer's steps inside the dead slot's own
 *              proctype is equivalent: they only write slot i's registers,
 *              interleave freely with everybody, and may be delayed
 *              arbitrarily (under weak fairness they eventually happen,
 *              as the C code guarantees).  The Fault process may also
 *              stop making faults at any time (so fault-free runs, and
 *              runs with fewer faults, are included in every
 *              configuration).
 *              Recovery: choosing[d] := 0 and number[d] := 0 (the ticket
 *              becomes (mycolor[d], 0): the colour is left as it is), in
 *              either order (both orders are explored), as two separate
 *              steps.  The recoverer never touches `color`.
 *              The first recovery write is the dead proctype's escape
 *              step, so it happens at any time after the crash; the
 *              dead incarnation's locals are dropped there.  When the
 *              recovery has finished (and only then, the registry rule)
 *              the slot is REUSED: a fresh incarnation (all locals reset)
 *              restarts from the remainder region, where it may stay
 *              arbitrarily long (which covers a slot nobody claims).
 *              A recoverer that dies half-way is replaced by the next
 *              one, which redoes the (idempotent) writes: that is only a
 *              delay, and delays are all explored.
 *   abort   -- the Fault process may ask a process that is waiting (after
 *              B4, before the CS) to give up (at most ABORTS per run); the
 *              process leaves at its next step: ticket[i] := (c, 0) and
 *              back to the remainder region (choosing[i] is already 0).
 *
 * Variant switches (-D):
 *   N=2|3          number of slots                    (default 2)
 *   CRASHES=0..2   crash budget per run               (default 0)
 *   ABORTS=0..2    abort budget per run               (default 0)
 *   BOUND=k        assert number <= k at every B3 (default: N + CRASHES +
 *                  ABORTS, the bound the library relies on; without faults
 *                  that is the paper's bound n).  -DBOUND=N with a fault
 *                  budget is EXPECTED TO FAIL: each crash or abort within
 *                  a colour epoch can push a later ticket one higher.
 *   FLIP=1         MUST FAIL: the recoverer also flips `color`
 *                  (color := 1 - color, one atomic step before the resets),
 *                  as if it finished the dead thread's exit section.
 *   DEAD_HOLDS=0   a process that dies in the CS stops counting as "in the
 *                  CS" at the crash (default 1: until its number is reset,
 *                  which is stronger).  Used to show that a must-fail
 *                  variant lets two LIVE threads into the CS.
 *   FIFO=0         no doorway-FIFO ghost and assertion (default 1).  Used
 *                  for the liveness runs (smaller state space; FIFO is
 *                  checked by the safety runs) and to see which other
 *                  property a must-fail variant breaks.
 *   LIVENESS       define (spin -DLIVENESS) to include the LTL property.
 *
 * Properties:
 *   - mutual exclusion : ghost ncs (incarnations in the CS; a process that
 *                        died in the CS counts until its number is reset),
 *                        assert ncs <= 1 at every CS entry;
 *   - doorway FIFO     : ghost ahead[j] = set of processes that had finished
 *                        their doorway (and are still waiting) when j ran B1;
 *                        j asserts ahead[j] == 0 when entering the CS (a
 *                        process leaves every ahead[] set when it enters the
 *                        CS, aborts or crashes);
 *   - bounded tickets  : assert number <= BOUND when a ticket is taken (B3);
 *   - no deadlock      : pan's invalid-end-state check (safety runs);
 *   - starvation freedom (LIVENESS, pan -a -f): for every slot k,
 *                        []<> !pend[k], pend[k] = "k finished its doorway
 *                        and has neither entered the CS nor aborted nor
 *                        crashed, or k crashed and its recovery is not
 *                        finished".  Crashed processes never progress, but
 *                        their recovery must.
 */

/* LOOK: the wait loop's first look at each slot (lib/algo): a failed first
   read of j's ticket condition goes back to j's doorway wait.  Off by
   default (the paper's loop); run-models.sh checks it in its LOOK
   configurations, whose state spaces it grows several times. */
#ifndef LOOK
#define LOOK 0
#endif
#ifndef N
#define N 2
#endif
#ifndef CRASHES
#define CRASHES 0
#endif
#ifndef ABORTS
#define ABORTS 0
#endif
#ifndef BOUND
#define BOUND (N + CRASHES + ABORTS)
#endif
#ifndef FLIP
#define FLIP 0
#endif
#ifndef FIFO
#define FIFO 1
#endif
#ifndef DEAD_HOLDS
#define DEAD_HOLDS 1
#endif

/* ---------------- shared registers (the C code's) ---------------- */
bit  color;          /* the shared colour bit                       */
bit  choosing[N];
bit  mycolor[N];     /* ticket[k] = (mycolor[k], number[k]), one word */
byte number[N];

/* ---------------- ghost state (model only) ---------------- */
byte ncs;            /* incarnations in the CS                          */
byte wmask;          /* bit k: k finished its doorway, waits for the CS */
byte ahead[N];       /* FIFO: see header                                */
bit  pend[N];        /* liveness obligation of slot k                   */
bit  dead[N];        /* slot crashed, recovery not finished             */
bit  in_cs[N];       /* incarnation in the CS (dead: until its reset)   */
bit  abort_req[N];   /* Fault asked k to give up                        */
byte crashes = CRASHES;
byte aborts  = ABORTS;

#define BIT(k)        (1 << (k))
/* FIFO ghost: k starts its doorway / leaves every "ahead" set / forgets */
#if FIFO
#define AHEAD_START(k)  ahead[k] = wmask
#define AHEAD_CLR(k)    ahead[k] = 0
#if N == 2
#define UNAHEAD(k)      ahead[0] = ahead[0] & ~BIT(k); ahead[1] = ahead[1] & ~BIT(k)
#elif N == 3
#define UNAHEAD(k)      ahead[0] = ahead[0] & ~BIT(k); ahead[1] = ahead[1] & ~BIT(k); \
                        ahead[2] = ahead[2] & ~BIT(k)
#endif
#else
#define AHEAD_START(k)  skip
#define AHEAD_CLR(k)    skip
#define UNAHEAD(k)      skip
#endif
#if N != 2 && N != 3
#error "N must be 2 or 3"
#endif

/* (a,i) < (b,j) lexicographically */
#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))

/* B7 awaits, over the current ticket j (and color) */
#define SAME_OK(j)   (number[j] == 0 || !LESS(number[j], j, num, i) || mycolor[j] != c)
#define OTHER_OK(j)  (number[j] == 0 || c != color || mycolor[j] == c)

/* B6 and B7 for j once more, after a first look that failed */
#define B7_AGAIN(j) \
	/* B6 */ (choosing[j] == 0); \
	/* B7 */ \
	if \
	:: d_step { mycolor[j] == c && SAME_OK(j) -> WNEXT(j) } \
	:: d_step { mycolor[j] == c && !SAME_OK(j) }; \
	   d_step { SAME_OK(j) -> WNEXT(j) } \
	:: d_step { mycolor[j] != c && number[j] == 0 -> WNEXT(j) } \
	:: d_step { mycolor[j] != c && number[j] != 0 }; \
	   d_step { OTHER_OK(j) -> WNEXT(j) } \
	fi

/* advance a "for each j != i" index to the next other slot */
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)

/* the wait (B6, B7): `left` other slots still to pass, from j, round; j
   is 0 when none is left (states merge) */
#define WNEXT(j)      left--; \
                      if \
                      :: left == 0 -> j = 0 \
                      :: else -> j = (j + 1) % N; if :: j == i -> j = (j + 1) % N :: else fi \
                      fi
/* B4, the wait starting at slot k (any other one: one branch per k) */
#define B4_FROM(k)    :: d_step { i != k -> \
                         choosing[i] = 0; wmask = wmask | BIT(i); pend[i] = 1; j = k; left = N - 1 }

/* recovery writes; the one that clears number also ends the dead
   incarnation's (ghost) stay in the CS */
#define RESET_CHOOSING(k)  choosing[k] = 0
#define RESET_NUMBER(k)    number[k] = 0; if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi

active [N] proctype P()
{
	byte i = _pid; /* slot index = pid (the P's are instantiated first) */
	byte j;        /* loop index over the other slots              */
	byte left;     /* wait: other slots still to pass (0 elsewhere) */
	bit  c;        /* B2: own colour (local copy of mycolor[i])    */
	byte num;      /* own number (local copy of number[i])         */

incarnation:
	{
	do
	::	/* remainder region, then the doorway */
		/* B1 */ d_step { choosing[i] = 1; AHEAD_START(i); FIRST(j); num = 0 };
		/* B2 */ c = color;
		/* B3: read the other tickets, one atomic read each */
		do
		:: d_step { j < N ->
			if :: mycolor[j] == c && number[j] > num -> num = number[j] :: else fi;
			NEXT(j) }
		:: d_step { j >= N -> num++; j = 0;
			assert(num <= BOUND);            /* bounded tickets */
			mycolor[i] = c; number[i] = num };
		   /* B4, and the slot the wait starts from */
		   if
		   B4_FROM(0)
		   B4_FROM(1)
#if N > 2
		   B4_FROM(2)
#endif
		   fi;
		   break
		od;
		{
		/* for each j != i, from the chosen one, round */
		do
		:: left > 0 ->
			/* B6 */ (choosing[j] == 0);
			/* B7; or a first look at it fails: B6, B7 again */
			if
			:: d_step { mycolor[j] == c && SAME_OK(j) -> WNEXT(j) }
			:: d_step { mycolor[j] == c && !SAME_OK(j) };
			   d_step { SAME_OK(j) -> WNEXT(j) }
#if LOOK
			:: d_step { mycolor[j] == c && !SAME_OK(j) };
			   B7_AGAIN(j)
#endif
			:: d_step { mycolor[j] != c && number[j] == 0 -> WNEXT(j) }
			:: d_step { mycolor[j] != c && number[j] != 0 };
			   if
			   :: d_step { OTHER_OK(j) -> WNEXT(j) }
#if LOOK
			   :: d_step { color == c };	/* the look's read of color */
			      B7_AGAIN(j)
#endif
			   fi
			fi
		:: d_step { left == 0 ->	/* all j passed: enter the CS */
			assert(ncs == 0);                /* mutual exclusion */
#if FIFO
			assert(ahead[i] == 0);           /* doorway FIFO     */
#endif
			ncs++; in_cs[i] = 1;
			wmask = wmask & ~BIT(i); UNAHEAD(i); pend[i] = 0; j = 0 };
			/* CS.  Leaving it and B12 are one step (nothing shared in
			   between).  (Inside the abort block only for Promela's
			   sake: abort requests go to waiting processes only.) */
			/* B12 */ d_step { ncs--; in_cs[i] = 0; color = 1 - c };
			/* B13 */ d_step { number[i] = 0; num = 0; c = 0 };
			break
		od
		} unless {
			/* abort (trylock/timedlock gives up): ticket := (c, 0), and
			   back to the remainder region */
			d_step { abort_req[i] ->
				number[i] = 0; abort_req[i] = 0;
				wmask = wmask & ~BIT(i); UNAHEAD(i); AHEAD_CLR(i);
				pend[i] = 0; j = 0; left = 0; num = 0; c = 0 }
		}
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor (see header).
	   The escape step is the recoverer's first step; it may happen at
	   any time after the crash.  The locals of the dead incarnation are
	   dropped there. ---- */
#if FLIP
	/* MUST FAIL variant: the recoverer also flips the colour bit */
	d_step { dead[i] -> j = 0; left = 0; num = 0; c = 0; color = 1 - color };
	if
	:: d_step { RESET_CHOOSING(i) };
	   d_step { RESET_NUMBER(i); dead[i] = 0; pend[i] = 0 }
	:: d_step { RESET_NUMBER(i) };
	   d_step { RESET_CHOOSING(i); dead[i] = 0; pend[i] = 0 }
	fi;
#else
	/* either order; the second write also ends the recovery, after
	   which the registry may hand the slot to a new thread */
	if
	:: d_step { dead[i] -> j = 0; left = 0; num = 0; c = 0; RESET_CHOOSING(i) };
	   d_step { RESET_NUMBER(i); dead[i] = 0; pend[i] = 0 }
	:: d_step { dead[i] -> j = 0; left = 0; num = 0; c = 0; RESET_NUMBER(i) };
	   d_step { RESET_CHOOSING(i); dead[i] = 0; pend[i] = 0 }
	fi;
#endif
	/* a new thread claims the slot: fresh incarnation */
	goto incarnation
	}
}

#if DEAD_HOLDS
#define DROP_CS(k)  skip
#else
#define DROP_CS(k)  if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi
#endif
#define CRASH(k)  :: d_step { crashes > 0 && !dead[k] -> \
			crashes--; dead[k] = 1; abort_req[k] = 0; DROP_CS(k); \
			wmask = wmask & ~BIT(k); UNAHEAD(k); AHEAD_CLR(k); pend[k] = 1 }
#define ABORT(k)  :: d_step { aborts > 0 && (wmask & BIT(k)) && !dead[k] && !abort_req[k] -> \
			aborts--; abort_req[k] = 1 }

#if CRASHES > 0 || ABORTS > 0
/* the environment: crashes and abort requests */
active proctype Fault()
{
end_fault:
	do
	CRASH(0)
	CRASH(1)
#if N > 2
	CRASH(2)
#endif
	ABORT(0)
	ABORT(1)
#if N > 2
	ABORT(2)
#endif
	:: break   /* no more faults */
	od
}
#endif

#ifdef LIVENESS
#if N == 2
ltl starvation_free { []<> !pend[0] && []<> !pend[1] }
#else
ltl starvation_free { []<> !pend[0] && []<> !pend[1] && []<> !pend[2] }
#endif
#endif
