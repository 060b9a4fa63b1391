/* SPDX-License-Identifier: MIT */
/*
 * jayanti.pml -- SPIN model of Jayanti, Tan, Friedland and Katz's bounded
 *                Bakery lock (B-Bakery) as libbakery runs it, with crashes,
 *                recovery by proxy completion, slot reuse and aborts.
 *
 * Paper : Jayanti, Tan, Friedland, Katz, "Bounding Lamport's Bakery
 *         Algorithm", SOFSEM 2001, Fig. 2 and section 5.
 * Mirrors: lib/algo/jayanti.c
 *
 * Registers are atomic and sequentially consistent (the C code puts a full
 * barrier at every store->load point).  One Promela step = one shared access;
 * purely local computation is folded into the step of the access it follows.
 *
 * Tokens are in {-1, 0..2N-2} (-1 is written NT here), X in {0..2N-2};
 * arithmetic is modulo M = 2N-1.
 *   maxhat(S u {x}): shift every v != -1 by (v + N-1 - x) mod M, take the
 *                    ordinary max, shift back.
 *   [a,i] < [b,j]   (the comparison written "prec" in the paper), with the
 *                    comparing process's own token a as the pivot:
 *                    [(a + N-1-a) mod M, i] < [(b + N-1-a) mod M, j]
 *                    lexicographically.  The paper prints the pivot of b as
 *                    (N-1-b): that is a misprint (MISPRINT=1 below).
 *
 * Steps of process i (slot i), matching the labels in the C code:
 *   J1   gettoken[i] := 1
 *   J2   for each j != i (increasing index): read token[j]      (the set S)
 *   J3   x := X
 *   J4   token[i] := maxhat(S u {x}) + 1 (mod M)
 *   J5   gettoken[i] := 0                      -- end of the doorway
 *   for each j != i (increasing index):
 *   J6       await gettoken[j] == 0
 *   J7       await token[j] == -1 || [token[i],i] < [token[j],j]
 *            (LOOK: turn_at_a_look, the first look of await_turn_of_others: a
 *            first J7 read that fails goes back to J6 for the same j, once
 *            per j)
 *   J8   X := token[i]
 *   J8b  incs[i] := 1                          (the code's per-slot "in CS" word)
 *        CS
 *   J10  incs[i] := 0 ; token[i] := -1         (two stores)
 *
 * Faults:
 *   crash   -- the Fault process may stop any live process at any step
 *              (at most CRASHES per run).  The stopped process's body is
 *              left through `unless { dead[i] }`; what follows the escape is
 *              the RECOVERY of slot d = i "by a survivor".  Its steps are
 *              modelled inside the dead slot's own proctype: they interleave
 *              freely with everybody and may be delayed arbitrarily (under
 *              weak fairness they eventually happen).  The Fault process
 *              may stop making faults at any time, so runs with fewer (or
 *              no) faults are included in every configuration.  In the C code the
 *              proxy's per-j verifications are made by whichever process
 *              happens to wait, the progress index being committed by CAS,
 *              so they are sequential: one proxy running the loop is the
 *              same thing.  The recoverer reads incs[d] and token[d] in its
 *              first step (nobody else writes them: they are stable).
 *                if incs[d] == 1:        token[d] := -1; gettoken[d] := 0
 *                else if token[d] == -1: gettoken[d] := 0
 *                else PROXY COMPLETION:  gettoken[d] := 0;
 *                     for each j != d (increasing index):
 *                         await gettoken[j] == 0;
 *                         await token[j] == -1 || [token[d],d] < [token[j],j];
 *                     X := token[d]; token[d] := -1
 *              and, as its last step, incs[d] := 0 (the slot's state word
 *              is cleared when the slot goes back to the registry; see
 *              KEEP_INCS).  Only then is the slot reused: a fresh
 *              incarnation (all locals reset) restarts from the remainder.
 *   abort   -- the Fault process may ask a process that is waiting (after
 *              J5, before J8) to give up (at most ABORTS per run).  The
 *              process leaves at its next step; its passage is completed by
 *              PROXY exactly as above (gettoken[i] is already 0), and it may
 *              not start a new doorway before that proxy has finished (so
 *              the proxy is modelled as run by the process itself, after it
 *              has left the lock call).  While that proxy runs the slot
 *              is not crashed: a death then would only hand the same,
 *              idempotent proxy to a recoverer, i.e. a delay.
 *
 * Variant switches (-D):
 *   N=2|3          number of slots                    (default 2)
 *   CRASHES=0..2   crash budget per run               (default 0)
 *   ABORTS=0..2    abort budget per run               (default 0)
 *   MISPRINT=1     MUST FAIL: the comparison as printed in the paper (b is
 *                  shifted by its own pivot N-1-b, so every shifted token
 *                  is N-1 and only the indices decide).
 *   PLAIN_RESET=1  MUST FAIL: no proxy completion.  A dead process that had
 *                  not reached the CS (incs == 0) is reset plainly,
 *                  token := -1 then gettoken := 0, and an abort is just
 *                  token[i] := -1.
 *   PLAIN_RESET=2  MUST FAIL: "write X then reset": X := token[d] (or the
 *                  aborter's own token), then token := -1, gettoken := 0.
 *   KEEP_INCS=1    the recoverer does not clear incs[d] before the slot is
 *                  reused (a later incarnation that dies before J8b would
 *                  then be reset plainly).
 *   CLUSTER=0|1    ghost check of the clustering theorems (default 1):
 *                  an unbounded copy of UB-Bakery runs alongside (ghost
 *                  tokens gtok[], ghost gX, renormalised by M whenever gX
 *                  reaches M, which keeps every difference), and
 *                    - J4 computes maxhat+1 congruent to the UB max+1;
 *                    - X never decreases (Observation 1);
 *                    - every token v != -1 has gX <= v <= gX + N (Thm 1);
 *                    - for every process waiting in J6/J7 (or proxy), its
 *                      comparison with every other token v != -1 gives the
 *                      same answer as the unbounded one (Thm 3 / Lemma 2:
 *                      "the clustering makes the comparisons right").
 *   DRIVEN=1       aborted passages are completed the way the C code does
 *                  it, by HELPERS (see "Driven proxies" below), instead of
 *                  by an autonomous proxy.  Needs CRASHES=0.
 *   STALE_DRIVE=1  with DRIVEN=1, MUST FAIL: the nested drive of the code
 *                  before the fix, which kept driving a passage that no
 *                  longer blocked the one it was driven for (deadlock).
 *   NO_PROXY_ID=1  with DRIVEN=1, MUST FAIL: the proxy word without its
 *                  passage id, as before the fix: a helper's stale commit
 *                  lands in a later passage of the slot (ABA) and skips a
 *                  slot that is ahead of it (clustering, then exclusion).
 *   ABORT_MASK=m   only the slots in bit mask m may abort (default all):
 *                  a smaller state space when a scenario needs aborts by
 *                  some slots only.
 *   DEAD_HOLDS=0   a process that dies in the CS stops counting as "in the
 *                  CS" at the crash (default 1: until its token is reset).
 *   FIFO=0         no doorway-FIFO ghost and assertion (default 1).
 *   LIVENESS       define (spin -DLIVENESS) to include the LTL property.
 *
 * Driven proxies (DRIVEN=1).  The autonomous proxy above is a sound model
 * of the SAFETY of a proxy completion (its verifications are sequential,
 * whoever makes them), but not of its PROGRESS: in the C code nobody runs an
 * aborted passage's proxy on its own.  It moves only when a helper drives it:
 * a waiter whose J7 finds the passage ahead of it left to a proxy, or the
 * aborted process itself before its next doorway (jay_prepare).  A helper
 * scans from the committed index pj[d] (the proxy word, advanced one
 * verified slot at a time; the C code's CAS), claims the final writes when
 * the scan is complete (pj[d] = FIN), and when slot k blocks the scan it
 * either drives k's own pending proxy passage first (a NESTED drive, at most
 * N-1 deep here) or waits until k no longer blocks, k's passage is left to
 * a proxy, or the drive is over.  A drive is over when its passage is
 * complete, when (root drive of a waiter) the waiter's own turn on d holds,
 * and (nested drive) when its passage no longer blocks its parent's.  The
 * autonomous proxy could never show what went wrong in the C code: a stale
 * choice of WHICH passage to drive.  Three slots and two aborts: W = slot 0
 * waits behind the aborted passage of A = slot 1 and drives it; A's scan is
 * blocked by B = slot 2 in its doorway; B takes a token behind W's and
 * aborts; W sees B's passage pending and drives it instead of re-scanning
 * A; B's scan is blocked by W's own token, so W waits for itself, and
 * everyone else queues behind W.  STALE_DRIVE=1 finds that deadlock; the
 * fixed drive (each nested link re-checked up to the waiter's own turn)
 * has none.  The suite's abort runs had N=3 with one abort only, and no
 * helpers at all.
 *
 * Properties:
 *   - mutual exclusion : ghost ncs, assert ncs <= 1 at every CS entry (J8).
 *                        A proxy completion counts as a passage of the dead
 *                        or aborted process: its X := token[d] ... token[d]
 *                        := -1 is a (virtual) CS and must be exclusive too.
 *                        A process that died in the CS counts until its
 *                        token is reset.
 *   - doorway FIFO     : as in lamport.pml (doorway = J1..J5);
 *   - tokens in [-1, 2N-2] by construction; the CLUSTER checks above;
 *   - no deadlock      : pan's invalid-end-state check (safety runs);
 *   - starvation freedom (LIVENESS, pan -a -f): for every slot k,
 *                        []<> !pend[k], pend[k] = "k finished its doorway
 *                        and has neither entered the CS nor been aborted or
 *                        crashed, or a recovery / proxy completion of slot k
 *                        is not finished".
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
#ifndef MISPRINT
#define MISPRINT 0
#endif
#ifndef PLAIN_RESET
#define PLAIN_RESET 0
#endif
#ifndef KEEP_INCS
#define KEEP_INCS 0
#endif
#ifndef CLUSTER
#define CLUSTER 1
#endif
#ifndef FIFO
#define FIFO 1
#endif
#ifndef DEAD_HOLDS
#define DEAD_HOLDS 1
#endif
#ifndef DRIVEN
#define DRIVEN 0
#endif
#ifndef STALE_DRIVE
#define STALE_DRIVE 0
#endif
#ifndef NO_PROXY_ID
#define NO_PROXY_ID 0
#endif
#ifndef ABORT_MASK
#define ABORT_MASK 7
#endif
#if DRIVEN && CRASHES > 0
#error "DRIVEN=1 models aborts only: use CRASHES=0"
#endif

#define M   (2*N - 1)
#define NT  255          /* the paper's -1: no token */

/* ---------------- shared registers (the C code's) ---------------- */
byte X;
bit  gettoken[N];
byte token[N] = NT;
bit  incs[N];
#if DRIVEN
byte pj[N];          /* proxy word of slot d: next slot to verify, or FIN */
byte ptk[N];         /* ... and its passage id: the token, and the  */
byte pab[N];         /*     slot's abort count (PROXY_ID in the C code) */
byte nab[N];         /* aborts of slot d so far (the C code's counter) */
#define FIN 7
#endif

/* ---------------- ghost state (model only) ---------------- */
byte ncs;            /* passages in the CS (proxies included)            */
byte wmask;          /* bit k: k finished its doorway, waits for the CS  */
byte pmask;          /* bit k: a proxy completion of slot k is running   */
byte ahead[N];       /* FIFO: see lamport.pml                            */
bit  pend[N];        /* liveness obligation of slot k                    */
bit  dead[N];        /* slot crashed, recovery not finished              */
bit  in_cs[N];       /* slot k's passage is in the CS                    */
bit  abort_req[N];   /* Fault asked k to give up                         */
byte crashes = CRASHES;
byte aborts  = ABORTS;
#if CLUSTER
#define NOG (-100)   /* ghost "no token"                                 */
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

/* modular helpers; all operands are in 0..M-1 */
#define PIV(a)        ((N - 1 + M - (a)) % M)          /* (N-1-a) mod M  */
#define SH(v,p)       (((v) + (p)) % M)                 /* v + p  mod M   */
#if MISPRINT
#define PREC(a,i,b,j) LESS(SH(a, PIV(a)), i, SH(b, PIV(b)), j)
#else
#define PREC(a,i,b,j) LESS(SH(a, PIV(a)), i, SH(b, PIV(a)), j)
#endif
#define MODM(v)       ((((v) % M) + M) % M)

/* advance a "for each j != i" index to the next other slot */
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)

/* ---- ghost UB-Bakery bookkeeping ---- */
#if CLUSTER
#define G_START(k)    gm[k] = NOG
#define G_READ(k,j)   if :: gtok[j] > gm[k] -> gm[k] = gtok[j] :: else fi
#define G_READX(k)    if :: gX > gm[k] -> gm[k] = gX :: else fi
#define G_TOKEN(k,t)  assert(MODM(gm[k] + 1) == t);  /* maxhat is right */ \
                      gtok[k] = gm[k] + 1; gm[k] = NOG
#define G_NOTOKEN(k)  gtok[k] = NOG
/* X := token[k]; X never decreases; renormalise by M */
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

/* recovery finished: the slot goes back to the registry */
#if KEEP_INCS
#define RELEASE(k)    dead[k] = 0; pend[k] = 0
#else
#define RELEASE(k)    incs[k] = 0; dead[k] = 0; pend[k] = 0
#endif

/* a passage of slot k enters / leaves the CS (ghost) */
#define CS_ENTER(k)   if :: !in_cs[k] -> assert(ncs == 0); ncs++; in_cs[k] = 1 \
                         :: else fi
#define CS_LEAVE(k)   if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi

/*
 * Proxy completion of slot i's passage, with its token t (stable: nobody
 * else writes token[i] meanwhile); gettoken[i] is already 0 and j is the
 * first other slot.  Runs by the recoverer (crash) or on behalf of the
 * aborted process.
 */
inline proxy()
{
	do
	:: j < N ->
		(gettoken[j] == 0);
		d_step { (token[j] == NT || PREC(t, i, token[j], j)) -> NEXT(j) }
	:: d_step { j >= N -> CS_ENTER(i); X = t; G_XWRITE(i); j = 0 };
	   /* token[i] := -1; the proxy's work is done (crash: the slot goes
	      back to the registry now; incs[i] is 0 on this path) */
	   d_step { token[i] = NT; G_NOTOKEN(i); CS_LEAVE(i); pmask = pmask & ~BIT(i); t = 0;
		    dead[i] = 0; pend[i] = 0 };
	   break
	od
}

#if DRIVEN
/* k blocks the proxy passage of slot dl (token tl): J6 or J7 fails */
#define BLOCKS(dl,tl,kk) (gettoken[kk] || (token[kk] != NT && !PREC(tl, dl, token[kk], kk)))
#define TURN_OK(d)       (token[d] == NT || PREC(t, i, token[d], d))
/* drive at level l is over: its passage complete (or a newer one) ... */
#define BASE_OVER(l)     (!(pmask & BIT(dd[l])) || token[dd[l]] != dt[l])
/* ... or the root drive's waiter has its turn on d ... */
#define OVER0            (BASE_OVER(0) || (rt && TURN_OK(dd[0])))
#if STALE_DRIVE
#define OVER1            BASE_OVER(1)
#define OVER2            BASE_OVER(2)
#else
/* ... or a nested passage no longer blocks its parent's (up the chain) */
#define OVER1            (BASE_OVER(1) || OVER0 || !BLOCKS(dd[0], dt[0], dd[1]))
#define OVER2            (BASE_OVER(2) || OVER1 || !BLOCKS(dd[1], dt[1], dd[2]))
#endif
#define OVER             (dep == 0 -> OVER0 : (dep == 1 -> OVER1 : OVER2))
#define CUR              dd[dep]
#if NO_PROXY_ID
#define SAMEW            (pj[CUR] == k)          /* the word without id (ABA) */
#else
#define SAMEW            (pj[CUR] == k && ptk[CUR] == kt && pab[CUR] == ka)
#endif

/*
 * A helper drives the proxy passage dd[0] (token dt[0]; rt: it is a waiter
 * whose own token is t), as proxy_drive() does.  Phases (local ph):
 * 0 look (over? finisher at work? scan the next slot k: its gettoken),
 * 1 its token, 2 blocked by k, 3 waiting for a finisher, 4 finishing,
 * 5 waiting for k.  Every access to a shared register is one step.
 */
inline drive()
{
	dep = 0; ph = 0;
	do
	:: d_step { ph == 0 && dep > 0 && OVER -> dd[dep] = 0; dt[dep] = 0; dep-- }
	:: d_step { ph == 0 && dep == 0 && OVER -> dd[0] = 0; dt[0] = 0 };
	   break
	:: d_step { ph == 0 && !OVER ->
		/* (the word's token is the register's while the passage is
		   pending: the C code reads the register, the same value) */
		k = pj[CUR]; kt = ptk[CUR]; ka = pab[CUR];
		if
		:: k == FIN -> ph = 3                   /* a live finisher is at work */
		:: k != FIN && k >= N -> pj[CUR] = FIN; fin = 1; kt = 0; ka = 0; ph = 4 /* claim */
		:: k < N && gettoken[k] -> ph = 2; kt = 0; ka = 0   /* J6 fails */
		:: k < N && !gettoken[k] -> ph = 1
		fi }
	:: d_step { ph == 1 ->                          /* J7 on k */
		if
		/* the verification and the commit are one step here; the C
		   code's CAS compares the whole word, passage id included */
		:: !SAMEW -> k = 0; kt = 0; ka = 0; ph = 0   /* the word moved */
		:: SAMEW && (token[k] == NT || PREC(kt, CUR, token[k], k)) ->
			k++; if :: k == CUR -> k++ :: else fi;
			pj[CUR] = k; k = 0; kt = 0; ka = 0; ph = 0
		:: SAMEW && !(token[k] == NT || PREC(kt, CUR, token[k], k)) -> ph = 2; kt = 0; ka = 0
		fi }
	:: d_step { ph == 2 && (pmask & BIT(k)) && dep < N - 1 ->  /* drive k's first */
		dep++; dd[dep] = k; dt[dep] = token[k]; k = 0; kt = 0; ka = 0; ph = 0 }
	:: d_step { ph == 2 && !((pmask & BIT(k)) && dep < N - 1) -> ph = 5 }
	:: d_step { ph == 5 && (OVER || ((pmask & BIT(k)) && dep < N - 1) ||
	                        !BLOCKS(CUR, dt[dep], k)) -> k = 0; kt = 0; ka = 0; ph = 0 }
	:: d_step { ph == 3 && (OVER || pj[CUR] != FIN) -> k = 0; kt = 0; ka = 0; ph = 0 }
	:: ph == 4 ->                                   /* proxy_finish */
		d_step { CS_ENTER(CUR); X = token[CUR]; G_XWRITE(CUR) };
		d_step { token[CUR] = NT; G_NOTOKEN(CUR); CS_LEAVE(CUR);
			 pmask = pmask & ~BIT(CUR); pend[CUR] = 0;
			 pj[CUR] = (CUR == 0 -> 1 : 0); ptk[CUR] = 0; pab[CUR] = 0;
			 k = 0; kt = 0; ka = 0; fin = 0; ph = 0 }
	od;
	rt = 0   /* (a plain step: what follows a drive may be a d_step) */
}
#endif

/* J7's condition on the current token[j] */
#define J7_OK(j)      (token[j] == NT || PREC(t, i, token[j], j))
#if DRIVEN
/* J7, or j's passage is left to a proxy: drive it, then J6/J7 on j again */
#define J7(j)         :: d_step { J7_OK(j) -> NEXT(j) } \
                      :: d_step { !J7_OK(j) && (pmask & BIT(j)) -> \
                              dd[0] = j; dt[0] = token[j]; rt = 1 }; \
                         drive()
#else
#define J7(j)         :: d_step { J7_OK(j) -> NEXT(j) }
#endif

active [N] proctype P()
{
	byte i = _pid;  /* slot index = pid (the P's are instantiated first) */
	byte j;         /* loop index over the other slots                 */
	byte seen;      /* J2: the set S, as a bit mask of token values    */
	byte t;         /* own token (local copy of token[i])              */
#if DRIVEN
	byte dd[3];     /* drive(): the passages being driven, nested      */
	byte dt[3];     /* their tokens when the drive started             */
	byte dep;       /* nesting level                                   */
	byte k;         /* the slot being scanned / blocking               */
	byte kt, ka;    /* the proxy word's passage id when k was read     */
	byte ph;        /* phase of drive()                                */
	bit  rt;        /* the root drive is a waiter's (its turn ends it) */
	bit  fin;       /* finishing a proxy: no abort until done          */
#endif

incarnation:
	{
	do
	::	/* remainder region, then the doorway */
#if DRIVEN
		/* jay_prepare: our aborted passage is complete first */
		if
		:: d_step { (pmask & BIT(i)) -> dd[0] = i; dt[0] = token[i]; rt = 0 };
		   drive()
		:: else
		fi;
#endif
		/* J1 */ d_step { gettoken[i] = 1; AHEAD_START(i); FIRST(j); seen = 0; G_START(i) };
		/* J2: read the other tokens, one atomic read each */
		do
		:: d_step { j < N ->
			if
			:: token[j] != NT -> seen = seen | BIT(token[j]); G_READ(i, j)
			:: else
			fi;
			NEXT(j) }
		:: d_step { j >= N ->
			/* J3: x := X, and the local computation of J4 */
			G_READX(i);
			/* maxhat(S u {x}) + 1: pivot p = N-1-x; max of the shifted
			   values (x itself shifts to N-1); shift back; add 1 */
			t = N - 1;      /* shifted max so far (x's own)     */
			j = 0;          /* j runs over the token values now */
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
		   /* J4 */ d_step { assert(t < M);  /* tokens in [-1, 2N-2] */
				    token[i] = t; G_TOKEN(i, t) };
		   /* J5 */ d_step { gettoken[i] = 0; wmask = wmask | BIT(i); pend[i] = 1; FIRST(j) };
		   break
		od;
		{
		/* for each j != i */
		do
		:: j < N ->
			/* J6 */ (gettoken[j] == 0);
			/* J7; or a first look at it fails: J6, J7 again */
			if
			J7(j)
#if LOOK
			:: d_step { !J7_OK(j) };
			   /* J6 */ (gettoken[j] == 0);
			   if
			   J7(j)
			   fi
#endif
			fi
		:: d_step { j >= N ->	/* all j passed */
#if FIFO
			assert(ahead[i] == 0);           /* doorway FIFO     */
#endif
			CS_ENTER(i);                     /* mutual exclusion */
			wmask = wmask & ~BIT(i); UNAHEAD(i); pend[i] = 0; j = 0;
			/* J8 */ X = t; G_XWRITE(i) };
			/* J8b */ incs[i] = 1;
			/* CS.  Leaving it and J10's first store are one step.
			   (Inside the abort block only for Promela's sake: abort
			   requests go to waiting processes only.) */
			/* J10 */ d_step { CS_LEAVE(i); incs[i] = 0 };
			/* J10 */ d_step { token[i] = NT; G_NOTOKEN(i); t = 0 };
			break
		od
		} unless {
			/* abort (trylock/timedlock gives up) */
#if DRIVEN
			/* not while finishing a proxy (proxy_finish never waits) */
			d_step { abort_req[i] && !fin ->
				dd[0] = 0; dd[1] = 0; dd[2] = 0; dt[0] = 0; dt[1] = 0; dt[2] = 0;
				dep = 0; k = 0; kt = 0; ka = 0; ph = 0; rt = 0;
#else
			d_step { abort_req[i] ->
#endif
				abort_req[i] = 0;
				wmask = wmask & ~BIT(i); UNAHEAD(i); AHEAD_CLR(i);
#if PLAIN_RESET == 1
				token[i] = NT; G_NOTOKEN(i); t = 0; j = 0; pend[i] = 0 };
#elif PLAIN_RESET == 2
				X = t; G_XWRITE(i) };
			d_step { token[i] = NT; G_NOTOKEN(i); t = 0; j = 0; pend[i] = 0 };
#elif DRIVEN
				/* the passage is left to helpers (pend stays set
				   until it is complete) */
				nab[i]++; pmask = pmask | BIT(i); pj[i] = (i == 0 -> 1 : 0);
				ptk[i] = t; pab[i] = nab[i]; t = 0; j = 0 }
#else
				/* the passage is completed by proxy (pend stays set
				   until it is) */
				pmask = pmask | BIT(i); FIRST(j) };
			proxy()
#endif
		}
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor (see header).
	   The escape step is the recoverer's first step; it may happen at
	   any time after the crash.  The locals of the dead incarnation are
	   dropped there. ---- */
	if
	:: d_step { dead[i] && incs[i] ->		/* died after J8b */
		j = 0; seen = 0; t = 0; G_START(i);
		token[i] = NT; G_NOTOKEN(i); CS_LEAVE(i) };
	   d_step { gettoken[i] = 0; RELEASE(i) }
	:: d_step { dead[i] && !incs[i] && token[i] == NT ->	/* before J4 */
		j = 0; seen = 0; t = 0; G_START(i);
		gettoken[i] = 0; RELEASE(i) }
	:: d_step { dead[i] && !incs[i] && token[i] != NT ->
		j = 0; seen = 0; G_START(i); t = token[i];
#if PLAIN_RESET == 1
		token[i] = NT; G_NOTOKEN(i); CS_LEAVE(i); t = 0 };
	   d_step { gettoken[i] = 0; RELEASE(i) }
#elif PLAIN_RESET == 2
		CS_ENTER(i); X = t; G_XWRITE(i) };
	   d_step { token[i] = NT; G_NOTOKEN(i); CS_LEAVE(i); t = 0 };
	   d_step { gettoken[i] = 0; RELEASE(i) }
#else
		/* PROXY COMPLETION (releases the slot at its end) */
		gettoken[i] = 0; pmask = pmask | BIT(i); FIRST(j) };
	   proxy()
#endif
	fi;
	/* recovery finished, the slot went back to the registry: a new
	   thread claims it, fresh incarnation */
	goto incarnation
	}
}

#if DEAD_HOLDS
#define DROP_CS(k)  skip
#else
#define DROP_CS(k)  if :: in_cs[k] && !(pmask & BIT(k)) -> ncs--; in_cs[k] = 0 :: else fi
#endif
#define CRASH(k)  :: d_step { crashes > 0 && !dead[k] && !(pmask & BIT(k)) -> \
			crashes--; dead[k] = 1; abort_req[k] = 0; DROP_CS(k); \
			wmask = wmask & ~BIT(k); UNAHEAD(k); AHEAD_CLR(k); pend[k] = 1 }
#define ABORT(k)  :: d_step { aborts > 0 && (ABORT_MASK & BIT(k)) && (wmask & BIT(k)) && !dead[k] && !abort_req[k] -> \
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

#if CLUSTER
/* invariant monitor: fires as soon as a reachable state breaks it */
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

#ifdef LIVENESS
#if N == 2
ltl starvation_free { []<> !pend[0] && []<> !pend[1] }
#else
ltl starvation_free { []<> !pend[0] && []<> !pend[1] && []<> !pend[2] }
#endif
#endif
