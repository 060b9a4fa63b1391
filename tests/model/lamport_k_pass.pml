/* SPDX-License-Identifier: MIT */
/*
 * lamport_k_pass.pml -- SPIN model of passing a waiter of a lock of K > 1
 *                       holders (lib/pass.c) on Lamport's Bakery admitting
 *                       up to K holders (lamport_k.pml), with crashes of
 *                       passers and of the passed at every step.
 *
 * Mirrors: bakery__holders_wait (lib/algo/common.c), bakery__await_any and
 *          await_common (lib/wait.c: the publication of WAITING, the check
 *          for having been passed), lib/pass.c (the pass word, the clear,
 *          pass_recover), lib/lock.c (passage_attempt: settle, close).
 *
 * Registers are atomic and sequentially consistent, one Promela step per
 * shared access, as in lamport_k.pml (whose steps K1..K9 are reused; the
 * doorway's `choosing` is a bit) and pass.pml (whose pass word and steps
 * S, W, X, C, P1..P3, R1..R3 are reused).  The pass word of slot k:
 *     IDLE 0, WAITING 1, PASSING(p) = 2 + p, CLEARED(p) = 2 + N + p
 * Steps of process i:
 *   S   settle: await pass[i] not PASSING; CLEARED -> IDLE  (pass_settle)
 *   K1  choosing[i] := 1        (one step with S: once S has seen the word
 *       IDLE or CLEARED, no passer writes it before our next WAITING)
 *   K2  for each j != i: read number[j];  num := 1 + max
 *   K3  number[i] := num
 *   K4  choosing[i] := 0
 *   W   pass[i] := WAITING, in K4's step                   (pass_publish)
 *       Always, and early: the C code publishes later (at its first false condition
 *       of a blocking or timed wait) or never (a trylock, the uncontended
 *       path); an unpublished waiter is a published one nobody passes, and
 *       publishing earlier only gives passers more chances.
 *   K5  phase 1: for each j != i: await choosing[j] == 0
 *   K6  phase 2: sweeps counting the tickets ahead until fewer than K
 *       (a failed sweep is repeated only once a number it read changed,
 *       as in lamport_k.pml)
 *   X   published and pass[i] != WAITING, at any step of K5/K6: passed;
 *       back to S with no store of its own (await_any, await_common)
 *   C   before the CS, if published: CAS pass[i]: WAITING -> IDLE; if the
 *       word was not WAITING, it was passed: back to S    (pass_close)
 *       CS
 *   K9  number[i] := 0
 * The passer's steps, which any process may take while it waits (K5 or
 * K6), on any k != i whose word says WAITING, at most PASSES times in a
 * run.  The C code passes only a waiter whose turn came (fewer than K
 * tickets ahead, no doorway in progress) and that has not taken it for the
 * grace G; that is fairness, left out here: any waiter may be passed at
 * any time, which covers a live waiter delayed arbitrarily at any step:
 *   P1  CAS pass[k]: WAITING -> PASSING(i)
 *   P2  choosing[k] := 0, then number[k] := 0, two steps (clear_for's order)
 *   P3  pass[k] := CLEARED(i)
 * (The wake-up of the lock-wide `exits` word that follows a pass in the C
 * code only ends sleeps: a sleep is a blocking guard here.)
 * Crash (the Fault process) between any two steps of anyone; recovery of a
 * dead slot d by a survivor, in lib/lock_recovery.c's order:
 *   R1  CAS pass[d]: WAITING -> IDLE
 *   R2  for each k with pass[k] = PASSING(d): choosing[k] := 0,
 *       number[k] := 0, pass[k] := CLEARED(d)         (pass_recover)
 *   R3  choosing[d] := 0, number[d] := 0; then the slot may be reused.
 * Numbers above MAXNUM: the process retires (as lamport.pml).
 *
 * Variant switches (-D):
 *   N=3|4        slots (default 3; K + 1 at least to break the bound)
 *   K=2|3        holders admitted at once (default 2)
 *   CRASHES=0..2 crash budget (default 0)
 *   PASSES=1..3  pass budget (default 2)
 *   MAXNUM=k     ticket bound (default N+2)
 *   PASSED_MASK  the slots that may be passed (bit k: slot k; default all)
 *   PASSER_MASK  the slots that may pass (default all)
 *   CRASH_MASK   the slots that may crash (default all)
 *   CRASH_IN_PASS=1  a crash only while some pass word says PASSING (a
 *                pass in progress: the passer between P1 and P3, the
 *                passed being cleared); crashes elsewhere are those of
 *                lamport_k.pml.  The masks and this switch keep the runs
 *                of `make check` small; the others are behind --full.
 *   REACH=1      MUST FAIL (reachability): K inside together after a
 *                pass was completed; the violation is the witness that
 *                passing lets a taker in, so the model is not vacuous.
 *   NO_CLOSE=1   MUST FAIL: the passed owner does not re-validate: it
 *                enters without taking its word back (no CAS at C), and
 *                a passer clears the ticket of a holder inside: K + 1
 *                inside.
 *   NO_SETTLE=1  MUST FAIL: a passed owner does not wait for CLEARED: it
 *                resets its word and takes a new ticket at once, and the
 *                passer's late clear can wipe that ticket.
 *
 * Properties: at most K inside (ghost ncs, a dead process counting as
 * inside until its number is reset; asserted at every entry), and no
 * deadlock (pan's invalid end states).  Ticket order does not hold by
 * design: a passed waiter loses its place.
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
#ifndef PASSES
#define PASSES 2
#endif
#ifndef MAXNUM
#define MAXNUM (N+2)
#endif
#ifndef REACH
#define REACH 0
#endif
#ifndef PASSED_MASK
#define PASSED_MASK 15
#endif
#ifndef PASSER_MASK
#define PASSER_MASK 15
#endif
#ifndef CRASH_MASK
#define CRASH_MASK 15
#endif
#ifndef CRASH_IN_PASS
#define CRASH_IN_PASS 0
#endif
#ifndef NO_CLOSE
#define NO_CLOSE 0
#endif
#ifndef NO_SETTLE
#define NO_SETTLE 0
#endif
#if N != 3 && N != 4
#error "N must be 3 or 4"
#endif

#define IDLE        0
#define WAITING     1
#define PASSING(p)  (2 + (p))
#define CLEARED(p)  (2 + N + (p))
#define IS_PASSING(w) ((w) >= 2 && (w) < 2 + N)

/* ---------------- shared registers (the C code's) ---------------- */
bit  choosing[N];
byte number[N];
byte pass[N];

/* ---------------- ghost state (model only) ---------------- */
byte ncs;            /* holders inside (dead: until its number's reset) */
bit  dead[N];        /* slot crashed, recovery not finished             */
bit  in_cs[N];       /* incarnation inside                              */
bit  retired[N];     /* k hit MAXNUM and retired                        */
byte crashes = CRASHES;
byte passes = PASSES;
#if REACH
byte passed;         /* passes completed (P3 or R2)                     */
bit  reach;          /* K inside after a pass                           */
#define PASSED_INC passed++
#else
#define PASSED_INC skip
#endif
byte g;              /* ghost loop index (inside d_steps)               */

#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)
#define RESET_NUMBER(k)  number[k] = 0; if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi

/* a new sweep only if a number differs from the failed sweep's copy */
#define DIFF(k)  (i != k && number[k] != seen[k])
#if N == 3
#define CHANGED  (DIFF(0) || DIFF(1) || DIFF(2))
#else
#define CHANGED  (DIFF(0) || DIFF(1) || DIFF(2) || DIFF(3))
#endif
#define CLEAR_SEEN  for (g : 0 .. N-1) { seen[g] = 0 }; g = 0
#define FORGET      j = 0; num = 0; cnt = 0; tried = 0; ph = 0; CLEAR_SEEN

/* The passer's steps on waiter t, whose word says WAITING (P1..P3).  The
 * clear is the plain reset: a passer never touches ncs (a ticket it clears
 * is never inside unless the owner entered without its CAS: NO_CLOSE). */
#define PASS(t)                                                             \
	:: d_step { passes > 0 && t != i && ((PASSED_MASK >> t) & 1) &&     \
	            ((PASSER_MASK >> i) & 1) &&                             \
	            pass[t] == WAITING ->                                   \
		pass[t] = PASSING(i); passes--; k = t };       /* P1 */     \
		choosing[k] = 0; number[k] = 0;                /* P2 */     \
		d_step { pass[k] = CLEARED(i); PASSED_INC; k = N }  /* P3 */

active [N] proctype P()
{
	byte i = _pid;   /* slot index = pid */
	byte j;          /* loop index over the other slots  */
	byte num;        /* own number                       */
	byte cnt;        /* K6: tickets ahead in this sweep  */
	bit  tried;      /* K6: the last sweep failed        */
	bit  ph;         /* 0: phase 1 (K5), 1: phase 2 (K6) */
	bit  published;
	byte seen[N];    /* K6: numbers read by the last sweep */
	byte k = N;      /* the waiter being passed, N = none */
	byte r;          /* recovery's index */

incarnation:
	{
	do
	::	published = 0;
		/* S (blocks while PASSING; else IDLE, or CLEARED or a dead owner's
		 * WAITING reset to IDLE), then K1 */
#if NO_SETTLE
		d_step { pass[i] = IDLE;
#else
		d_step { (pass[i] < 2 || pass[i] >= 2 + N) -> pass[i] = IDLE;
#endif
			 choosing[i] = 1; FIRST(j); num = 0 };
		/* K2 */
		do
		:: d_step { j < N -> if :: number[j] > num -> num = number[j] :: else fi; NEXT(j) }
		:: d_step { j >= N && num < MAXNUM -> num++; j = 0 }; break
		:: d_step { j >= N && num >= MAXNUM -> choosing[i] = 0; retired[i] = 1; j = 0; num = 0 };
		   goto gone
		od;
		/* K3 */ number[i] = num;
		/* K4, W */ d_step { choosing[i] = 0; FIRST(j); pass[i] = WAITING; published = 1 };
		/* K5, K6, with the passer's steps and the check X */
		do
		:: d_step { ph == 0 && j < N && choosing[j] == 0 -> NEXT(j) }          /* K5 */
		:: d_step { ph == 0 && j >= N -> ph = 1; FIRST(j) }
		:: d_step { ph == 1 && j < N && (j != (i == 0 -> 1 : 0) || !tried || CHANGED) ->
			tried = 0; seen[j] = number[j];
			if
			:: number[j] != 0 && LESS(number[j], j, num, i) -> cnt++
			:: else
			fi;
			NEXT(j) }                                                  /* K6 */
		:: d_step { ph == 1 && j >= N && cnt >= K -> tried = 1; cnt = 0; FIRST(j) }
		:: atomic { published && pass[i] != WAITING ->                    /* X */
			published = 0; FORGET };
			goto settle
		/* the passer's steps, on a waiter k (P1..P3) */
		PASS(0)
		PASS(1)
		PASS(2)
#if N > 3
		PASS(3)
#endif
		:: d_step { ph == 1 && j >= N && cnt < K -> skip };
			/* C: WAITING -> IDLE, or we were passed */
			if
			:: !published -> skip
#if NO_CLOSE
			:: published -> published = 0      /* enters without the CAS */
#else
			:: atomic { published && pass[i] == WAITING -> pass[i] = IDLE; published = 0 }
			:: atomic { published && pass[i] != WAITING -> published = 0; FORGET };
			   goto settle
#endif
			fi;
			d_step {
				assert(ncs < K);                      /* at most K */
				ncs++; in_cs[i] = 1;
#if REACH
				reach = (ncs >= K && passed > 0); assert(!reach);
#endif
				FORGET };
			/* CS, then K9 */
			d_step { ncs--; in_cs[i] = 0; number[i] = 0 };
			break
		od;
settle:		skip
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor ---- */
	d_step { dead[i] -> published = 0; FORGET };
	/* R1 */ d_step { if :: pass[i] == WAITING -> pass[i] = IDLE :: else fi };
	/* R2: the passes it left unfinished (dead: no store of its own follows) */
	r = 0;
	do
	:: r < N && pass[r] == PASSING(i) ->
		choosing[r] = 0; number[r] = 0;
		d_step { pass[r] = CLEARED(i); PASSED_INC }; r++
	:: r < N && pass[r] != PASSING(i) -> r++
	:: r >= N -> break
	od;
	k = N;
	/* R3: the plain reset; then the slot may be reused */
	choosing[i] = 0;
	d_step { RESET_NUMBER(i); dead[i] = 0; r = 0 };
	goto incarnation
	};
gone:
end:	skip
}

#if CRASH_IN_PASS
#if N == 3
#define IN_PASS  (IS_PASSING(pass[0]) || IS_PASSING(pass[1]) || IS_PASSING(pass[2]))
#else
#define IN_PASS  (IS_PASSING(pass[0]) || IS_PASSING(pass[1]) || IS_PASSING(pass[2]) || \
                  IS_PASSING(pass[3]))
#endif
#else
#define IN_PASS  true
#endif
#define CRASH(k)  :: d_step { crashes > 0 && ((CRASH_MASK >> k) & 1) && IN_PASS && \
                              !dead[k] && !retired[k] -> crashes--; dead[k] = 1 }

#if CRASHES > 0
active proctype Fault()
{
end_fault:
	do
	CRASH(0)
	CRASH(1)
	CRASH(2)
#if N > 3
	CRASH(3)
#endif
	:: break
	od
}
#endif
