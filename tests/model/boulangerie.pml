/* SPDX-License-Identifier: MIT */
/*
 * boulangerie.pml -- SPIN model of the Boulangerie lock (and of a lock
 *                    shared by Bakery and Boulangerie participants) as
 *                    libbakery runs it, with crashes, recovery, slot reuse
 *                    and aborts.
 *
 * Paper : Moses & Patkin, "Mutual exclusion as a matter of priority",
 *         TCS 2018, Fig. 2; section 4: Bakery and Boulangerie processes
 *         may be mixed on one lock.
 * Mirrors: lib/algo/boulangerie.c (Bakery participants: lib/algo/lamport.c,
 *          see lamport.pml for their steps L1..L9)
 *
 * Registers are atomic and sequentially consistent (the C code puts a full
 * barrier at every store->load point).  One Promela step = one shared access;
 * purely local computation is folded into the step of the access it follows.
 *
 * Steps of process i (slot i), matching the labels in the C code and the
 * line numbers of Fig. 2:
 *   3     choosing[i] := 1
 *   4.1   for each j != i (increasing index): read number[j]
 *   4.2   num := 1 + max
 *   4.3   number[i] := num
 *   5     choosing[i] := 0                     -- end of the doorway
 *   6a    if num == 1 then test only j < i else test every j != i
 *   6b    for each such j, from any of them, round (within the j < lim,
 *         i is skipped), each once; the first is chosen nondeterministically
 *         at 5 (the C code starts after its predecessor in line):
 *   7_j       await choosing[j] == 0
 *   8_j       prev := bottom;
 *             repeat prev := tmp; tmp := number[j]
 *             until tmp == 0 || (num,i) < (tmp,j) || (prev != bottom && tmp != prev)
 *           (LOOK: the first look of wait_for_others: a first 8_j read that fails
 *           goes back to 7_j, then 8_j with prev := bottom, once per j)
 *   9     CS
 *   10    number[i] := 0
 * 8_j is modelled as: one read; if it does not decide, prev := that value
 * and the rest of the loop is the blocking guard
 *     number[j] == 0 || (num,i) < (number[j],j) || number[j] != prev
 * (every later read that does not end the loop returns prev again, so
 * prev never changes after the first read: the two forms have the same
 * behaviours, the blocking one without the useless self-loops).
 * The order of 6b is free: 6a limits the set, not the order (with number 1
 * only a j < i can hold a better ticket), and 8_j's argument is made for
 * each j on its own, whatever i passed before.
 * A Bakery participant (bit i of LAMPORT_MASK) runs L1..L9 of lamport.pml,
 * i.e. the same doorway, no 6a shortcut and no "two different reads" exit.
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
 *              Recovery: choosing[d] := 0 and number[d] := 0, in either
 *              order (both orders are explored), as two separate steps.
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
 *              line 5, before the CS) to give up (at most ABORTS per run); the
 *              process leaves at its next step: number[i] := 0 and back to
 *              the remainder region (choosing[i] is already 0).
 *
 * Variant switches (-D):
 *   N=2|3          number of slots                    (default 2)
 *   CRASHES=0..2   crash budget per run               (default 0)
 *   ABORTS=0..2    abort budget per run               (default 0)
 *   MAXNUM=k       bound on ticket numbers (model only; default N+2).
 *                  Numbers are unbounded in the paper.  A process whose
 *                  4.1 maximum would give a number > MAXNUM does not write
 *                  it: it resets choosing[i] := 0 and retires forever (it
 *                  looks to the others exactly like a process that crashed
 *                  in its doorway and was recovered without reuse).  This
 *                  only ADDS behaviours of the faulty system, so the safety
 *                  results stay sound; runs whose numbers need more than
 *                  MAXNUM are cut there.  retired[k] records it (a
 *                  retired process is not crashed any more).
 *   LAMPORT_MASK=m bit k set: slot k runs the Bakery algorithm instead
 *                  (the paper's section 4 mix; default 0 = all Boulangerie).
 *   EARLY_REUSE=1  MUST FAIL: the slot is handed to a new incarnation as
 *                  soon as choosing[d] := 0 is done; the recoverer's
 *                  number[d] := 0 is still in flight and lands later (the
 *                  Fault process performs it at any later time), possibly
 *                  on the newcomer's fresh ticket.
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
 *                        their doorway (and are still waiting) when j ran 3;
 *                        j asserts ahead[j] == 0 when entering the CS (a
 *                        process leaves every ahead[] set when it enters the
 *                        CS, aborts or crashes);
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
#ifndef MAXNUM
#define MAXNUM (N+2)
#endif
#ifndef EARLY_REUSE
#define EARLY_REUSE 0
#endif
#ifndef FIFO
#define FIFO 1
#endif
#ifndef DEAD_HOLDS
#define DEAD_HOLDS 1
#endif
#ifndef LAMPORT_MASK
#define LAMPORT_MASK 0
#endif
#define NONE 255      /* bottom */

/* ---------------- shared registers (the C code's) ---------------- */
bit  choosing[N];
byte number[N];

/* ---------------- ghost state (model only) ---------------- */
byte ncs;            /* incarnations in the CS                          */
byte wmask;          /* bit k: k finished its doorway, waits for the CS */
byte ahead[N];       /* FIFO: see header                                */
bit  pend[N];        /* liveness obligation of slot k                   */
bit  dead[N];        /* slot crashed, recovery not finished             */
bit  in_cs[N];       /* incarnation in the CS (dead: until its reset)   */
bit  abort_req[N];   /* Fault asked k to give up                        */
bit  late[N];        /* EARLY_REUSE: number[k] := 0 still in flight     */
bit  retired[N];     /* k hit MAXNUM and retired (run cut for k)        */
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

/* 8_j: the priority condition on the current number[j]; the loop, as
   the options of an if: its first read, then (prev) the later ones */
#define B8_OK(j)      (number[j] == 0 || LESS(num, i, number[j], j))
#define B8(j)         :: d_step { B8_OK(j) -> WNEXT(j) } \
                      :: d_step { !B8_OK(j) -> prev = number[j] }; \
                         d_step { (B8_OK(j) || (boul && number[j] != prev)) -> prev = 0; WNEXT(j) }

/* advance a "for each j != i" index to the next other slot */
#define NEXT(j)       j++; if :: j == i -> j++ :: else fi
#define FIRST(j)      j = (i == 0 -> 1 : 0)

/* 6a: the wait tests the j < LIM0 (j != i), LEFT0 of them */
#define LIM0          ((boul && num == 1) -> i : N)
#define LEFT0         ((boul && num == 1) -> i : N - 1)
/* 6b: `left` slots still to pass, from j, round within the j < lim; j is
   0 when none is left (states merge) */
#define WNEXT(j)      left--; \
                      if \
                      :: left == 0 -> j = 0 \
                      :: else -> j = (j + 1) % lim; if :: j == i -> j = (j + 1) % lim :: else fi \
                      fi
/* 5, 6a, and the slot 6b starts from: any k < lim (one branch per k) */
#define DOOR_END      choosing[i] = 0; wmask = wmask | BIT(i); pend[i] = 1; \
                      lim = LIM0; left = LEFT0
#define W5_FROM(k)    :: d_step { k < LIM0 && k != i -> DOOR_END; j = k }

/* recovery writes; the one that clears number also ends the dead
   incarnation's (ghost) stay in the CS */
#define RESET_CHOOSING(k)  choosing[k] = 0
#define RESET_NUMBER(k)    number[k] = 0; if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi

active [N] proctype P()
{
	byte i = _pid;  /* slot index = pid (the P's are instantiated first) */
	bit  boul = ((LAMPORT_MASK & BIT(_pid)) == 0);  /* Boulangerie or Bakery */
	byte j;         /* loop index over the other slots              */
	byte lim;       /* 6a: test the j < lim only                    */
	byte left;      /* 6b: slots still to pass (0 elsewhere)        */
	byte num;       /* own ticket, num[i] of Fig. 2                 */
	byte prev;      /* 8_j: previous value read from number[j]      */

incarnation:
	{
	do
	::	/* remainder region, then the doorway */
		/* 3 */ d_step { choosing[i] = 1; AHEAD_START(i); FIRST(j); num = 0 };
		/* 4.1: read the other numbers, one atomic read each */
		do
		:: d_step { j < N -> if :: number[j] > num -> num = number[j] :: else fi; NEXT(j) }
		:: d_step { j >= N && num < MAXNUM -> num++; j = 0 };	/* 4.2 */
		   break
		:: d_step { j >= N && num >= MAXNUM ->
			/* model bound: leave no trace, retire forever */
			choosing[i] = 0; retired[i] = 1; AHEAD_CLR(i); j = 0; num = 0 };
		   goto gone
		od;
		/* 4.3 */ number[i] = num;
		/* 5, 6a, and the slot 6b starts from */
		if
		W5_FROM(0)
		W5_FROM(1)
#if N > 2
		W5_FROM(2)
#endif
		:: d_step { LEFT0 == 0 -> DOOR_END; j = 0 }
		fi;
		{
		/* 6b: for each j != i, j < lim, from the chosen one, round */
		do
		:: left > 0 ->
			/* 7_j */ (choosing[j] == 0);
			/* 8_j; or its first read fails and 7_j, 8_j again */
			if
			B8(j)
#if LOOK
			:: d_step { !B8_OK(j) };
			   /* 7_j */ (choosing[j] == 0);
			   /* 8_j */
			   if
			   B8(j)
			   fi
#endif
			fi
		:: d_step { left == 0 ->	/* all j passed: enter the CS */
			assert(ncs == 0);                /* mutual exclusion */
#if FIFO
			assert(ahead[i] == 0);           /* doorway FIFO     */
#endif
			ncs++; in_cs[i] = 1;
			wmask = wmask & ~BIT(i); UNAHEAD(i); pend[i] = 0; j = 0; lim = 0 };
			/* 9: CS.  Leaving it and line 10 are one step (nothing
			   shared in between).  (Inside the abort block only for
			   Promela's sake: abort requests go to waiting processes
			   only.) */
			/* 10 */ d_step { ncs--; in_cs[i] = 0; number[i] = 0; num = 0 };
			break
		od
		} unless {
			/* abort (trylock/timedlock gives up): number[i] := 0, and
			   back to the remainder region */
			d_step { abort_req[i] ->
				number[i] = 0; abort_req[i] = 0;
				wmask = wmask & ~BIT(i); UNAHEAD(i); AHEAD_CLR(i);
				pend[i] = 0; j = 0; left = 0; num = 0; lim = 0; prev = 0 }
		}
	od
	} unless {
	/* ---- crashed: recovery of slot i by a survivor (see header).
	   The escape step is the recoverer's first write; it may happen at
	   any time after the crash.  The locals of the dead incarnation are
	   dropped there. ---- */
#if EARLY_REUSE
	/* MUST FAIL variant: the slot is reused right after choosing[i] := 0;
	   number[i] := 0 is still in flight (the Fault process lands it at
	   any later time).  The dead incarnation stops counting as "in the
	   CS" here, so that a violation found is one between live threads. */
	d_step { dead[i] -> j = 0; left = 0; num = 0; lim = 0; prev = 0;
		 choosing[i] = 0; late[i] = 1; dead[i] = 0; pend[i] = 0;
		 if :: in_cs[i] -> ncs--; in_cs[i] = 0 :: else fi };
	goto incarnation
#else
	/* either order; the second write also ends the recovery, after
	   which the registry may hand the slot to a new thread */
	if
	:: d_step { dead[i] -> j = 0; left = 0; num = 0; lim = 0; prev = 0; RESET_CHOOSING(i) };
	   d_step { RESET_NUMBER(i); dead[i] = 0; pend[i] = 0 }
	:: d_step { dead[i] -> j = 0; left = 0; num = 0; lim = 0; prev = 0; RESET_NUMBER(i) };
	   d_step { RESET_CHOOSING(i); dead[i] = 0; pend[i] = 0 }
	fi;
	/* a new thread claims the slot: fresh incarnation */
	goto incarnation
#endif
	};
gone:
end:	skip
}

#if DEAD_HOLDS
#define DROP_CS(k)  skip
#else
#define DROP_CS(k)  if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi
#endif
#define CRASH(k)  :: d_step { crashes > 0 && !dead[k] && !late[k] && !retired[k] -> \
			crashes--; dead[k] = 1; abort_req[k] = 0; DROP_CS(k); \
			wmask = wmask & ~BIT(k); UNAHEAD(k); AHEAD_CLR(k); pend[k] = 1 }
#define ABORT(k)  :: d_step { aborts > 0 && (wmask & BIT(k)) && !dead[k] && !abort_req[k] -> \
			aborts--; abort_req[k] = 1 }
#define LATE(k)   :: d_step { late[k] -> number[k] = 0; late[k] = 0 }

#if CRASHES > 0 || ABORTS > 0
/* the environment: crashes, abort requests, late writes of EARLY_REUSE */
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
#if EARLY_REUSE
	LATE(0)
	LATE(1)
#if N > 2
	LATE(2)
#endif
#endif
	:: (late[0] + late[1] + late[N-1] == 0) -> break   /* retire */
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
