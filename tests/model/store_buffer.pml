/* SPDX-License-Identifier: MIT */
/*
 * store_buffer.pml -- why every doorway needs its two store->load barriers:
 *                     Lamport's Bakery on a machine with store buffers.
 *
 * Paper : L. Lamport, "A New Solution of Dijkstra's Concurrent Programming
 *         Problem", CACM 17(8), 1974.
 * Mirrors: lib/algo/lamport.c with the barriers of docs/algorithms.md.
 *
 * The other models take registers to be sequentially consistent, because
 * the C code puts a full barrier (store_mb) at every store->load point.
 * This one drops that assumption and models x86-64's memory (TSO): each
 * process's stores go into its own FIFO store buffer, and a separate
 * Drain process per slot moves the oldest one to memory at any time; a
 * process's loads of the others' registers read memory (a process never
 * loads its own registers here, so store forwarding does not arise).  A
 * barrier (store_mb) waits until the buffer is empty.
 *
 * The two barriers of every doorway:
 *   FENCE_START  after choosing[i] := 1, before reading the numbers (L1-L2)
 *   FENCE_END    after number[i] := num; choosing[i] := 0, before the
 *                waiting loop reads choosing[j] and number[j] (L3-L6)
 * Both on (default): mutual exclusion holds.  Either one off: pan finds two
 * processes in the critical section, which is what the barrier-less build
 * shows on real hardware (tests/stress/bakery-mutants).  The exit's barrier
 * is not modelled: it orders the release before the waiter-count load of
 * the wake-up protocol, which this model (no sleeping) does not have.
 *
 * Each process makes PASSAGES passages (numbers stay small); N = 2.  The
 * other three algorithms have the same two store->load points in their
 * doorways (docs/algorithms.md, barrier table).
 */

#ifndef FENCE_START
#define FENCE_START 1
#endif
#ifndef FENCE_END
#define FENCE_END 1
#endif
#ifndef PASSAGES
#define PASSAGES 2
#endif

#define CHOOSING 0
#define NUMBER   1

/* memory */
bit  choosing[2];
byte number[2];

/* each process's store buffer: (register, value), oldest first */
chan sb[2] = [3] of { bit, byte };

byte ncs;            /* ghost: processes in the critical section */

#define STORE(r, v)   sb[i]!r,v
#define STORE_MB()    (len(sb[i]) == 0)

/* (a,i) < (b,j) lexicographically */
#define LESS(a,i,b,j) ((a) < (b) || ((a) == (b) && (i) < (j)))

active [2] proctype P()
{
	byte i = _pid;          /* slot */
	byte j = 1 - _pid;      /* the other slot */
	byte num, pass;

	for (pass : 1 .. PASSAGES) {
		/* L1 */ STORE(CHOOSING, 1);
#if FENCE_START
		STORE_MB();
#endif
		/* L2: 1 + the other's number (ours is 0 between passages) */
		num = number[j] + 1;
		/* L3 */ STORE(NUMBER, num);
		/* L4 */ STORE(CHOOSING, 0);
#if FENCE_END
		STORE_MB();
#endif
		/* L6 */ (choosing[j] == 0);
		/* L7 */ (number[j] == 0 || LESS(num, i, number[j], j));
		/* critical section */
		assert(ncs == 0);
		ncs++;
		ncs--;
		/* L9 */ STORE(NUMBER, 0)
	}
}

/* The memory side of slot k's store buffer: at any time, the oldest store
 * lands. */
active [2] proctype Drain()
{
	byte k = _pid - 2;      /* the P's are pids 0 and 1 */
	bit r;
	byte v;

end:	do
	:: atomic {
		sb[k]?r,v ->
		if
		:: r == CHOOSING -> choosing[k] = v
		:: else -> number[k] = v
		fi
	   }
	od
}
