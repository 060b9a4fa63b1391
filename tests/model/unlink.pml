/* SPDX-License-Identifier: MIT */
/*
 * unlink.pml -- removing a lock (bakery_lock_unlink) against acquirers that
 *               hold a handle on it, on a machine with store buffers (TSO),
 *               with the unlinker killed at any step.
 *
 * Mirrors: lib/lockadmin.c (entry_remove), lib/locktable.c (settling), and
 * lib/lock.c (entry_moved, lock_acquire_after_move).
 *
 * An acquirer stores its stage, then loads the entry's generation, with
 * only a compiler barrier between them: on TSO the stage may still sit in
 * its store buffer when the load reads memory.  The unlinker makes the
 * generation odd, issues a membarrier (every other thread runs a full
 * barrier: here, each acquirer's store buffer drains at some moment), then
 * reads every stage from memory: all idle, it frees the entry (the commit);
 * otherwise it puts the generation back.  An acquirer that sees the
 * generation moved clears its stage, waits until the generation is even
 * (the unlink ended, or a settler finished what a dead unlinker left), then
 * tries again if it is the old one, or gives up (BAKERY_EREMOVED).
 *
 * Checked: no acquirer is in a passage on the lock when the entry is freed,
 * and none starts one afterwards (assertions); nobody waits for ever on an
 * odd generation, whatever step the unlinker dies at (invalid end state).
 *
 * Must-fail variants:
 *   NO_RECHECK=1     the acquirer checks the generation before storing its
 *                    stage (not after): the unlinker frees a lock in use
 *   NO_MEMBARRIER=1  the unlinker reads the stages without the membarrier:
 *                    the acquirer's stage is still in its store buffer
 *   NO_SETTLE=1      nobody settles what a dead unlinker left: acquirers
 *                    wait for ever on the odd generation (a bricked entry)
 */

#ifndef NO_RECHECK
#define NO_RECHECK 0
#endif
#ifndef NO_MEMBARRIER
#define NO_MEMBARRIER 0
#endif
#ifndef PASSAGES
#define PASSAGES 2
#endif
#ifndef CRASH
#define CRASH 1
#endif
#ifndef NO_SETTLE
#define NO_SETTLE 0
#endif

#define NACQ 2

/* memory */
bit  stage[NACQ];      /* 1: in a passage (doorway, waiting, critical) */
byte gen;              /* the entry's generation; acquirers opened at 0 */
bit  entry_free;       /* the entry is FREE (the commit happened) */

/* each acquirer's store buffer: values for its own stage, oldest first */
chan sb[NACQ] = [2] of { bit };

/* ghosts */
bit  inpass[NACQ];     /* past the generation check, in a passage */
bit  unlinker_dead;

active [NACQ] proctype Acquirer()
{
	byte i = _pid;
	byte pass = 0;
	byte seen;

	do
	:: pass == PASSAGES -> break
	:: else ->
#if NO_RECHECK
		seen = gen;
		sb[i]!1;
#else
		sb[i]!1;                /* stage := DOORWAY */
		seen = gen;             /* compiler barrier only: may pass the store */
#endif
		if
		:: seen == 0 ->
			inpass[i] = 1;
			assert(!entry_free);    /* never a passage on a freed entry */
			inpass[i] = 0;
			sb[i]!0;                /* the passage's end: stage := IDLE */
			pass++
		:: else ->
			sb[i]!0;
			(gen % 2 == 0);         /* wait for the unlink to end (table token) */
			if
			:: gen == 0 -> skip     /* it gave up: try again */
			:: else -> break        /* BAKERY_EREMOVED */
			fi
		fi
	od
}

/* The memory side of acquirer k's store buffer. */
active [NACQ] proctype Drain()
{
	byte k = _pid - NACQ;
	bit v;

end:	do
	:: atomic { sb[k]?v -> stage[k] = v }
	od
}

/* The unlinker may die before any step (CRASH): the rest is left to the
 * settler.  Its own stores are followed by full barriers (SC here). */
#if CRASH
#define MAYBE_DIE if :: goto dead :: skip fi
#else
#define MAYBE_DIE skip
#endif

active proctype Unlinker()
{
	MAYBE_DIE;
	gen = 1;                                        /* odd: under way */
	MAYBE_DIE;
#if !NO_MEMBARRIER
	(len(sb[0]) == 0);                              /* membarrier: each */
	(len(sb[1]) == 0);                              /* acquirer drains once */
#endif
	if
	:: stage[0] || stage[1] ->
		MAYBE_DIE;
		gen = 0                                 /* EBUSY: put it back */
	:: else ->
		MAYBE_DIE;
		assert(!inpass[0] && !inpass[1]);       /* nobody in a passage */
		entry_free = 1;                         /* the commit */
		MAYBE_DIE;
		gen = 2                                 /* the next even value */
	fi;
	goto done;
dead:
	unlinker_dead = 1;
done:
	skip
}

/* The next taker of the table's token after the unlinker died. */
active proctype Settler()
{
end:	unlinker_dead;          /* (or never: the unlinker lived) */
#if NO_SETTLE
	skip;
#else
	if
	:: gen % 2 == 1 && !entry_free -> gen = 0  /* undone: the lock stays */
	:: gen % 2 == 1 && entry_free -> gen = 2   /* committed: finish */
	:: else -> skip
	fi
#endif

}
