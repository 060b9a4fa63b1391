/* SPDX-License-Identifier: MIT */
/*
 * pass.pml -- SPIN model of passing a waiter that does not take its turn
 *             (lib/pass.c), on Lamport's Bakery (lib/algo/lamport.c),
 *             with -DBW=1 on the Black-White Bakery
 *             (lib/algo/black_white.c) or with -DBOUL=1 on Boulangerie
 *             (lib/algo/boulangerie.c), with crashes of passers and of the
 *             passed at every step, and (-DABORTS) the passed waiter's own
 *             timeout racing its passer.
 *
 * Mirrors: lib/pass.c, lib/lock.c (passage_attempt, lock_acquire),
 *          lib/wait.c (the publication of WAITING and the check for having
 *          been passed), the algorithms' aborts (bakery__number_abort in
 *          lib/algo/common.c, bw_abort in lib/algo/black_white.c)
 *
 * Registers are atomic and sequentially consistent, one Promela step per
 * shared access, as in lamport.pml (whose steps L1..L9 are reused, with
 * its wait over the other slots from any one, round),
 * black_white.pml (B1..B13, with -DBW=1; a ticket (colour, number) is one
 * word, and a clear writes the whole word: colour 0, number 0; the wait
 * from any other slot, round, as there) and
 * boulangerie.pml (with -DBOUL=1: Lamport's doorway L1..L4 = Fig. 2 lines
 * 3..5, then Moses & Patkin's waiting loop, Fig. 2 line numbers:
 *   6a  if number 1: test only the j < i, else every j != i, from any
 *       of them, round (the limit bounds the set, not the order)
 *   7_j await choosing[j] == 0
 *   8_j one read of number[j]; if it does not decide, prev := that value
 *       and await number[j] == 0 || (num,i) < (number[j],j) ||
 *       number[j] != prev ("two different reads", as boulangerie.pml)).
 * With LOOK, the first look of those waits (wait_for_others in lib/algo/lamport.c,
 * black_white.c, boulangerie.c), as in the three models: a first L7, B7
 * or 8_j read that fails goes back to L6, B6 or 7_j for the same j (B7's
 * branch taken afresh, 8_j's prev reset), once per j.
 * The pass word of slot k, pass[k]:
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
 *   A   (ABORTS > 0) at any step of the wait, the owner's own wait fails
 *       (a timed lock's deadline, a trylock), published or not, passed or
 *       not yet noticed, at most ABORTS times in a run:
 *   A1  its abort: number[i] := 0 (Lamport, Boulangerie); Black-White
 *       reads its own ticket's colour back, then stores (colour, 0), two
 *       steps (bw_abort)
 *   A2  pass_close with the error: if published, CAS pass[i]: WAITING ->
 *       IDLE, whatever it finds; the error is returned, no entry; the next
 *       attempt starts at S (its settle waits for a passer's CLEARED)
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
 *   BOUL=1       Boulangerie instead of Lamport
 *   CRASHES=0..2 crash budget (default 0)
 *   PASSES=1..3  pass budget (default 2)
 *   ABORTS=0..2  budget of the owners' own aborts, A1..A2 (default 0)
 *   MAXNUM=k     ticket bound, as in lamport.pml (default N+2)
 *   NO_SETTLE=1  MUST FAIL: a passed owner does not wait for CLEARED: it
 *                resets its word and takes a new ticket at once, and the
 *                passer's late clear can wipe that ticket.
 *   NO_CLOSE=1   MUST FAIL: the owner enters without taking its word back
 *                (no CAS at C): a passer clears a ticket that is entering.
 *   ABORT_NO_SETTLE=1  MUST FAIL (with ABORTS): the attempt after an
 *                abort of its own skips S (the settle is kept after a
 *                pass noticed at X or C): the owner's wait timed out while
 *                a passer held PASSING, its close failed, and its next
 *                ticket is wiped by the passer's late clear.
 *
 * Properties: mutual exclusion (ghost ncs, a dead process counting as in
 * the CS until its number is reset), and no deadlock (pan's invalid end
 * states).  Doorway FIFO does not hold by design: a passed waiter loses its
 * place.
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
#ifndef BOUL
#define BOUL 0
#endif
#ifndef ABORTS
#define ABORTS 0
#endif
#ifndef ABORT_NO_SETTLE
#define ABORT_NO_SETTLE 0
#endif
#if BW && BOUL
#error "BW and BOUL exclude each other"
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
byte aborts = ABORTS;

#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))
/* Black-White's B7 awaits, over the current ticket j (and color) */
#define SAME_OK(j)   (number[j] == 0 || !LESS(number[j], j, num, i) || mycolor[j] != c)
#define OTHER_OK(j)  (number[j] == 0 || c != color || mycolor[j] == c)
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)
/* The wait: `left` other slots still to pass, from j (any of them, chosen
   at the doorway's end), round within the j < WLIM; j is 0 when none is
   left (states merge) */
#define IN_WAIT       (left > 0)
/* the phase of the wait on j (ph), in the first round or (+ AGAIN) in the
   one after a first look that failed */
#define AGAIN         4
#define PH(x)         ((ph & 3) == (x))
#define WNEXT(j)      left--; \
                      if \
                      :: left == 0 -> j = 0 \
                      :: else -> j = (j + 1) % WLIM; if :: j == i -> j = (j + 1) % WLIM :: else fi \
                      fi
#if BOUL
/* Boulangerie's wait: the j < lim (6a) */
#define WLIM          lim
#define LIM0          (num == 1 -> i : N)
#define LEFT0         (num == 1 -> i : N - 1)
/* 5, 6a, the wait starting at slot k (any j < lim: one branch per k) */
#define B5_FROM(k)    :: d_step { k < LIM0 && k != i -> choosing[i] = 0; lim = LIM0; left = LEFT0; j = k }
#define LIM_RESET     lim = N
#else
/* Lamport's and Black-White's wait: every other slot */
#define WLIM          N
/* L4 (B4), the wait starting at slot k (any other one: one branch per k) */
#define L4_FROM(k)    :: d_step { i != k -> choosing[i] = 0; j = k; left = N - 1 }
/* lim is Boulangerie's only (written but never read, it would keep
   states apart) */
#define LIM_RESET     skip
#endif
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
	byte left;       /* the wait: other slots still to pass (0 elsewhere) */
	byte num;
	bit  published;
	byte ph;         /* Lamport: 1 = L6 done for this j, L7 next;
	                    BW: 1 = B6 done, 2 = B7 same colour, 3 = other;
	                    Boulangerie: 1 = 7_j done, 2 = 8_j later reads;
	                    + AGAIN after a first look that failed */
#if BW
	bit  c;          /* B2: own colour */
#endif
	byte k = N;      /* the waiter being passed, N = none */
	byte r;          /* recovery's index */
#if BOUL
	byte lim = N;    /* the waiting loop tests the j < lim (Boulangerie's 6a) */
	byte prev;       /* 8_j: the first value read from number[j] */
#endif
#if BW
	bit  ac;         /* A1: the colour of our ticket, read back */
#endif
	bit  aborted;    /* the last attempt ended by our own abort */

incarnation:
	{
	do
	::	published = 0;
		/* S: settle (pass_settle): no pass of ours in progress */
#if NO_SETTLE
		pass[i] = IDLE;
#else
		if      /* blocks while PASSING */
		:: d_step { pass[i] == IDLE -> aborted = 0 }
		:: d_step { pass[i] == WAITING -> pass[i] = IDLE; aborted = 0 }   /* a dead owner's leftover */
		:: d_step { pass[i] >= 2 + N -> pass[i] = IDLE; aborted = 0 }     /* CLEARED */
#if ABORT_NO_SETTLE
		:: aborted -> aborted = 0     /* MUST FAIL: no settle after our own abort */
#endif
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
		   /* B4, and the slot the wait starts from */
		   if
		   L4_FROM(0)
		   L4_FROM(1)
#if N > 2
		   L4_FROM(2)
#endif
		   fi;
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
#if BOUL
		/* 5, 6a: a process holding number 1 tests only the slots below
		   it; and the slot the wait starts from */
		if
		B5_FROM(0)
		B5_FROM(1)
#if N > 2
		B5_FROM(2)
#endif
		:: d_step { LEFT0 == 0 -> choosing[i] = 0; lim = LIM0; left = 0; j = 0 }
		fi;
#else
		/* L4, and the slot the wait starts from */
		if
		L4_FROM(0)
		L4_FROM(1)
#if N > 2
		L4_FROM(2)
#endif
		fi;
#endif
#endif
		/* W: publish, or not (trylock, uncontended) */
		if
		:: pass[i] = WAITING; published = 1
		:: skip
		fi;
		/* L5..L7, with the passer's steps and the check X */
		do
#if BW
		:: d_step { left > 0 && PH(0) && choosing[j] == 0 -> ph++ }      /* B6 */
		:: d_step { left > 0 && PH(1) ->                                /* B7: the branch */
			if
			:: mycolor[j] == c && SAME_OK(j) -> ph = 0; WNEXT(j)
			:: mycolor[j] == c && !SAME_OK(j) -> ph++
			:: mycolor[j] != c && number[j] == 0 -> ph = 0; WNEXT(j)
			:: mycolor[j] != c && number[j] != 0 -> ph = ph + 2
			fi }
#if LOOK
		/* a first look that fails: same colour, or color read after */
		:: d_step { left > 0 && ph == 1 && mycolor[j] == c && !SAME_OK(j) -> ph = AGAIN }
		:: d_step { left > 0 && ph == 3 && color == c -> ph = AGAIN }
#endif
		:: d_step { left > 0 && PH(2) && SAME_OK(j) -> ph = 0; WNEXT(j) }
		:: d_step { left > 0 && PH(3) && OTHER_OK(j) -> ph = 0; WNEXT(j) }
#elif BOUL
		:: d_step { left > 0 && PH(0) && choosing[j] == 0 -> ph++ }      /* 7_j */
		:: d_step { left > 0 && PH(1) ->                                /* 8_j: first read */
			if
			:: number[j] == 0 || LESS(num, i, number[j], j) -> ph = 0; WNEXT(j)
			:: else -> prev = number[j]; ph++
			fi }
#if LOOK
		/* a first look that fails */
		:: d_step { left > 0 && ph == 1 && !(number[j] == 0 || LESS(num, i, number[j], j)) ->
			ph = AGAIN }
#endif
		:: d_step { left > 0 && PH(2) &&                                /* 8_j: later reads */
			(number[j] == 0 || LESS(num, i, number[j], j) || number[j] != prev) ->
			prev = 0; ph = 0; WNEXT(j) }
#else
		:: d_step { left > 0 && PH(0) && choosing[j] == 0 -> ph++ }      /* L6 */
		:: d_step { left > 0 && PH(1) && (number[j] == 0 || LESS(num, i, number[j], j)) ->
			ph = 0; WNEXT(j) }                                         /* L7 */
#if LOOK
		/* a first look that fails */
		:: d_step { left > 0 && ph == 1 && !(number[j] == 0 || LESS(num, i, number[j], j)) ->
			ph = AGAIN }
#endif
#endif
		/* A: our own wait gives up (timeout, trylock), at any step of it */
		:: d_step { aborts > 0 && IN_WAIT -> aborts--; j = 0; ph = 0;
#if BOUL
			prev = 0;
#endif
			left = 0; aborted = 1 };
#if BW
			/* A1: bw_abort re-reads its ticket's colour, stores (colour, 0) */
			ac = mycolor[i];
			d_step { number[i] = 0; mycolor[i] = ac; ac = 0; num = 0; c = 0 };
#else
			/* A1: number_abort */
			d_step { number[i] = 0; num = 0 };
#endif
			/* A2: pass_close with the wait's error: the CAS, whatever
			   its outcome; the error is returned (no entry) */
			d_step { if :: published && pass[i] == WAITING -> pass[i] = IDLE :: else fi;
				 published = 0; LIM_RESET };
			goto settle
		:: atomic { published && pass[i] != WAITING ->                   /* X */
			published = 0; j = 0; num = 0; ph = 0; LIM_RESET; left = 0 };
			goto settle
		/* the passer's steps, on a waiter k (P1..P3) */
		PASS(0)
		PASS(1)
#if N > 2
		PASS(2)
#endif
		:: d_step { !IN_WAIT -> LIM_RESET };
			/* C: WAITING -> IDLE, or we were passed */
			if
			:: !published -> skip
#if NO_CLOSE
			:: published -> published = 0      /* enters without the CAS */
#else
			:: atomic { published && pass[i] == WAITING -> pass[i] = IDLE; published = 0 }
			:: atomic { published && pass[i] != WAITING -> published = 0; j = 0; num = 0; ph = 0 };
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
	d_step { dead[i] -> j = 0; num = 0; published = 0; ph = 0; LIM_RESET; aborted = 0;
		 left = 0;
#if BW
		 c = 0; ac = 0;
#endif
#if BOUL
		 prev = 0;
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
