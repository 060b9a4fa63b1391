/* SPDX-License-Identifier: MIT */
/*
 * revoke.c - the revocation of an idle owner's slot, both halves of its
 * handshake: the reclaimer's (a thread that waited for a slot takes the
 * slot of an owner that is alive but idle) and the settling of a
 * revocation that any other party finds under way.  The owner's own half,
 * its busy word and one load of the slot's generation at each lock call,
 * is registry.c's record_pin; the dead owner's recovery is registry.c's
 * too, passed down where a dead revoker leaves one due.
 *
 * Slots of idle owners are revoked under pressure (bakery__slot_reclaim_idle,
 * called by a thread that has waited for a slot).  A slot's generation is
 * even while settled and odd while a revocation is under way; the token
 * the slot names (struct bakery_shm_slot.token) changes only under an odd
 * generation.  The handshake is that of removing a lock (lockadmin.c) and
 * is modelled in tests/model/revoke.pml (on TSO, the reclaimer killed at
 * any step; its must-fail variants drop the re-check, the membarrier, the
 * settling of a dead reclaimer, or keep the busy marker in the slot):
 *
 *   owner (registry.c's record_pin, at a lock call that finds it holds no
 *   lock of the region, and before giving its slot back): busy word of ITS
 *   TOKEN := 1, compiler barrier, load the slot's generation: its own, go
 *   on (the slot stays its own while the word reads 1); odd, wait for the
 *   end (bakery__revocation_settle); another, the slot was revoked: give the
 *   old token back (a spare now) and claim a slot again.  The busy word
 *   lives with the token, not the slot, so that neither it nor its clearing
 *   ever lands on registers the slot's next owner uses.
 *
 *   reclaimer (bakery__slot_revoke), holding a spare token: names the spare
 *   as the slot's revoker, CAS generation g -> g + 1, membarrier, then reads
 *   the owner's busy word and its registers in every lock: anything in
 *   use, back to g; all idle, the slot names the spare and the generation
 *   moves to g + 2 (the commit): the slot is the reclaimer's.
 *
 * A reclaimer that dies leaves an odd generation and its token owner-died:
 * whoever finds it (the owner's next call, a recoverer, a reap, another
 * reclaimer) takes that token and undoes the revocation, or, if the slot
 * already names it, finishes it and recovers the slot as a dead owner's.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd.h"
#include "futex.h"
#include "recovery_ops.h"
#include "revoke.h"

/* ------------------------------------------------------------- identity -- */

static uint64_t proc_start_time(void)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	int fd = bakery__fd_open("/proc/self/stat", O_RDONLY, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		       &start);
	fclose(f);
	return start;
}

void bakery__slot_sign(struct bakery_shm_slot *s)
{
	s->pid = getpid();
	s->tid = (int32_t)syscall(SYS_gettid);
	s->start_time = proc_start_time();
}

/* ------------------------------------------------------------ settling -- */
/* Is token I held by a thread that has not died? */
static bool token_live(struct bakery *b, unsigned i)
{
	return token_held_live(CMM_LOAD_SHARED(*token_word(b, i)));
}

/*
 * An honest revocation lasts one membarrier and a scan of the registers:
 * milliseconds.  A revoker that takes longer is stopped, traced or starved
 * of CPU, in our PID namespace or another (its token's TID tells nothing
 * here): the owner's lock call waits for it as for a lock, until its
 * deadline; the owner's exit or bakery_close for REVOKE_WAIT_NS at most.
 * Only a revoker token proven forged (bakery__token_holder_missing) is
 * BAKERY_EBADREGION.  The revoker wakes nobody at its end: the owner looks
 * again after REVOKE_NAP_MIN_NS, then twice as long each time up to
 * REVOKE_NAP_MAX_NS.
 */
#define REVOKE_NAP_MIN_NS     100000L
#define REVOKE_NAP_MAX_NS   10000000L

/* One nap of a wait for SLOT's odd generation G to move, within DL. */
static void revocation_nap(struct bakery *b, unsigned slot, uint32_t g,
                           const struct deadline *dl, long *nap)
{
	struct futex_word w = futex_word(&b->slots[slot].gen, g);
	struct timespec until;
	clockid_t clock;

	deadline_cap(dl, *nap, &clock, &until);
	bakery__futex_sleep(&w, 1, clock, &until, NULL);
	if (*nap < REVOKE_NAP_MAX_NS)
		*nap *= 2;
}

void bakery__spare_put_back(struct bakery *b, unsigned tok, struct token_hold *h)
{
	CMM_STORE_SHARED(*token_busy_word(b, tok), 0);
	bakery__token_give(h);
}

/* SLOT's revocation to generation G + 1 was left by its revoker RV, whose
 * token is not held by a live thread: settle it, its token in hand
 * (RECOVER: the slot's recovery, if it had become RV's). */
static void revocation_finish_dead(struct bakery *b, unsigned slot, uint32_t g, unsigned rv,
                                   slot_recover_fn *recover)
{
	struct bakery_shm_slot *s = &b->slots[slot];
	struct token_hold h;
	int r = bakery__token_try(b, rv, &h);

	if (r != 0 && r != EOWNERDEAD)
		return;         /* someone else has it: look again */
	if (CMM_LOAD_SHARED(s->gen) == g && CMM_LOAD_SHARED(s->token) == rv) {
		/* committed but for the generation: the slot was the
		 * revoker's, and its owner is dead */
		uatomic_cmpxchg(&s->gen, g, g + 1);
		recover(b, slot);
		bakery__token_give(&h);
		return;
	}
	if (CMM_LOAD_SHARED(s->gen) == g)
		uatomic_cmpxchg(&s->gen, g, g - 1);     /* undone: the owner keeps it */
	if (r == EOWNERDEAD && CMM_LOAD_SHARED(s->token) == rv)
		bakery__token_abandon(&h);      /* the slot's now: its recovery is due */
	else
		bakery__spare_put_back(b, rv, &h);
}

int bakery__revocation_settle(struct bakery *b, unsigned slot, const struct deadline *dl,
                              slot_recover_fn *recover)
{
	struct bakery_shm_slot *s = &b->slots[slot];
	long nap = REVOKE_NAP_MIN_NS;
	uint32_t g;

	while (((g = CMM_LOAD_SHARED(s->gen)) & 1) && !region_lost(b)) {
		unsigned rv;
		int over;

		/* the odd generation before the revoker it names (load->load;
		 * the revoker stores its name before its cmpxchg) */
		cmm_smp_rmb();
		rv = CMM_LOAD_SHARED(s->revoker);
		if (rv >= 2u * b->nslots)
			uatomic_cmpxchg(&s->gen, g, g - 1);     /* corrupted: undone */
		else if (!token_live(b, rv))
			revocation_finish_dead(b, slot, g, rv, recover);
		else if (!dl)
			return EAGAIN;
		else if (bakery__token_holder_missing(b, rv))
			return BAKERY_EBADREGION;
		else if ((over = bakery__wait_over(dl)))
			return over;    /* EBUSY, ETIMEDOUT, ECANCELED, EINTR */
		else
			revocation_nap(b, slot, g, dl, &nap);
	}
	return 0;
}

/* ---------------------------------------------------------- reclaimer -- */

/* Does a slot name token I, as its token or as its revoker's? */
static bool token_named(struct bakery *b, unsigned i)
{
	for (unsigned s = 0; s < b->nslots; s++) {
		const struct bakery_shm_slot *sl = &b->slots[s];

		if (CMM_LOAD_SHARED(sl->token) == i ||
		    ((CMM_LOAD_SHARED(sl->gen) & 1) && CMM_LOAD_SHARED(sl->revoker) == i))
			return true;
	}
	return false;
}

/* The n spares come first (the likeliest to be unnamed). */
int bakery__spare_take(struct bakery *b, struct token_hold *h, unsigned *tok)
{
	unsigned n = 2u * b->nslots;

	for (unsigned k = 0; k < n; k++) {
		unsigned i = (k + b->nslots) % n;
		int r;

		if (token_live(b, i) || token_named(b, i))
			continue;
		r = bakery__token_try(b, i, h);
		if (r != 0 && r != EOWNERDEAD)
			continue;
		/* with it in hand nobody names it anew (naming a token takes
		 * it first); named meanwhile, it is not ours to use, and an
		 * owner-died mark on it is a slot's recovery still due */
		if (token_named(b, i)) {
			if (r == EOWNERDEAD)
				bakery__token_abandon(h);
			else
				bakery__token_give(h);
			continue;
		}
		*tok = i;
		CMM_STORE_SHARED(*token_busy_word(b, i), 0);
		return 0;
	}
	return BAKERY_ESLOTS;
}

/* Is the owner of SLOT, holding token TOK, idle: alive, not inside a lock
 * call, none of its registers in use? */
static bool slot_idle(struct bakery *b, unsigned slot, unsigned tok)
{
	if (!token_live(b, tok) || CMM_LOAD_SHARED(*token_busy_word(b, tok)))
		return false;
	/* the busy word before the registers (load->load; pairs with the
	 * write barrier in bakery__record_busy_end) */
	cmm_smp_rmb();
	return b->recovery->slot_idle(b, slot);
}

bool bakery__slots_idle_owned(struct bakery *b)
{
	for (unsigned s = 0; s < b->nslots; s++) {
		const struct bakery_shm_slot *sl = &b->slots[s];

		if (CMM_LOAD_SHARED(sl->state) != SLOT_ACTIVE || (CMM_LOAD_SHARED(sl->gen) & 1) ||
		    !slot_idle(b, s, slot_token_index(b, s)))
			return false;
	}
	return true;
}

/* The reclaimer's half of the handshake (at the top). */
int bakery__slot_revoke(struct bakery *b, unsigned slot, unsigned spare, uint32_t *gen)
{
	struct bakery_shm_slot *s = &b->slots[slot];
	uint32_t g = CMM_LOAD_SHARED(s->gen);
	unsigned tok = slot_token_index(b, slot);

	/* a first look, without the membarrier: an owner at work is left */
	if ((g & 1) || CMM_LOAD_SHARED(s->state) != SLOT_ACTIVE || !slot_idle(b, slot, tok))
		return EBUSY;
	CMM_STORE_SHARED(s->revoker, spare);
	/* our name before the odd generation that points to it (the
	 * cmpxchg is a full barrier) */
	if (uatomic_cmpxchg(&s->gen, g, g + 1) != g)
		return EBUSY;
	CRASH_POINT("revoke-odd");
	/* the odd generation before the owner's busy word and registers
	 * (store->load), here by cmm_smp_mb and, through the membarrier,
	 * against the owner's busy store and generation load (registry.c's
	 * record_pin) */
	cmm_smp_mb();
	if (bakery__barrier_everywhere()) {
		/* without it the owner's half is unsound: nothing is revoked */
		uatomic_set(&s->gen, g);
		return bakery__barrier_refused() ? ENOTSUP : EBUSY;
	}
	if (CMM_LOAD_SHARED(s->state) != SLOT_ACTIVE || slot_token_index(b, slot) != tok ||
	    !slot_idle(b, slot, tok)) {
		uatomic_set(&s->gen, g);        /* in use: put it back */
		return EBUSY;
	}
	CMM_STORE_SHARED(s->token, spare);
	CRASH_POINT("revoke-named");
	bakery__slot_sign(s);
	/* the new token's name before the generation that commits it
	 * (store->store: a full barrier) */
	*gen = g + 2;
	uatomic_set(&s->gen, *gen);
	return 0;
}
