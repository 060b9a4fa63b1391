/* SPDX-License-Identifier: MIT */
/*
 * black_white_shared.pml -- SPIN model of the Black-White Bakery lock with
 *                           a shared (reader) mode, with crashes, recovery,
 *                           slot reuse and aborts.
 *
 * Paper : Taubenfeld, "The Black-White Bakery Algorithm", DISC 2004,
 *         Algorithm 3 with the active set = all slots (as black_white.pml),
 *         extended with a per-slot mode register: every await of a waiter
 *         i on j also holds when both passages are shared (readers), and
 *         every passage, shared or not, leaves by the paper's exit
 *         (color := the other colour, then its number := 0).
 *
 * Registers are atomic and sequentially consistent; one Promela step = one
 * shared access.  ticket[k] = (mycolor[k], number[k]) is one word (as in
 * black_white.pml); mode[k] is a register of its own (1 = shared).
 *
 * Steps of process i (slot i), m = the mode of this passage:
 *   B1  choosing[i] := 1                       (or, QUIT: leave for good)
 *   B1m mode[i] := m
 *   B2  c := color
 *   B3  read the other tickets; ticket[i] := (c, 1 + max of colour c)
 *   B4  choosing[i] := 0                       -- end of the doorway
 *   for each j != i, from any other slot, round (N-1 wraps to 0, i is
 *   skipped), each once; the first is chosen nondeterministically at B4
 *   (the C code starts after its predecessor in line):
 *   B6      await choosing[j] == 0 (SEQ: the doorway counter's wait)
 *   B7      repeat (each try from fresh reads, one step each, in the C
 *           code's order: ticket j, then color if needed, then mode[j]):
 *             read ticket j; the first read chooses the branch
 *             (same colour as c or not);
 *             same : pass if number[j] == 0 or (number[j],j) >= (num,i)
 *                    or mycolor[j] != c
 *             other: pass if number[j] == 0 or mycolor[j] == c,
 *                    else read color: pass if c != color
 *             else, if m == R: read mode[j]: pass if it is R (shared)
 *           until pass
 *           (LOOK: the first look of wait_for_others, lib/algo/black_white.c:
 *           a failed try goes back to B6 for the same j, the branch then
 *           chosen afresh, once per j; any failed try before that may be
 *           the look, as tries only read)
 *       CS
 *   B12 color := 1 - c
 *   B13 ticket[i] := (c, 0)
 * The order of the j's is free: the argument for exclusion and FIFO is made
 * for each j on its own (as black_white.pml's), whatever i passed before.
 * A failed try changes nothing but the waiter's copies of what it read:
 * the next try is taken only once one of those registers differs from its
 * copy (a try over the same values fails the same way; leaving it out
 * drops no behaviour and keeps deadlocks visible as invalid end states).
 *
 * Faults: as black_white.pml (crash at any step, reset of choosing and
 * number by a survivor in either order, colour and mode untouched, then
 * reuse; abort: ticket := (c, 0)).
 *
 * Variant switches (-D):
 *   N=2|3           number of slots                   (default 3)
 *   CRASHES, ABORTS fault budgets                     (default 0)
 *   BOUND=k         assert number <= k at every B3 (default N + CRASHES +
 *                   ABORTS, as black_white.pml)
 *   RMASK, WMASK    slot k may take shared passages if bit k of RMASK is
 *                   set, exclusive ones if bit k of WMASK is set (both:
 *                   chosen anew for every passage).   (default: all, all)
 *   NOFLIP=1        what the C code does: readers never write the colour
 *                   (only a writer's exit flips it); readers pass readers
 *                   of either colour.  Numbers then grow while readers
 *                   overlap (as Lamport's): bound the state space with
 *                   NORM=1 (exact), or with PASSAGES (passages started,
 *                   all slots together; a slot with none left stays in
 *                   its remainder, a valid end state, so liveness cannot
 *                   be checked that way); use with -DBOUND=99.
 *   NORM=1          renormalise the numbers after every step that changes
 *                   one (see NORMALIZE below): 0, the order and "is one
 *                   more than" between all numbers, shared and local, are
 *                   kept, nothing else.  Every guard and update of the
 *                   model depends on nothing else, so the normalised
 *                   system is bisimilar to the unbounded one: no cap, no
 *                   budget, every run infinite, liveness checkable.
 *   PASSAGES=k      see NOFLIP                         (default 255;
 *                   ignored with NORM)
 *   SEQ=1           choosing[k] is a doorway counter, as the C code's
 *                   (and lamport_shared.pml's SEQ=1): the B6 wait passes
 *                   when it is even or differs from the odd value read
 *                   first.  Default 0 (a bit): with NOFLIP a reader
 *                   returning past a waiting reader can keep it at B6 for
 *                   ever (must fail the liveness check).
 *   QUIT=1          a process in its remainder may leave for good
 *                   (default: NORM).  Without it weak fairness makes
 *                   every slot keep asking, which hides the starvation of
 *                   one slot by another while the rest stay away.
 *   SAME_COLOR=1    the shared term is added to the same-colour await only:
 *                   a reader waits for a reader of the other colour as for
 *                   anybody.
 *   REACH=1         MUST FAIL (reachability): assert that two readers are
 *                   never inside together.
 *   FIFO=0, DEAD_HOLDS=0, LIVENESS (and LIVE_MASK) as lamport_shared.pml.
 *
 * Properties: exclusion (nw, nr), FIFO between conflicting modes, bounded
 * tickets (not with NOFLIP), no deadlock, starvation freedom (with the
 * paper's exit; with NOFLIP only with NORM): as lamport_shared.pml and
 * black_white.pml.  With SAME_COLOR=1, also: every passage inside has the
 * colour of the one entering (assert !mixed).
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
#ifndef BOUND
#define BOUND (N + CRASHES + ABORTS)
#endif
#ifndef RMASK
#define RMASK 15
#endif
#ifndef WMASK
#define WMASK 15
#endif
#ifndef PASSAGES
#define PASSAGES 255
#endif
#ifndef NOFLIP
#define NOFLIP 0
#endif
#ifndef SAME_COLOR
#define SAME_COLOR 0
#endif
#ifndef REACH
#define REACH 0
#endif
#ifndef SEQ
#define SEQ 0
#endif
#ifndef NORM
#define NORM 0
#endif
#ifndef QUIT
#define QUIT NORM
#endif
#ifndef FIFO
#define FIFO 1
#endif
#ifndef DEAD_HOLDS
#define DEAD_HOLDS 1
#endif
#if N != 2 && N != 3
#error "N must be 2 or 3"
#endif

#define W 0
#define R 1

/* ---------------- shared registers (the C code's) ---------------- */
bit  color;          /* the shared colour bit                       */
bit  choosing[N];
bit  mycolor[N];     /* ticket[k] = (mycolor[k], number[k]), one word */
bit  mode[N];
/* every number of the model in one array, for NORM: number[k] (shared),
   then each process's own number mynum and its copy tn of number[j] (B7);
   num: the number just taken, for the bound's assertion only */
byte val[3*N];
#define number  val
#define mynum   val[N + i]
#define tn      val[2*N + i]

/* ---------------- ghost state (model only) ---------------- */
byte nw;             /* writers in the CS                               */
byte nr;             /* readers in the CS                               */
byte wmask;          /* bit k: k finished its doorway, waits for the CS */
byte ahead[N];       /* FIFO: see lamport_shared.pml                    */
bit  pend[N];        /* liveness obligation of slot k                   */
bit  dead[N];        /* slot crashed, recovery not finished             */
bit  in_cs[N];       /* incarnation in the CS (dead: until its reset)   */
bit  abort_req[N];   /* Fault asked k to give up                        */
bit  reach;          /* REACH: two readers inside                       */
byte budget = PASSAGES;   /* passages left to start, all slots (NOFLIP: numbers grow) */
bit  mixed;          /* SAME_COLOR: two colours inside                  */
byte crashes = CRASHES;
byte aborts  = ABORTS;
byte g;              /* ghost loop index (inside d_steps only)          */
byte watch[N];       /* SEQ: 1 + the slot k's choosing wait is on, or 0 */
bit  changed[N];     /* SEQ: that slot ended a doorway since            */
bit  quit[N];        /* QUIT: k left for good from its remainder        */
hidden byte num;     /* B3: the number taken, as the assertion names it */
hidden byte nz_o;    /* NORM scratch (not part of the state)            */
hidden byte nz_n;
hidden byte nz_m;
hidden byte nz_k;
hidden short nz_done;

#define BIT(k)        (1 << (k))
#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)
/* the wait (B6, B7): `left` other slots still to pass, from j, round; j
   is 0 when none is left (states merge) */
#define WNEXT(j)      left--; \
                      if \
                      :: left == 0 -> j = 0 \
                      :: else -> j = (j + 1) % N; if :: j == i -> j = (j + 1) % N :: else fi \
                      fi

#if FIFO
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

/* NORM: map every number (shared, mynum, tn) to its canonical value,
   keeping 0, the order, and which value is another plus one: the k-th
   smallest non-zero value v becomes w(k-1) + 1 if v = v(k-1) + 1, else
   w(k-1) + 2 (v(0) = w(0) = 0).  Every guard and update of the model
   only compares numbers, tests them against 0 and takes max + 1, and
   each of those gives the same answer before and after the mapping: the
   mapped system is bisimilar to the unbounded one, and finite (values at
   most 2 * 3N).  Applied at the end of every step that changes a number. */
#if NORM
#define NORMALIZE \
	nz_o = 0; nz_n = 0; nz_done = 0; \
	do \
	:: nz_m = 255; \
	   for (nz_k : 0 .. 3*N-1) { \
		if \
		:: !((nz_done >> nz_k) & 1) && val[nz_k] != 0 && val[nz_k] < nz_m -> nz_m = val[nz_k] \
		:: else \
		fi }; \
	   if \
	   :: nz_m == 255 -> break \
	   :: else -> \
		nz_n = nz_n + (nz_m == nz_o + 1 -> 1 : 2); \
		for (nz_k : 0 .. 3*N-1) { \
			if \
			:: !((nz_done >> nz_k) & 1) && val[nz_k] == nz_m -> \
				val[nz_k] = nz_n; nz_done = nz_done | (1 << nz_k) \
			:: else \
			fi }; \
		nz_o = nz_m \
	   fi \
	od; \
	nz_o = 0; nz_n = 0; nz_m = 0; nz_k = 0; nz_done = 0
#else
#define NORMALIZE skip
#endif

#define RESET_CHOOSING(k)  choosing[k] = 0; DOORWAY_DONE(k)
#define RESET_NUMBER(k)    number[k] = 0; if :: in_cs[k] -> LEAVE_CS(k) :: else fi

/* B7: a new try only if a register read by the failed one has changed */
#define RETRY(j)  (!tried || number[j] != tn || mycolor[j] != tc || \
		   (br == 2 && color != cc) || (m == R && mode[j] != mj))
#define PASS(j)   tn = 0; tc = 0; cc = 0; mj = 0; tried = 0; br = 0; ph = 0; again = 0; WNEXT(j); NORMALIZE
/* a first look at B7 fails: back to B6 for j, once, the branch undecided */
#define LOOK_FAILS  tn = 0; tc = 0; cc = 0; mj = 0; tried = 0; br = 0; ph = 0; again = 1; NORMALIZE
/* B4, the wait starting at slot k (any other one: one branch per k) */
#define B4_FROM(k)  :: d_step { i != k -> choosing[i] = 0; DOORWAY_DONE(i); \
                                 wmask = wmask | BIT(i); pend[i] = 1; j = k; left = N - 1 }
/* the try failed on the ticket (and colour) terms: readers go on to mode */
#if SAME_COLOR
#define TO_MODE   (m == R && br == 1)
#else
#define TO_MODE   (m == R)
#endif
#define FAIL      tried = 1; ph = 1
/* NOFLIP without NORM: a budget of passages; NORM needs none */
#if NORM
#define BUDGET
#else
#define BUDGET    budget > 0 -> budget--;
#endif

active [N] proctype P()
{
	byte i = _pid; /* slot index = pid (the P's are instantiated first) */
	byte j;        /* loop index over the other slots              */
	byte left;     /* wait: other slots still to pass (0 elsewhere) */
	bit  c;        /* B2: own colour                               */
	               /* mynum: own number, val[N + i] (see NORM)    */
	bit  m;        /* this passage's mode                          */
	byte ph;       /* B7 phase: 0 B6, 1 ticket, 2 color, 3 mode    */
	byte br;       /* B7 branch: 0 undecided, 1 same, 2 other      */
	               /* B7 copies: tn = number[j] (val[2N + i]), mycolor[j], color, mode[j] */
	bit  tc;
	bit  cc;
	bit  mj;
	bit  tried;    /* B7: the last try failed                      */
	bit  again;    /* B6, B7 once more after a first look failed   */

incarnation:
	{
end_rem:
	do
	::	/* B1, with the choice of mode */
		if
		:: ((RMASK >> i) & 1) ->
			d_step { BUDGET choosing[i] = 1; m = R; AHEAD_START(i, R); FIRST(j); mynum = 0 }
		:: ((WMASK >> i) & 1) ->
			d_step { BUDGET choosing[i] = 1; m = W; AHEAD_START(i, W); FIRST(j); mynum = 0 }
#if QUIT
		:: quit[i] = 1; goto gone   /* never asks again */
#endif
		fi;
		/* B1m */ mode[i] = m;
		/* B2 */ c = color;
		/* B3 */
		do
		:: d_step { j < N ->
			if :: mycolor[j] == c && number[j] > mynum -> mynum = number[j]; NORMALIZE :: else fi;
			NEXT(j) }
		:: d_step { j >= N -> mynum++; j = 0;
			num = mynum; assert(num <= BOUND); num = 0;            /* bounded tickets */
			mycolor[i] = c; number[i] = mynum; NORMALIZE };
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
		do
		/* B6 */
		:: d_step { left > 0 && ph == 0 && choosing[j] == 0 -> ph = 1 }
#if SEQ
		/* B6 with a doorway counter: odd first read, wait for a change */
		:: d_step { left > 0 && ph == 0 && choosing[j] == 1 -> watch[i] = j + 1; ph = 4 }
		:: d_step { left > 0 && ph == 4 && (choosing[j] == 0 || changed[i]) ->
			UNWATCH(i); ph = 1 }
#endif
		/* B7: ticket j */
		:: d_step { left > 0 && ph == 1 && RETRY(j) ->
			tn = number[j]; tc = mycolor[j]; tried = 0; NORMALIZE;
			if :: br == 0 -> br = (tc == c -> 1 : 2) :: else fi;
			if
			:: tn == 0 -> PASS(j)
			:: tn != 0 && br == 1 && (!LESS(tn, j, mynum, i) || tc != c) -> PASS(j)
			:: tn != 0 && br == 2 && tc == c -> PASS(j)
			:: tn != 0 && br == 2 && tc != c -> ph = 2
			:: else -> if :: TO_MODE -> ph = 3 :: else -> FAIL fi
			fi }
#if LOOK
		/* B7: a first look fails on ticket j (writers: readers go on to mode) */
		:: d_step { left > 0 && ph == 1 && !again && RETRY(j) && m == W &&
		            number[j] != 0 && mycolor[j] == c && br != 2 &&
		            LESS(number[j], j, mynum, i) -> LOOK_FAILS }
#endif
		/* B7: color (other-colour branch) */
		:: d_step { left > 0 && ph == 2 -> cc = color;
			if
			:: c != cc -> PASS(j)
			:: else -> if :: TO_MODE -> ph = 3 :: else -> FAIL fi
			fi }
#if LOOK
		/* B7: a first look fails on color */
		:: d_step { left > 0 && ph == 2 && !again && color == c && !TO_MODE -> LOOK_FAILS }
#endif
		/* B7: mode[j] (readers) */
		:: d_step { left > 0 && ph == 3 -> mj = mode[j];
			if
			:: mj == R -> PASS(j)
			:: else -> FAIL
			fi }
#if LOOK
		/* B7: a first look fails on mode[j] */
		:: d_step { left > 0 && ph == 3 && !again && mode[j] != R -> LOOK_FAILS }
#endif
		:: d_step { left == 0 ->	/* all j passed: enter the CS */
			assert(nw == 0 && (m == R || nr == 0));   /* exclusion */
#if FIFO
			assert(ahead[i] == 0);                    /* FIFO      */
#endif
#if SAME_COLOR
			/* one colour inside at a time (what keeps the colour from
			   flipping back under a reader) */
			mixed = 0;
			for (g : 0 .. N-1) {
				if :: in_cs[g] && mycolor[g] != c -> mixed = 1 :: else fi
			}; g = 0;
			assert(!mixed);
#endif
			if :: m == R -> nr++ :: else -> nw++ fi;
#if REACH
			reach = (nr >= 2); assert(!reach);        /* witness   */
#endif
			in_cs[i] = 1;
			wmask = wmask & ~BIT(i); UNAHEAD(i); pend[i] = 0; j = 0 };
			/* CS, then B12 */
#if NOFLIP
			/* readers leave the colour alone (lib/algo/black_white.c) */
			d_step { LEAVE_CS(i); if :: m == W -> color = 1 - c :: else fi };
#else
			d_step { LEAVE_CS(i); color = 1 - c };
#endif
			/* B13 */ d_step { number[i] = 0; mynum = 0; c = 0; NORMALIZE };
			break
		od
		} unless {
			d_step { abort_req[i] ->
				number[i] = 0; abort_req[i] = 0;
				wmask = wmask & ~BIT(i); UNAHEAD(i); AHEAD_CLR(i);
				pend[i] = 0; j = 0; left = 0; mynum = 0; c = 0; UNWATCH(i);
				ph = 0; br = 0; tn = 0; tc = 0; cc = 0; mj = 0; tried = 0; again = 0; NORMALIZE }
		}
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor (see
	   black_white.pml); color and mode[i] are not touched ---- */
	if
	:: d_step { dead[i] -> j = 0; left = 0; mynum = 0; c = 0; m = 0;
		ph = 0; br = 0; tn = 0; tc = 0; cc = 0; mj = 0; tried = 0; again = 0; UNWATCH(i);
		RESET_CHOOSING(i); NORMALIZE };
	   d_step { RESET_NUMBER(i); dead[i] = 0; pend[i] = 0; NORMALIZE }
	:: d_step { dead[i] -> j = 0; left = 0; mynum = 0; c = 0; m = 0;
		ph = 0; br = 0; tn = 0; tc = 0; cc = 0; mj = 0; tried = 0; again = 0; UNWATCH(i);
		RESET_NUMBER(i); NORMALIZE };
	   d_step { RESET_CHOOSING(i); dead[i] = 0; pend[i] = 0 }
	fi;
	goto incarnation
	};
gone:
end_gone:
	skip
}

#if DEAD_HOLDS
#define DROP_CS(k)  skip
#else
#define DROP_CS(k)  if :: in_cs[k] -> LEAVE_CS(k) :: else fi
#endif
#define CRASH(k)  :: d_step { crashes > 0 && !dead[k] && !quit[k] -> \
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
	ABORT(0)
	ABORT(1)
#if N > 2
	ABORT(2)
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
#else
ltl starvation_free { LIVE(0) && LIVE(1) && LIVE(2) }
#endif
#endif
