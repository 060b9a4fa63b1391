/* SPDX-License-Identifier: MIT */
/*
 * revoke.pml -- taking the slot of an idle owner (reclaiming a slot under
 *               pressure) against the owner's next lock calls, on a machine
 *               with store buffers (TSO), with the reclaimer killed at any
 *               step.
 *
 * The design it checks (docs/design.md, "Idle slots"): the slot's
 * generation is even while settled and odd while a revocation is under way
 * (as a lock entry's generation during an unlink, unlink.pml); each
 * liveness token has a "busy" word of its own, which does not move with
 * the slot.
 *
 * Owner, at the start of a lock call that finds it holds no lock of the
 * region: stores busy := 1 in its TOKEN's word, then loads the slot's
 * generation with only a compiler barrier between them (on TSO the store
 * may still sit in its store buffer when the load reads memory).  Its own
 * generation: it goes on and may write its registers (the passage: stage
 * := 1, ..., stage := 0), then busy := 0 when it holds no lock again.
 * Odd: it waits until the generation is even and looks again.  Another
 * even value: the slot was taken from it; it clears its busy word (its
 * token's, not the slot's) and claims a slot again (not modelled).
 *
 * Reclaimer (a thread waiting for a slot; it holds a spare token, so its
 * death is visible): CAS the generation from even g to g + 1, membarrier
 * (every other thread runs a full barrier: here, the owner's store buffer
 * drains at some instant), then read the owner's busy word and registers:
 * anything busy, the generation goes back to g; all idle, it names its
 * spare token in the slot, then moves the generation to g + 2 (the
 * commit) and uses the registers as the slot's new owner.  A reclaimer
 * that dies leaves an odd generation: the next thread to take its token
 * (owner-died) undoes it, or finishes it if the token was committed
 * (Fixer).
 *
 * Checked (assertions): no store of the old owner reaches the slot's
 * registers once the slot is someone else's (at the moment the store
 * leaves the store buffer); the two are never inside the registers at
 * once; the new owner's stage is never changed under it.  Invalid end
 * states: nobody waits for ever on an odd generation.
 *
 * Must-fail variants:
 *   NO_RECHECK=1      the owner does not look at the generation after its
 *                     busy store: it writes registers the reclaimer took
 *   NO_MEMBARRIER=1   the reclaimer reads the busy word without the
 *                     membarrier: the owner's store is still buffered
 *   MARKER_IN_SLOT=1  the owner's "busy" is its stage in the slot's
 *                     registers (stored, then the generation checked,
 *                     then undone if revoked): the undo lands on the new
 *                     owner's register
 *   NO_SETTLE=1       nobody finishes or undoes a dead reclaimer's
 *                     revocation: the owner waits for ever
 */

#ifndef NO_RECHECK
#define NO_RECHECK 0
#endif
#ifndef NO_MEMBARRIER
#define NO_MEMBARRIER 0
#endif
#ifndef MARKER_IN_SLOT
#define MARKER_IN_SLOT 0
#endif
#ifndef NO_SETTLE
#define NO_SETTLE 0
#endif
#ifndef PASSAGES
#define PASSAGES 2
#endif
#ifndef CRASH
#define CRASH 1
#endif

/* addresses the owner stores to, through its store buffer */
#define A_BUSY  0       /* the busy word of the owner's token */
#define A_STAGE 1       /* the slot's registers */

/* memory */
byte gen;               /* the slot's generation: 0 the owner's, odd under way */
byte token;             /* the token the slot names: 0 the owner's, 1 the spare */
bit  busy;              /* the busy word of token 0 */
byte stage;             /* the slot's registers (one word stands for the line) */

/* the owner's store buffer: (address, value), oldest first */
chan sb = [4] of { byte, byte };

/* ghosts */
bit  o_in;              /* the owner is inside the registers */
bit  r_in;              /* the reclaimer, as the slot's new owner, is */
bit  r_dead;

active proctype Owner()
{
	byte pass = 0;
	byte g;

	do
	:: pass == PASSAGES -> break
	:: else ->
#if MARKER_IN_SLOT
		sb!A_STAGE,1;           /* the marker is the stage: a register */
#else
		sb!A_BUSY,1;            /* busy := 1, in the token's word */
#endif
#if !NO_RECHECK
recheck:
		g = gen;                /* compiler barrier only: may pass the store */
		if
		:: g == 0 -> skip       /* still ours */
		:: g % 2 == 1 ->
			(gen % 2 == 0); /* wait for the revocation to end */
			goto recheck
		:: else ->
			/* revoked: clear our marker and leave the slot */
#if MARKER_IN_SLOT
			sb!A_STAGE,0;   /* the undo: a store to the slot's line */
#else
			sb!A_BUSY,0;
#endif
			break
		fi;
#endif
		o_in = 1;
		assert(!r_in);
		sb!A_STAGE,1;           /* the passage's register stores */
		sb!A_STAGE,0;
		o_in = 0;
#if !MARKER_IN_SLOT
		sb!A_BUSY,0;            /* holds no lock of the region again */
#endif
		pass++
	od
}

/* The memory side of the owner's store buffer. */
active proctype Drain()
{
	byte a, v;

end:	do
	:: atomic {
		sb?a,v ->
		if
		:: a == A_BUSY -> busy = v
		:: a == A_STAGE ->
			/* a store of the old owner never lands on the
			 * registers of a slot that is someone else's */
			assert(gen % 2 == 1 || gen == 0);
			stage = v
		fi
	   }
	od
}

#if CRASH
#define MAYBE_DIE if :: goto dead :: skip fi
#else
#define MAYBE_DIE skip
#endif

/* Its own stores are followed by full barriers (SC here). */
active proctype Reclaimer()
{
	MAYBE_DIE;
	atomic { gen == 0 -> gen = 1 }                 /* CAS even -> odd */
	MAYBE_DIE;
#if !NO_MEMBARRIER
	(len(sb) == 0);                                 /* membarrier: the owner drains once */
#endif
	MAYBE_DIE;
#if MARKER_IN_SLOT
	if
	:: stage != 0 ->
#else
	if
	:: busy || stage != 0 ->
#endif
		MAYBE_DIE;
		gen = 0                                 /* busy: put it back */
		goto done
	:: else -> skip
	fi;
	token = 1;                                      /* the spare, named */
	MAYBE_DIE;
	gen = 2;                                        /* the commit */
	/* the slot's new owner: a passage of its own */
	r_in = 1;
	assert(!o_in);
	stage = 2;
	assert(stage == 2);                             /* nobody else wrote it */
	stage = 0;
	r_in = 0;
	goto done;
dead:
	r_dead = 1;
done:
	skip
}

/* Whoever next takes the dead reclaimer's token (owner-died): undo the
 * revocation, or finish it if the generation was committed. */
active proctype Fixer()
{
end:	r_dead;                 /* (or never: the reclaimer lived) */
#if NO_SETTLE
	skip
#else
	atomic {
		if
		:: gen == 1 -> token = 0; gen = 0       /* not committed: undone */
		:: else -> skip                         /* even: nothing left to do */
		fi
	}
#endif
}
