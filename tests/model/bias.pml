/* SPDX-License-Identifier: MIT */
/*
 * bias.pml -- a biased Bakery lock: the slot the lock is biased to takes
 *             and releases it with plain stores (no locked instruction, no
 *             fence) while nobody else comes, and a newcomer revokes the
 *             bias with membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) before
 *             its doorway; on a machine with store buffers (x86-64's
 *             TSO), every process killed at any step.
 *
 * Built as BAKERY_LOCK_BIASED: lib/algo/bias.h (B0..B4, the FAST_CHOOSING=0
 * variant), lib/algo/bias.c (V1..V3, G1..G3).
 *
 * Memory: per slot choosing[i] and number[i] (Lamport's registers); the
 * lock's word bias: NONE, the slot it is biased to, or REVOKING.
 *
 * The owner O (slot 0) is the only process with plain stores: they go into
 * its store buffer, a FIFO of (address, value) entries, capacity 3 (a full
 * buffer stalls the next store), drained to memory by the Drain process
 * one entry at a time, in order, at any moment, and entirely by a
 * membarrier.  Only O's own choosing[0] and number[0] are ever buffered,
 * and O never loads them (its plain loads are of bias, and of the others'
 * registers in its wait loop and its grant), so no load of O needs to
 * forward from its buffer.  A store "with a full barrier" (xchg, or a
 * store and mfence) waits until the buffer is empty and writes memory: one
 * step.
 *
 * O's passage:
 *   B0  load bias (plain)
 *   fast path, B0 read O:
 *   B1  choosing[O] := 1          plain
 *   B2  number[O] := 1            plain (any positive value: while the
 *                                 bias is O's nobody else holds a ticket)
 *   B3  choosing[O] := 0          plain
 *   B4  load bias: O -> critical section, without the wait loop;
 *       REVOKING or NONE -> a full fence and number[O] := 0 with a full
 *       barrier (the fast-path ticket aborted; one step: the xchg drains
 *       the buffer first), then the normal path from L1
 *   exit: number[O] := 0          plain
 *   normal path, B0 read anything else (or after the abort at B4):
 *   L1  choosing[O] := 1, full barrier
 *   L2  for each j != O: load number[j]; num := 1 + max
 *   L3  number[O] := num, full barrier
 *   L4  choosing[O] := 0, full barrier
 *   L5  for each j != O: await choosing[j] == 0;
 *                        await number[j] == 0 || (num, O) < (number[j], j)
 *       critical section
 *   L9  number[O] := 0            plain (a superset of the fenced store:
 *                                 the drain may follow at once)
 *   grant (GRANT=1), after a passage that took the normal path, if O
 *   chooses to:
 *   G1  CAS(bias, NONE -> O)      a locked instruction (full barrier)
 *   G2  if it won: for each j != O: load choosing[j], then number[j];
 *       at the first one not 0:
 *   G3  CAS(bias, O -> NONE)      it fails if a revoker took the word
 *                                 meanwhile: fine
 *   Without GRANT the bias is O's from the start.  O's normal path has no
 *   V1..V3: only O is ever biased to here, so there is nobody else's bias
 *   for it to revoke.
 *
 * A revoker R (slot 1, and 2 with REVOKERS=2): all its stores are locked
 * or fenced, straight to memory.  Its passage is Lamport's, with V1..V3
 * between L1 and L2:
 *   L1  choosing[R] := 1, full barrier
 *   V1  load bias: NONE -> on to L2; another slot X -> CAS(bias,
 *       X -> REVOKING), whether it wins or not, then V2 and V3;
 *       REVOKING -> V2 and V3 as well (the revoker that set it may have
 *       been killed before V3, and a revoker must not go on before a
 *       membarrier made after REVOKING was set)
 *   V2  membarrier: one atomic step that drains O's store buffer
 *       entirely (a store O makes after it is not drained by it)
 *   V3  CAS(bias, REVOKING -> NONE)
 *   L2..L9 as O's normal path (its exit a store to memory).
 *
 * Why it holds, in short: an O whose B4 read O read it before the
 * revoker's CAS, so its B1..B3 were in its buffer or in memory when the
 * revoker's membarrier (after the CAS) drained them: the revoker's L2
 * reads number[O] = 1 (or 0 from O's exit), takes a bigger ticket and
 * waits for O.  An O whose B4 read anything else throws its ticket away
 * and makes a fenced doorway that starts after the revoker's L1, as in
 * Lamport's algorithm.  A revoker whose V1 reads NONE or REVOKING comes
 * after a membarrier made after the bias left O (its own, or the one
 * before the V3 that stored NONE).  A grant is a Dekker pair: O's CAS then
 * its loads of choosing[j], number[j] against the revoker's choosing[R] :=
 * 1 then its V1: either the revoker reads O and revokes, or O sees the
 * revoker (choosing first: a doorway that ended after O's CAS has left its
 * number) and un-grants before its next passage.
 *
 * Crashes (CRASH=1, default): the Fault process may kill any process at
 * any step (at most CRASHES deaths per run, default: every process), and
 * may stop making faults at any time.  A dead process's buffered stores
 * still drain (x86 never discards a retired store).  At any later moment
 * after the buffer has drained, a recoverer resets the dead slot's
 * choosing and number to 0 (one atomic step); the bias word is left as it
 * is: a dead owner's bias is revoked by the next revoker like any other,
 * and a dead revoker's REVOKING is finished by the next revoker that reads
 * it.  A slot is not reused after a death: its next thread would start
 * from what an owner between two passages has (registers 0, buffer empty,
 * bias any value), so it is one more passage of the same process.  A
 * process that died in the critical section counts as inside until its
 * reset.
 *
 * Bounded runs: O makes OPASS passages (default 3), each revoker RPASS
 * (default 1).  Numbers are bounded by MAXNUM (default NP + 2, NP = the
 * number of slots) as in lamport.pml: a process whose L2 maximum would
 * give a number above it resets choosing := 0 and retires for good (to
 * the others: a death in the doorway and its recovery).
 *
 * Checked:
 *   - mutual exclusion: ghost ncs, processes in the critical section (the
 *     dead until their reset); every entry asserts ncs == 0;
 *   - invalid end states: nobody waits for ever (on a dead process's
 *     registers never reset, a ticket never cleared, a buffer never
 *     drained);
 *   - REACH=1 (must fail by design): asserts that O never enters by the
 *     fast path; pan's counterexample is the witness that it does (with
 *     GRANT=1: after a grant that survived its walk).
 *
 * Switches:
 *   REVOKERS=1|2     revokers (default 1)
 *   GRANT=0|1        O starts with bias NONE and grants itself the bias
 *                    after its normal passages (default 0: bias O at the
 *                    start, never granted again)
 *   OPASS, RPASS     passages of O and of each revoker (default 3, 1)
 *   MAXNUM           bound on the numbers (default NP + 2)
 *   CRASH=0|1        deaths at any step (default 1)
 *   CRASHES          at most that many deaths per run (default NP)
 *   REACH=1          the witness above
 *   FAST_CHOOSING=0  the fast path without B1 and B3 (default 1): it
 *                    passes too (README); the revoker never relies on
 *                    choosing[O] for a fast-path ticket, which it sees
 *                    only after its membarrier or which O throws away
 * Must-fail variants (each breaks mutual exclusion between live
 * processes, CRASH=0):
 *   NO_MEMBARRIER=1  the revoker skips V2: O's B1..B3 still sit in its
 *                    buffer when the revoker reads number[O] = 0
 *   NO_ABORT=1       O, finding the bias revoked at B4, keeps its
 *                    fast-path ticket 1 and, after a fence, goes to its
 *                    wait loop without a new doorway: a ticket not taken
 *                    after the revoker's
 *   SECOND_SKIPS=1   (REVOKERS=2) a revoker that reads REVOKING at V1
 *                    goes on (no V2, no V3): the first revoker's
 *                    membarrier has not been made yet
 *   GRANT_NO_WALK=1  (GRANT=1) no G2/G3: the grant keeps the bias whoever
 *                    is in the doorway
 *   BIAS_BEFORE_CHOOSING=1  (GRANT=1) the revoker makes V1..V3 before L1:
 *                    its V1 reads NONE, O's grant then finds choosing[R]
 *                    still 0
 *   WALK_NUMBER_FIRST=1  (GRANT=1) G2 loads number[j] before choosing[j]:
 *                    it reads number 0 before the revoker's L3 and
 *                    choosing 0 after its L4
 */

#ifndef REVOKERS
#define REVOKERS 1
#endif
#ifndef GRANT
#define GRANT 0
#endif
#ifndef OPASS
#define OPASS 3
#endif
#ifndef RPASS
#define RPASS 1
#endif
#ifndef CRASH
#define CRASH 1
#endif
#ifndef REACH
#define REACH 0
#endif
#ifndef FAST_CHOOSING
#define FAST_CHOOSING 1
#endif
#ifndef NO_MEMBARRIER
#define NO_MEMBARRIER 0
#endif
#ifndef NO_ABORT
#define NO_ABORT 0
#endif
#ifndef SECOND_SKIPS
#define SECOND_SKIPS 0
#endif
#ifndef GRANT_NO_WALK
#define GRANT_NO_WALK 0
#endif
#ifndef BIAS_BEFORE_CHOOSING
#define BIAS_BEFORE_CHOOSING 0
#endif
#ifndef WALK_NUMBER_FIRST
#define WALK_NUMBER_FIRST 0
#endif
#if WALK_NUMBER_FIRST
#define WALK_1ST number
#define WALK_2ND choosing
#else
#define WALK_1ST choosing
#define WALK_2ND number
#endif

#define NP (1 + REVOKERS)       /* slots: O is 0, the revokers 1..REVOKERS */
#if REVOKERS != 1 && REVOKERS != 2
#error "REVOKERS must be 1 or 2"
#endif
#ifndef MAXNUM
#define MAXNUM (NP + 2)
#endif
#ifndef CRASHES
#define CRASHES NP
#endif

#define OWNER    0
#define NONE     7
#define REVOKING 8

/* addresses in O's store buffer */
#define A_CH  0                 /* choosing[OWNER] */
#define A_NUM 1                 /* number[OWNER] */

/* memory */
bit  choosing[NP];
byte number[NP];
#if GRANT
byte bias = NONE;
#else
byte bias = OWNER;
#endif

/* O's store buffer: (address, value), oldest first */
chan sb = [3] of { bit, byte };

/* ghosts */
byte ncs;               /* processes in the critical section */
bit  in_cs[NP];
bit  dead[NP];          /* killed (for good: no reuse) */
bit  fin[NP];           /* finished its passages, retired or recovered */
byte crashes = CRASHES;
bit  reach;             /* REACH: O entered by the fast path */

/* (a,i) < (b,j) lexicographically */
#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))

/* an entry of O's buffer lands in memory */
#define LAND(a, v) \
	if :: a == A_CH -> choosing[OWNER] = v :: else -> number[OWNER] = v fi

/* O's stores: plain (into the buffer; a full buffer stalls), or with a
 * full barrier (wait for the buffer to drain, write memory) */
#define PSTORE(a, v)     sb!a,v
#define FSTORE(reg, v)   atomic { len(sb) == 0 -> reg = v }

/* O's passage took the normal path (for the grant) */
#if GRANT
#define MARK_NORMAL   normal = 1
#define UNMARK_NORMAL normal = 0
#else
#define MARK_NORMAL   skip
#define UNMARK_NORMAL skip
#endif

/* the critical section: entry (mutual exclusion checked) and exit ghost */
#define ENTER(k)  assert(ncs == 0); ncs++; in_cs[k] = 1
#define LEAVE(k)  ncs--; in_cs[k] = 0
#if REACH
#define FAST_ENTERED  reach = 1; assert(!reach)
#else
#define FAST_ENTERED  skip
#endif

/* the recoverer's reset of a dead slot (its buffer, if any, drained) */
#define RESET(k) \
	d_step { choosing[k] = 0; number[k] = 0; \
		 if :: in_cs[k] -> ncs--; in_cs[k] = 0 :: else fi; fin[k] = 1 }

/* "for each j != i", increasing: the first other slot, the next one */
#define FIRST(j, i)  j = (i == 0 -> 1 : 0)
#define NEXT(j, i)   j++; if :: j == i -> j++ :: else -> skip fi

/* Local bookkeeping (loop indexes, copies) is folded into the step of the
 * shared access next to it, and reset as soon as it is dead, so that it
 * adds no states. */

active proctype Owner()
{
	byte pass, j, num;
	bit normal, won, busy;

	{
	do
	:: d_step { pass == OPASS -> fin[OWNER] = 1 }; break
	/* B0: a plain load of bias (each branch reads it once) */
	:: pass < OPASS && bias == OWNER ->
		/* the fast path */
#if FAST_CHOOSING
		/* B1 */ PSTORE(A_CH, 1);
#endif
		/* B2 */ PSTORE(A_NUM, 1);
#if FAST_CHOOSING
		/* B3 */ PSTORE(A_CH, 0);
#endif
		/* B4: a plain load of bias */
		if
		:: atomic { bias == OWNER -> ENTER(OWNER); FAST_ENTERED };
			goto leave
		:: bias != OWNER ->
#if NO_ABORT
			/* the fence; the fast-path ticket kept */
			d_step { len(sb) == 0 -> num = 1; FIRST(j, OWNER) };
			goto await
#else
			/* the fence, then the abort: number := 0 (one step:
			 * the xchg drains the buffer first) */
			FSTORE(number[OWNER], 0);
			goto slow
#endif
		fi
	:: pass < OPASS && bias != OWNER ->
slow:
		/* the normal path.  L1 */
		atomic { len(sb) == 0 -> choosing[OWNER] = 1; MARK_NORMAL;
			 FIRST(j, OWNER); num = 0 };
		/* L2: one load each */
		do
		:: d_step { j < NP -> if :: number[j] > num -> num = number[j] :: else fi;
			    NEXT(j, OWNER) }
		:: d_step { j >= NP && num < MAXNUM -> num++; j = 0 }; break
		:: d_step { j >= NP && num >= MAXNUM -> j = 0; num = 0 };
			/* model bound: retire for good */
			d_step { len(sb) == 0 -> choosing[OWNER] = 0; fin[OWNER] = 1 };
			goto gone
		od;
		/* L3 */ FSTORE(number[OWNER], num);
		/* L4 */ d_step { len(sb) == 0 -> choosing[OWNER] = 0; FIRST(j, OWNER) };
await:
		/* L5: await choosing[j] == 0, then the ticket test */
		do
		:: j < NP && choosing[j] == 0 ->
			d_step { (number[j] == 0 || LESS(num, OWNER, number[j], j)) -> NEXT(j, OWNER) }
		:: atomic { j >= NP -> ENTER(OWNER); j = 0 }; break
		od;
leave:
		/* exit (L9, or the fast path's): a plain store */
		atomic { sb!A_NUM,0 -> LEAVE(OWNER); num = 0 };
#if GRANT
		if
		:: normal ->
			/* G1 */
			d_step {
				len(sb) == 0 ->
				if
				:: bias == NONE -> bias = OWNER; won = 1
				:: else -> won = 0
				fi;
				FIRST(j, OWNER)
			};
#if !GRANT_NO_WALK
			if
			:: won ->
				/* G2: choosing[j] then number[j], one load each */
				do
				:: d_step { j < NP && !busy -> busy = (WALK_1ST[j] != 0) };
				   d_step { if :: !busy -> busy = (WALK_2ND[j] != 0) :: else fi;
					    NEXT(j, OWNER) }
				:: d_step { j >= NP && !busy -> j = 0 }; break
				:: d_step { busy -> j = 0; busy = 0 };
					/* G3 */
					d_step { len(sb) == 0 ->
						 if :: bias == OWNER -> bias = NONE :: else fi };
					break
				od
			:: else -> skip
			fi;
#endif
			atomic { won = 0; j = 0 }
		:: true -> skip         /* or not */
		fi;
#endif
		d_step { pass++; UNMARK_NORMAL }
	od
	} unless {
		/* killed: its buffer still drains; the recoverer resets the
		 * slot once it has */
		d_step { dead[OWNER] ->
			pass = 0; j = 0; num = 0; won = 0; busy = 0;
			UNMARK_NORMAL };
		(len(sb) == 0);
		RESET(OWNER)
	};
gone:
	skip
}

/* V2: membarrier, O's buffer drains entirely, now (one step); V3 */
#if NO_MEMBARRIER
#define MEMBARRIER
#else
#define MEMBARRIER \
	atomic { \
		do \
		:: len(sb) > 0 -> sb?a,v; LAND(a, v) \
		:: else -> break \
		od; \
		a = 0; v = 0 \
	};
#endif
#define V2_V3 \
	MEMBARRIER \
	atomic { if :: bias == REVOKING -> bias = NONE :: else -> skip fi }

/* V1..V3 of a revoker */
inline revoke()
{
	/* V1: a load of bias (each branch reads it once) */
	if
	:: bias == NONE                 /* nothing to revoke */
	:: d_step { bias != NONE -> b = bias };
		if
		:: atomic { b != REVOKING ->
			/* CAS(bias, X -> REVOKING), won or not */
			if :: bias == b -> bias = REVOKING :: else -> skip fi;
			b = 0 };
			V2_V3
		:: d_step { b == REVOKING -> b = 0 };
#if !SECOND_SKIPS
			V2_V3
#else
			skip            /* goes on without a membarrier */
#endif
		fi
	fi
}

active [REVOKERS] proctype Revoker()
{
	byte i = _pid;          /* slot: the Owner is pid 0 */
	byte pass, j, num, b, v;
	bit a;

	assert(i >= 1 && i < NP);
	{
	do
	:: d_step { pass == RPASS -> fin[i] = 1 }; break
	:: pass < RPASS ->
#if BIAS_BEFORE_CHOOSING
		revoke();
#endif
		/* L1 */ d_step { choosing[i] = 1; FIRST(j, i); num = 0 };
#if !BIAS_BEFORE_CHOOSING
		revoke();
#endif
		/* L2: one load each, the other slots in increasing order */
		do
		:: d_step { j < NP -> if :: number[j] > num -> num = number[j] :: else fi;
			    NEXT(j, i) }
		:: d_step { j >= NP && num < MAXNUM -> num++; j = 0 }; break
		:: d_step { j >= NP && num >= MAXNUM -> j = 0; num = 0 };
			/* model bound: retire for good */
			d_step { choosing[i] = 0; fin[i] = 1 };
			goto gone
		od;
		/* L3 */ number[i] = num;
		/* L4 */ d_step { choosing[i] = 0; FIRST(j, i) };
		/* L5 */
		do
		:: j < NP && choosing[j] == 0 ->
			d_step { (number[j] == 0 || LESS(num, i, number[j], j)) -> NEXT(j, i) }
		:: atomic { j >= NP -> ENTER(i); j = 0 }; break
		od;
		/* L9 */ atomic { LEAVE(i); number[i] = 0; num = 0; pass++ }
	od
	} unless {
		d_step { dead[i] -> pass = 0; j = 0; num = 0; b = 0; v = 0; a = 0 };
		RESET(i)
	};
gone:
	skip
}

/* The memory side of O's store buffer: at any time, also after its
 * death. */
active proctype Drain()
{
	bit a;
	byte v;

end:	do
	:: d_step { sb?a,v -> LAND(a, v); a = 0; v = 0 }
	od
}

#if CRASH
/* a kill; the last one the budget allows ends the Fault process (no state
 * in which it lingers with nothing left to do) */
#define KILL(k) :: atomic { crashes > 0 && !dead[k] && !fin[k] -> crashes--; dead[k] = 1; \
			    if :: crashes == 0 -> break :: else -> skip fi }

active proctype Fault()
{
end:	do
	KILL(0)
	KILL(1)
#if REVOKERS > 1
	KILL(2)
#endif
	:: break                /* no more faults */
	od
}
#endif
