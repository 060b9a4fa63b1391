/* SPDX-License-Identifier: MIT */
/*
 * jayanti_pass.pml -- SPIN model of passing a waiter that does not take its
 *                     turn (lib/pass.c) on Jayanti, Tan, Friedland and
 *                     Katz's B-Bakery (lib/algo/jayanti.c), where a pass is
 *                     an abort of the waiter's passage on its behalf,
 *                     completed by proxy, with crashes of passers and of the
 *                     passed at every step.
 *
 * Paper : Jayanti, Tan, Friedland, Katz, "Bounding Lamport's Bakery
 *         Algorithm", SOFSEM 2001, Fig. 2 and section 5.
 * Mirrors: lib/algo/jayanti.c (jay_wait, jay_pass_abort, jay_recover,
 *          jay_prepare), lib/pass.c, lib/lock.c (passage_attempt),
 *          lib/lock_recovery.c (the order of a dead slot's recovery)
 *
 * Registers are atomic and sequentially consistent, one Promela step per
 * shared access, as in jayanti.pml, whose steps J1..J10, comparison and
 * ghost checks (CLUSTER) are those used here.  Tokens in {-1, 0..2N-2}
 * (-1 is NT), X in {0..2N-2}, arithmetic modulo M = 2N-1.
 *
 * The wait's lines 6-7 on j are one step here (gettoken[j] == 0 and the
 * comparison with token[j], read together), except, with LOOK, the first look of
 * await_turn_of_others (turn_at_a_look in lib/algo/jayanti.c): line 6's
 * read, then line 7's; if that fails, back to the lines 6-7 step for the
 * same j, once per j.
 *
 * The proxy word of slot d is one bit, bit d of pmask: set when d's passage
 * is left to a proxy (d's own abort, a pass of d, d's crash recovery),
 * cleared by the proxy's last step.  A proxy passage is run by the Proxy
 * process of slot d: it reads token[d] (stable while the bit is set), runs
 * lines 6-7 with it against every other slot, then X := token[d] (a
 * virtual CS, counted by the exclusion check), token[d] := -1, and clears
 * the bit, in three steps.  With the token already -1 (a passage completed
 * before a recoverer started it again) it only clears the bit, as the C
 * code's proxy_finish does without writing X.  In the C code the proxy's
 * verifications are made by whoever waits behind the passage, one verified
 * slot at a time committed by CAS, so they are sequential: one autonomous
 * proxy is the same thing for safety (jayanti.pml, DRIVEN, models the
 * helpers; what is new here is who starts a proxy passage, and when).
 *
 * The pass word of slot k, pass[k]:
 *     IDLE 0, WAITING 1, PASSING(p) = 2 + p, CLEARED(p) = 2 + N + p
 * Steps of process i, added to jayanti.pml's:
 *   S    settle, before the doorway: await pass[i] not PASSING; CLEARED ->
 *        IDLE (pass_settle);
 *   Q    prepare: await bit i of pmask clear (our earlier passage,
 *        aborted or passed, complete: jay_prepare drives it);
 *   W    after J5, optionally (not published = a trylock or the
 *        uncontended path): pass[i] := WAITING (pass_publish);
 *   X    published and pass[i] != WAITING, at any step of lines 6-7: the
 *        owner sees it was passed and stops waiting (wait.c, jay_wait);
 *   C    after lines 6-7, if published: CAS pass[i]: WAITING -> IDLE.
 *        Lost: passed: no X write, back to S.  Won: J8 X := token, CS
 *        (jay_wait, before line 8);
 *   A    an abort (timeout; the Fault process asks, at most ABORTS): if
 *        published, C first; lost: nothing more (the passer aborts for us);
 *        won, or not published: set bit i of pmask (jay_abort); back to S.
 * The passer's steps, which any process may take while in lines 6-7, on any
 * k != i whose word says WAITING, at most PASSES times in a run (the C code
 * passes only a waiter whose turn came and that has not taken it for G: a
 * fairness rule the model leaves out, so any waiter may be passed at any
 * time); an abort request waits until the pass is done (pass_slot runs to
 * its end), a crash does not:
 *   P1   CAS pass[k]: WAITING -> PASSING(i)
 *   P2   jay_pass_abort(k): read bit k of pmask; if clear, read token[k];
 *        if not -1, CAS bit k of pmask: clear -> set (three steps)
 *   P3   pass[k] := CLEARED(i)
 * Recovery of a dead slot d by a survivor (lib/lock_recovery.c's order):
 *   R1   CAS pass[d]: WAITING -> IDLE
 *   R2   for each k with pass[k] = PASSING(d): P2 on k, then pass[k] :=
 *        CLEARED(d) (pass_recover, redoing what d may have done of it)
 *   R3   jay_recover: bit d of pmask set: wait for it to clear; else
 *        incs[d] (X written): token[d] := -1, gettoken[d] := 0; token -1:
 *        gettoken[d] := 0; else gettoken[d] := 0, CAS bit d clear -> set,
 *        wait for it to clear.  Then incs[d] := 0 and the slot is reused by
 *        a fresh incarnation, which starts at S.
 *
 * Variant switches (-D):
 *   N=2|3        slots (default 2)
 *   CRASHES=0..2 crash budget (default 0)
 *   ABORTS=0..2  abort budget (default 0)
 *   PASSES=1..3  pass budget (default 2)
 *   CLUSTER=0|1  jayanti.pml's ghost checks of the clustering theorems
 *                (X never decreases, tokens within N of X, comparisons
 *                right), default 1
 *   FIFO=0       no doorway-FIFO ghost and assertion (default 1): FIFO
 *                among the waiters that are not passed, aborted or crashed
 *   MUST FAIL:
 *   PLAIN=1      the passer clears the waiter's registers with the plain
 *                reset (token := -1, gettoken := 0) instead of starting a
 *                proxy passage, as for the other algorithms
 *   NO_CLOSE=1   the owner enters without taking its word back (no CAS at
 *                C): it and the proxy of its passage both enter
 *   NO_SETTLE=1  a passed owner does not wait for CLEARED: it resets its
 *                word and takes a new token at once, and the passer's late
 *                P2 starts a proxy of that new passage
 *   LATE_CLOSE=1 the owner writes X (line 8) before C, as the lock path did
 *                for the other algorithms: a passed owner's late X :=
 *                token moves X back behind later holders (CLUSTER=1)
 *
 * Properties: mutual exclusion (ghost ncs: processes and proxy passages in
 * the CS; a process that died in the CS counts until its token is reset),
 * doorway FIFO where it holds, the CLUSTER invariants, and no deadlock
 * (pan's invalid end states).
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
#ifndef PASSES
#define PASSES 2
#endif
#ifndef CLUSTER
#define CLUSTER 1
#endif
#ifndef FIFO
#define FIFO 1
#endif
#ifndef PLAIN
#define PLAIN 0
#endif
#ifndef NO_CLOSE
#define NO_CLOSE 0
#endif
#ifndef NO_SETTLE
#define NO_SETTLE 0
#endif
#ifndef LATE_CLOSE
#define LATE_CLOSE 0
#endif
#if N != 2 && N != 3
#error "N must be 2 or 3"
#endif

#define M   (2*N - 1)
#define NT  255          /* the paper's -1: no token */

#define IDLE          0
#define WAITING       1
#define PASSING(p)    (2 + (p))
#define CLEARED(p)    (2 + N + (p))
#define IS_PASSING(w) ((w) >= 2 && (w) < 2 + N)

/* ---------------- shared registers (the C code's) ---------------- */
byte X;
bit  gettoken[N];
byte token[N] = NT;
bit  incs[N];
byte pass[N];
byte pmask;          /* bit d: d's passage is left to a proxy (its proxy word) */

/* ---------------- ghost state (model only) ---------------- */
byte ncs;            /* passages in the CS (proxies included)            */
byte wmask;          /* bit k: k finished its doorway, waits for the CS  */
byte ahead[N];       /* FIFO: see lamport.pml                            */
bit  dead[N];        /* slot crashed, recovery not finished              */
bit  in_cs[N];       /* slot k's passage is in the CS                    */
bit  abort_req[N];   /* Fault asked k to give up                         */
byte crashes = CRASHES;
byte aborts  = ABORTS;
byte passes  = PASSES;
#if CLUSTER
#define NOG (-100)
short gtok[N] = NOG; /* unbounded token of slot k (UB-Bakery)            */
short gm[N]   = NOG; /* J2/J3: unbounded max read so far by k            */
short gX;            /* unbounded X                                      */
#endif

#define BIT(k)        (1 << (k))
#if FIFO
#define AHEAD_START(k)  ahead[k] = wmask
#define AHEAD_CLR(k)    ahead[k] = 0
#if N == 2
#define UNAHEAD(k)      ahead[0] = ahead[0] & ~BIT(k); ahead[1] = ahead[1] & ~BIT(k)
#else
#define UNAHEAD(k)      ahead[0] = ahead[0] & ~BIT(k); ahead[1] = ahead[1] & ~BIT(k); \
                        ahead[2] = ahead[2] & ~BIT(k)
#endif
#else
#define AHEAD_START(k)  skip
#define AHEAD_CLR(k)    skip
#define UNAHEAD(k)      skip
#endif
/* k leaves the line of those who wait (passed, aborted, crashed) */
#define LEAVE_LINE(k)   wmask = wmask & ~BIT(k); UNAHEAD(k); AHEAD_CLR(k)

#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))
#define PIV(a)        ((N - 1 + M - (a)) % M)
#define SH(v,p)       (((v) + (p)) % M)
#define PREC(a,i,b,j) LESS(SH(a, PIV(a)), i, SH(b, PIV(a)), j)
#define MODM(v)       ((((v) % M) + M) % M)
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
/* line 7's condition on the current token[j] */
#define J7_OK(j)      (token[j] == NT || PREC(t, i, token[j], j))
#define FIRST(j)      j = (i == 0 -> 1 : 0)

#if CLUSTER
#define G_START(k)    gm[k] = NOG
#define G_READ(k,j)   if :: gtok[j] > gm[k] -> gm[k] = gtok[j] :: else fi
#define G_READX(k)    if :: gX > gm[k] -> gm[k] = gX :: else fi
#define G_TOKEN(k,t)  assert(MODM(gm[k] + 1) == t); gtok[k] = gm[k] + 1; gm[k] = NOG
#define G_NOTOKEN(k)  gtok[k] = NOG
#define G_XWRITE(k)   assert(gtok[k] >= gX);                 /* Obs. 1 */ \
                      gX = gtok[k];                                      \
                      if                                                 \
                      :: gX >= M -> gX = gX - M; G_SUB(0); G_SUB(1); G_SUB2 \
                      :: else                                            \
                      fi
#define G_SUB(k)      if :: gtok[k] != NOG -> gtok[k] = gtok[k] - M :: else fi; \
                      if :: gm[k]   != NOG -> gm[k]   = gm[k]   - M :: else fi
#if N > 2
#define G_SUB2        ; G_SUB(2)
#else
#define G_SUB2
#endif
#else
#define G_START(k)    skip
#define G_READ(k,j)   skip
#define G_READX(k)    skip
#define G_TOKEN(k,t)  skip
#define G_NOTOKEN(k)  skip
#define G_XWRITE(k)   skip
#endif

#define CS_ENTER(k)   if :: !in_cs[k] -> assert(ncs == 0); ncs++; in_cs[k] = 1 \
                         :: else fi
#define CS_LEAVE(k)   if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi

/* P2: the abort of slot kk's passage on its behalf (jay_pass_abort); pp
 * holds what was read.  PLAIN=1: the plain reset instead. */
#if PLAIN
#define PASS_ABORT(kk)                                                      \
	d_step { token[kk] = NT; G_NOTOKEN(kk); CS_LEAVE(kk) };             \
	gettoken[kk] = 0
#else
#define PASS_ABORT(kk)                                                      \
	pp = (pmask & BIT(kk));                    /* the proxy word */     \
	if                                                                  \
	:: pp == 0 ->                                                       \
		pp = (token[kk] != NT);            /* the token */          \
		if                                 /* CAS 0 -> start */     \
		:: d_step { pp && !(pmask & BIT(kk)) -> pmask = pmask | BIT(kk); pp = 0 } \
		:: d_step { pp && (pmask & BIT(kk)) -> pp = 0 }             \
		:: d_step { !pp -> skip }                                   \
		fi                                                          \
	:: else -> pp = 0                                                   \
	fi
#endif

/* The passer's steps on waiter tt (P1..P3), by process i */
#define PASS(tt)                                                            \
	:: d_step { passes > 0 && tt != i && pass[tt] == WAITING ->         \
		pass[tt] = PASSING(i); passes--; k = tt;                    \
		LEAVE_LINE(tt) };                                /* P1 */   \
		PASS_ABORT(k);                                   /* P2 */   \
		d_step { pass[k] = CLEARED(i); k = N }           /* P3 */

active [N] proctype P()
{
	byte i = _pid;
	byte j;
	byte seen;
	byte t;
	bit  published;
	bit  won;
	byte k = N;      /* the waiter being passed (or recovered), N = none */
	bit  pp;
	byte lk;         /* the first look at j: 1 line 6 read, 2 failed */

incarnation:
	{
	do
	::	/* S: settle */
#if NO_SETTLE
		d_step { pass[i] = IDLE };
#else
		d_step { !IS_PASSING(pass[i]) -> pass[i] = IDLE };
#endif
		/* Q: jay_prepare, our earlier passage complete */
		(!(pmask & BIT(i)));
		/* J1 */ d_step { gettoken[i] = 1; AHEAD_START(i); FIRST(j); seen = 0; G_START(i) };
		/* J2 */
		do
		:: d_step { j < N ->
			if
			:: token[j] != NT -> seen = seen | BIT(token[j]); G_READ(i, j)
			:: else
			fi;
			NEXT(j) }
		:: d_step { j >= N ->
			/* J3 and J4's local computation */
			G_READX(i);
			t = N - 1;
			j = 0;
			do
			:: j < M ->
				if
				:: (seen & BIT(j)) && SH(j, PIV(X)) > t -> t = SH(j, PIV(X))
				:: else
				fi;
				j++
			:: else -> break
			od;
			t = (t + M - PIV(X) + 1) % M;
			j = 0; seen = 0 };
		   /* J4 */ d_step { assert(t < M); token[i] = t; G_TOKEN(i, t) };
		   /* J5 */ d_step { gettoken[i] = 0; wmask = wmask | BIT(i); FIRST(j) };
		   break
		od;
		/* W */
		if
		:: pass[i] = WAITING; published = 1
		:: skip
		fi;
		{
		do
		:: d_step { j < N && lk != 1 && gettoken[j] == 0 &&        /* J6, J7 */
		            J7_OK(j) -> NEXT(j); lk = 0 }
#if LOOK
		/* the first look: J6, then J7; failed, back to J6, J7 */
		:: d_step { j < N && lk == 0 && gettoken[j] == 0 -> lk = 1 }
		:: d_step { lk == 1 && J7_OK(j) -> NEXT(j); lk = 0 }
		:: d_step { lk == 1 && !J7_OK(j) -> lk = 2 }
#endif
		:: d_step { published && pass[i] != WAITING -> j = N; lk = 0 }    /* X */
		PASS(0)
		PASS(1)
#if N > 2
		PASS(2)
#endif
		:: j >= N -> break
		od;
		/* (atomic, not d_step: the target of the break above) */
#if LATE_CLOSE
		atomic { X = t; G_XWRITE(i) };
#endif
		/* C */
#if NO_CLOSE
		atomic { won = 1; published = 0 };
#else
		atomic {
			if
			:: published && pass[i] == WAITING -> pass[i] = IDLE; won = 1
			:: published && pass[i] != WAITING -> won = 0
			:: !published -> won = 1
			fi;
			published = 0 };
#endif
		if
		:: won ->
			d_step {
#if FIFO
				assert(ahead[i] == 0);           /* doorway FIFO     */
#endif
				CS_ENTER(i);                     /* mutual exclusion */
				wmask = wmask & ~BIT(i); UNAHEAD(i); j = 0; won = 0;
#if !LATE_CLOSE
				/* J8 */ X = t; G_XWRITE(i)
#endif
			};
			/* J8b */ incs[i] = 1;
			/* J10 */ d_step { CS_LEAVE(i); incs[i] = 0 };
			/* J10 */ d_step { token[i] = NT; G_NOTOKEN(i); t = 0 }
		:: else ->
			/* passed: a new attempt (the token stays: a proxy's) */
			d_step { j = 0; t = 0 }
		fi
		} unless {
			/* A: a give-up (timeout), never in the middle of a pass */
			d_step { abort_req[i] && k == N ->
				abort_req[i] = 0;
				LEAVE_LINE(i);
				if
				:: published && pass[i] == WAITING -> pass[i] = IDLE; won = 1
				:: published && pass[i] != WAITING -> won = 0
				:: !published -> won = 1
				fi;
				published = 0 };
			d_step {
				if
				:: won -> pmask = pmask | BIT(i)       /* jay_abort */
				:: else
				fi;
				won = 0; t = 0; j = 0; lk = 0 }
		}
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor (see the header).
	   The escape is the recoverer's first step; the locals of the dead
	   incarnation are dropped there. ---- */
	d_step { dead[i] -> j = 0; seen = 0; t = 0; published = 0; won = 0; lk = 0; G_START(i);
		 k = 0;
		 if :: pass[i] == WAITING -> pass[i] = IDLE :: else fi };  /* R1 */
	/* R2: the passes the dead one started and did not finish */
	do
	:: d_step { k < N && pass[k] != PASSING(i) -> k++ }
	:: k < N && pass[k] == PASSING(i) ->
		PASS_ABORT(k);
		d_step { pass[k] = CLEARED(i); k++ }
	:: d_step { k >= N -> k = N }; break
	od;
	/* R3: jay_recover */
	if
	:: (pmask & BIT(i))
	:: d_step { !(pmask & BIT(i)) && incs[i] -> token[i] = NT; G_NOTOKEN(i); CS_LEAVE(i) };
	   gettoken[i] = 0
	:: d_step { !(pmask & BIT(i)) && !incs[i] && token[i] == NT -> gettoken[i] = 0 }
	:: d_step { !(pmask & BIT(i)) && !incs[i] && token[i] != NT -> gettoken[i] = 0 };
	   d_step { if :: !(pmask & BIT(i)) -> pmask = pmask | BIT(i) :: else fi }
	fi;
	/* the slot is FREE once no proxy passage of it is pending */
	d_step { !(pmask & BIT(i)) -> incs[i] = 0; dead[i] = 0 };
	goto incarnation
	}
}

/* The proxy passage of slot d, while bit d of pmask is set. */
active [N] proctype Proxy()
{
	byte i = _pid - N;   /* the slot whose passage it completes */
	byte j;
	byte t;

end_idle:
	do
	:: d_step { (pmask & BIT(i)) -> t = token[i]; FIRST(j) };
		if
		:: t == NT -> skip      /* completed already: no X write */
		:: else ->
			do
			:: d_step { j < N && gettoken[j] == 0 &&
			            (token[j] == NT || PREC(t, i, token[j], j)) -> NEXT(j) }
			:: j >= N ->
				d_step { CS_ENTER(i); X = t; G_XWRITE(i) };
				d_step { token[i] = NT; G_NOTOKEN(i); CS_LEAVE(i) };
				break
			od
		fi;
		/* (atomic, not d_step: the target of the break above) */
		atomic { pmask = pmask & ~BIT(i); t = 0; j = 0 }
	od
}

#define CRASH(k)  :: d_step { crashes > 0 && !dead[k] ->                     \
			crashes--; dead[k] = 1; abort_req[k] = 0;             \
			LEAVE_LINE(k) }
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

#if CLUSTER
#define WAITS(k)      ((wmask | pmask) & BIT(k))
#define PAIR_OK(a,b)  (!(WAITS(a) && token[a] != NT && token[b] != NT) || \
                       (PREC(token[a], a, token[b], b) == LESS(gtok[a], a, gtok[b], b)))
#define RANGE_OK(k)   (token[k] == NT || (gX <= gtok[k] && gtok[k] <= gX + N))
#if N == 2
#define INV  (RANGE_OK(0) && RANGE_OK(1) && PAIR_OK(0,1) && PAIR_OK(1,0))
#else
#define INV  (RANGE_OK(0) && RANGE_OK(1) && RANGE_OK(2) && \
              PAIR_OK(0,1) && PAIR_OK(1,0) && PAIR_OK(0,2) && PAIR_OK(2,0) && \
              PAIR_OK(1,2) && PAIR_OK(2,1))
#endif
active proctype Monitor()
{
end_mon:
	atomic { !INV -> assert(INV) }
}
#endif
