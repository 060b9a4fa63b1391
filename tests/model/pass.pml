/* SPDX-License-Identifier: MIT */
/*
 * pass.pml -- SPIN model of passing a waiter that does not take its turn
 *             (lib/pass.c), on Lamport's Bakery (lib/algo/lamport.c) or,
 *             with -DBW=1, on the Black-White Bakery
 *             (lib/algo/black_white.c), with crashes of passers and of the
 *             passed at every step.
 *
 * Mirrors: lib/pass.c, lib/lock.c (passage_attempt), lib/wait.c (the
 *          publication of WAITING and the check for having been passed)
 *
 * Registers are atomic and sequentially consistent, one Promela step per
 * shared access, as in lamport.pml (whose steps L1..L9 are reused) and
 * black_white.pml (B1..B13, with -DBW=1; a ticket (colour, number) is one
 * word, and a clear writes the whole word: colour 0, number 0).  The
 * pass word of slot k, pass[k]:
 *     IDLE 0, WAITING 1, PASSING(p) = 2 + p, CLEARED(p) = 2 + N + p
 * Steps of process i, added to Lamport's:
 *   S   settle, before the doorway: await pass[i] not PASSING; CLEARED ->
 *       pass[i] := IDLE (pass_settle)
 *   W   after L4, optionally (a blocking or timed wait that met a false
 *       condition; not published = a trylock or the uncontended path):
 *       pass[i] := WAITING                                (pass_publish)
 *   X   published and pass[i] != WAITING, at any step of the wait: the
 *       owner sees it was passed: its waits end at once, C fails, and it
 *       goes back to S, with no store of its own (wait.c)
 *   C   before the CS, if published: CAS pass[i]: WAITING -> IDLE; if the
 *       word was not WAITING, it was passed: back to S   (pass_close)
 * and the passer's steps, which any process may take while it waits
 * (L5..L7), on any k != i whose word says WAITING, at most PASSES times in
 * a run (the C code passes only a waiter whose turn has come and that has
 * not taken it for G: a fairness rule, which the model leaves out, so that
 * any waiter may be passed at any time):
 *   P1  CAS pass[k]: WAITING -> PASSING(i)
 *   P2  number[k] := 0 and choosing[k] := 0, in either order, two steps
 *       (the plain reset of crash recovery)
 *   P3  pass[k] := CLEARED(i)
 * Every one of those steps may be delayed arbitrarily (interleaving) and a
 * crash may strike between any two (the Fault process).  Recovery of a
 * dead slot d, by a survivor, in lib/lock_recovery.c's order:
 *   R1  CAS pass[d]: WAITING -> IDLE
 *   R2  for each k with pass[k] = PASSING(d): number[k] := 0,
 *       choosing[k] := 0, pass[k] := CLEARED(d)      (pass_recover)
 *   R3  choosing[d] := 0, number[d] := 0 (the plain reset); then the slot
 *       may be reused by a new incarnation, which starts at S.
 *
 * Variant switches (-D):
 *   N=2|3        slots (default 2)
 *   BW=1         Black-White instead of Lamport
 *   CRASHES=0..2 crash budget (default 0)
 *   PASSES=1..3  pass budget (default 2)
 *   MAXNUM=k     ticket bound, as in lamport.pml (default N+2)
 *   NO_SETTLE=1  MUST FAIL: a passed owner does not wait for CLEARED: it
 *                resets its word and takes a new ticket at once, and the
 *                passer's late clear can wipe that ticket.
 *   NO_CLOSE=1   MUST FAIL: the owner enters without taking its word back
 *                (no CAS at C): a passer clears a ticket that is entering.
 *
 * Properties: mutual exclusion (ghost ncs, a dead process counting as in
 * the CS until its number is reset), and no deadlock (pan's invalid end
 * states).  Doorway FIFO does not hold by design: a passed waiter loses its
 * place.
 */

#ifndef N
#define N 2
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
#ifndef NO_SETTLE
#define NO_SETTLE 0
#endif
#ifndef BW
#define BW 0
#endif
#ifndef NO_CLOSE
#define NO_CLOSE 0
#endif
#if N != 2 && N != 3
#error "N must be 2 or 3"
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
#if BW
bit  color;          /* the shared colour bit                         */
bit  mycolor[N];     /* ticket[k] = (mycolor[k], number[k]), one word */
#define CLEAR_TICKET(k) d_step { number[k] = 0; mycolor[k] = 0 }
#else
#define CLEAR_TICKET(k) number[k] = 0
#endif

/* ---------------- ghost state (model only) ---------------- */
byte ncs;            /* incarnations in the CS                          */
bit  dead[N];        /* slot crashed, recovery not finished             */
bit  in_cs[N];       /* incarnation in the CS (dead: until its reset)   */
bit  retired[N];     /* k hit MAXNUM and retired                        */
byte crashes = CRASHES;
byte passes = PASSES;

#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))
/* Black-White's B7 awaits, over the current ticket j (and color) */
#define SAME_OK(j)   (number[j] == 0 || !LESS(number[j], j, num, i) || mycolor[j] != c)
#define OTHER_OK(j)  (number[j] == 0 || c != color || mycolor[j] == c)
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)
#if BW
#define RESET_NUMBER(k)  number[k] = 0; mycolor[k] = 0; \
                         if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi
#else
#define RESET_NUMBER(k)  number[k] = 0; if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi
#endif

/* The passer's steps on waiter t, whose word says WAITING (P1..P3) */
#define PASS(t)                                                             \
	:: d_step { passes > 0 && t != i && pass[t] == WAITING ->           \
		pass[t] = PASSING(i); passes--; k = t };       /* P1 */     \
		if                                             /* P2 */     \
		:: CLEAR_TICKET(k); choosing[k] = 0                         \
		:: choosing[k] = 0; CLEAR_TICKET(k)                         \
		fi;                                                         \
		d_step { pass[k] = CLEARED(i); k = N }         /* P3 */

active [N] proctype P()
{
	byte i = _pid;
	byte j;
	byte num;
	bit  published;
	byte ph;         /* Lamport: 1 = L6 done for this j, L7 next;
	                    BW: 1 = B6 done, 2 = B7 same colour, 3 = other */
#if BW
	bit  c;          /* B2: own colour */
#endif
	byte k = N;      /* the waiter being passed, N = none */
	byte r;          /* recovery's index */

incarnation:
	{
	do
	::	published = 0;
		/* S: settle (pass_settle): no pass of ours in progress */
#if NO_SETTLE
		pass[i] = IDLE;
#else
		if      /* blocks while PASSING */
		:: pass[i] == IDLE
		:: d_step { pass[i] == WAITING -> pass[i] = IDLE }   /* a dead owner's leftover */
		:: d_step { pass[i] >= 2 + N -> pass[i] = IDLE }     /* CLEARED */
		fi;
#endif
#if BW
		/* B1 */ d_step { choosing[i] = 1; FIRST(j); num = 0; ph = 0 };
		/* B2 */ c = color;
		/* B3: the tickets of our colour; then (c, max + 1), one word */
		do
		:: d_step { j < N ->
			if :: mycolor[j] == c && number[j] > num -> num = number[j] :: else fi;
			NEXT(j) }
		:: d_step { j >= N && num < MAXNUM -> num++; j = 0; mycolor[i] = c; number[i] = num };
		   /* B4 */ d_step { choosing[i] = 0; FIRST(j) };
		   break
		:: d_step { j >= N && num >= MAXNUM -> choosing[i] = 0; retired[i] = 1; j = 0; num = 0 };
		   goto gone
		od;
#else
		/* L1 */ d_step { choosing[i] = 1; FIRST(j); num = 0; ph = 0 };
		/* L2 */
		do
		:: d_step { j < N -> if :: number[j] > num -> num = number[j] :: else fi; NEXT(j) }
		:: d_step { j >= N && num < MAXNUM -> num++; j = 0 }; break
		:: d_step { j >= N && num >= MAXNUM -> choosing[i] = 0; retired[i] = 1; j = 0; num = 0 };
		   goto gone
		od;
		/* L3 */ number[i] = num;
		/* L4 */ d_step { choosing[i] = 0; FIRST(j) };
#endif
		/* W: publish, or not (trylock, uncontended) */
		if
		:: pass[i] = WAITING; published = 1
		:: skip
		fi;
		/* L5..L7, with the passer's steps and the check X */
		do
#if BW
		:: d_step { j < N && ph == 0 && choosing[j] == 0 -> ph = 1 }     /* B6 */
		:: d_step { j < N && ph == 1 ->                                 /* B7: the branch */
			if
			:: mycolor[j] == c && SAME_OK(j) -> ph = 0; NEXT(j)
			:: mycolor[j] == c && !SAME_OK(j) -> ph = 2
			:: mycolor[j] != c && number[j] == 0 -> ph = 0; NEXT(j)
			:: mycolor[j] != c && number[j] != 0 -> ph = 3
			fi }
		:: d_step { j < N && ph == 2 && SAME_OK(j) -> ph = 0; NEXT(j) }
		:: d_step { j < N && ph == 3 && OTHER_OK(j) -> ph = 0; NEXT(j) }
#else
		:: d_step { j < N && ph == 0 && choosing[j] == 0 -> ph = 1 }     /* L6 */
		:: d_step { j < N && ph == 1 && (number[j] == 0 || LESS(num, i, number[j], j)) ->
			ph = 0; NEXT(j) }                                          /* L7 */
#endif
		:: atomic { published && pass[i] != WAITING ->                   /* X */
			published = 0; j = 0; num = 0; ph = 0 };
			goto settle
		/* the passer's steps, on a waiter k (P1..P3) */
		PASS(0)
		PASS(1)
#if N > 2
		PASS(2)
#endif
		:: d_step { j >= N -> skip };
			/* C: WAITING -> IDLE, or we were passed */
			if
			:: !published -> skip
#if NO_CLOSE
			:: published -> published = 0      /* enters without the CAS */
#else
			:: atomic { published && pass[i] == WAITING -> pass[i] = IDLE; published = 0 }
			:: atomic { published && pass[i] != WAITING -> published = 0; j = 0; num = 0 };
			   goto settle
#endif
			fi;
			d_step { assert(ncs == 0); ncs++; in_cs[i] = 1; j = 0 };
#if BW
			/* CS, then B12 and B13 */
			d_step { ncs--; in_cs[i] = 0; color = 1 - c };
			d_step { number[i] = 0; num = 0; c = 0 };
#else
			/* CS, then L9 */
			d_step { ncs--; in_cs[i] = 0; number[i] = 0; num = 0 };
#endif
			break
		od;
settle:		skip
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor ---- */
	d_step { dead[i] -> j = 0; num = 0; published = 0; ph = 0;
#if BW
		 c = 0
#endif
	};
	/* R1 */ d_step { if :: pass[i] == WAITING -> pass[i] = IDLE :: else fi };
	/* R2: the passes it left unfinished (dead: no store of its own follows) */
	r = 0;
	do
	:: r < N && pass[r] == PASSING(i) ->
		CLEAR_TICKET(r); choosing[r] = 0;
		pass[r] = CLEARED(i); r++
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

#define CRASH(k)  :: d_step { crashes > 0 && !dead[k] && !retired[k] -> crashes--; dead[k] = 1 }

#if CRASHES > 0
active proctype Fault()
{
end_fault:
	do
	CRASH(0)
	CRASH(1)
#if N > 2
	CRASH(2)
#endif
	:: break
	od
}
#endif
