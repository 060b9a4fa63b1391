/* SPDX-License-Identifier: MIT */
/*
 * introspect.c - read-only views of a region for `bakery status` and users.
 * Everything read here comes from shared memory, so it is a snapshot that
 * may be stale by the time it is returned, and every value used as an index
 * is range-checked first.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bias.h"
#include "order.h"
#include "registry.h"

/* RC, unless the region was cut short before or while we read it: what we
 * read was then the guard's zero pages, not the region. */
static int snapshot_result(struct bakery *b, int rc)
{
	return region_lost(b) ? region_lost_error(b) : rc;
}

int bakery_region_info(bakery_t *b, struct bakery_region_info *out)
{
	struct stat st;

	if (!b || !out || b->closed)
		return EINVAL;
	memset(out, 0, sizeof(*out));
	out->version = BAKERY_LAYOUT_VERSION;
	out->slots = b->nslots;
	out->locks = b->nlocks;
	out->size = b->size;
	out->creator_pid = CMM_LOAD_SHARED(b->hdr->creator_pid);
	out->creator_uid = CMM_LOAD_SHARED(b->hdr->creator_uid);
	out->created_ns = CMM_LOAD_SHARED(b->hdr->created_ns);
	if (fstat(b->fd, &st) == 0)
		out->mode = st.st_mode & 07777;
	for (unsigned i = 0; i < b->nslots; i++)
		out->slots_used += CMM_LOAD_SHARED(b->slots[i].state) != SLOT_FREE;
	for (unsigned i = 0; i < b->nlocks; i++)
		out->locks_used += CMM_LOAD_SHARED(b->locks[i].state) == LOCK_READY;
	return snapshot_result(b, 0);
}

/* Alive, dead or unowned, without taking the token (no recovery here). */
static int token_alive(struct bakery *b, unsigned slot)
{
	switch (token_state(CMM_LOAD_SHARED(*slot_token_word(b, slot)))) {
	case TOKEN_OWNER_DIED:
		return 0;
	case TOKEN_HELD:
		return 1;
	default:
		return -1;
	}
}

static int slot_info(bakery_t *b, unsigned index, struct bakery_slot_info *out)
{
	struct bakery_shm_slot *s;
	uint32_t state;

	if (!b || !out || b->closed || index >= b->nslots)
		return EINVAL;
	s = &b->slots[index];
	memset(out, 0, sizeof(*out));
	out->index = index;
	state = CMM_LOAD_SHARED(s->state);
	out->state = state <= SLOT_RECOVERING ? (enum bakery_slot_state)state : BAKERY_SLOT_ACTIVE;
	out->alive = out->state == BAKERY_SLOT_FREE ? -1 : token_alive(b, index);
	out->pid = CMM_LOAD_SHARED(s->pid);
	out->tid = CMM_LOAD_SHARED(s->tid);
	out->start_time = CMM_LOAD_SHARED(s->start_time);
	out->lock = -1;
	for (unsigned l = 0; l < b->nlocks && out->state != BAKERY_SLOT_FREE; l++) {
		uint32_t stage = CMM_LOAD_SHARED(reg_of(b, l, index)->stage);
		if (stage <= BAKERY_PASS_CRITICAL && stage > out->pass) {
			out->pass = (enum bakery_pass_state)stage;
			out->lock = (int)l;
			out->shared = CMM_LOAD_SHARED(reg_of(b, l, index)->mode) == REG_SHARED;
		}
	}
	return snapshot_result(b, 0);
}

/* (reads /proc/PID/stat: cancellation off) */
int bakery_slot_info(bakery_t *b, unsigned index, struct bakery_slot_info *out)
{
	int old = cancel_off(), err = slot_info(b, index, out);

	cancel_restore(old);
	return err;
}

/* Has a holder of LOCK died inside, as the kernel proves it (its slot's
 * token marked owner-died), before anyone recovered it?  Not a reader:
 * its death changes nothing. */
static bool dead_inside(struct bakery *b, unsigned lock, unsigned slot)
{
	struct bakery_shm_reg *r = reg_of(b, lock, slot);

	return CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_CRITICAL &&
	       CMM_LOAD_SHARED(r->mode) != REG_SHARED &&
	       CMM_LOAD_SHARED(b->slots[slot].state) != SLOT_FREE && token_alive(b, slot) == 0;
}

/* The counters and the passages under way of lock INDEX, over every slot;
 * true if a holder died inside. */
static bool lock_info_slots(struct bakery *b, unsigned index, struct bakery_lock_info *out)
{
	bool dead = false;

	out->holder = -1;
	for (unsigned s = 0; s < b->nslots; s++) {
		struct bakery_shm_reg *r = reg_of(b, index, s);
		uint32_t stage = CMM_LOAD_SHARED(r->stage);

		out->acquisitions += CMM_LOAD_SHARED(r->acquisitions);
		out->aborts += CMM_LOAD_SHARED(r->aborts);
		out->participants += !!CMM_LOAD_SHARED(r->joined);
		if (stage == BAKERY_PASS_CRITICAL) {
			if (out->holder < 0)
				out->holder = (int)s;
			out->holding++;
			out->readers += CMM_LOAD_SHARED(r->mode) == REG_SHARED;
			dead = dead || dead_inside(b, index, s);
		} else if (stage == BAKERY_PASS_DOORWAY || stage == BAKERY_PASS_WAITING)
			out->waiters++;
	}
	return dead;
}

/* enum bakery_lock_state: the first that applies */
static enum bakery_lock_state lock_state(uint32_t flags, uint32_t gen, bool dead)
{
	if (flags & LOCK_NOT_RECOVERABLE)
		return BAKERY_LOCK_NOT_RECOVERABLE;
	if ((flags & LOCK_OWNER_DIED) || dead)
		return BAKERY_LOCK_OWNER_DIED;
	if (gen & 1)            /* an unlink under way (lockadmin.c) */
		return BAKERY_LOCK_REMOVING;
	return BAKERY_LOCK_OK;
}

/* A biased lock's word (algo/bias.h), as the caller's slot numbers it. */
static void lock_info_bias(struct bakery *b, struct bakery_shm_lock *e, struct bakery_lock_info *out)
{
	uint32_t bias = CMM_LOAD_SHARED(e->bias);

	out->bias_slot = -1;
	if (bias == BIAS_OFF)
		return;
	out->flags |= BAKERY_LOCK_BIASED;
	if (bias >= BIAS_SLOT0 && bias - BIAS_SLOT0 < b->nslots)
		out->bias_slot = (int)(bias - BIAS_SLOT0);
	out->bias_revocations = CMM_LOAD_SHARED(e->bias_revocations);
}

int bakery_lock_info(bakery_t *b, unsigned index, struct bakery_lock_info *out)
{
	struct bakery_shm_lock *e;
	uint32_t algo, flags;
	bool dead;

	if (!b || !out || b->closed || index >= b->nlocks)
		return EINVAL;
	e = &b->locks[index];
	if (CMM_LOAD_SHARED(e->state) != LOCK_READY)
		return snapshot_result(b, ENOENT);
	memset(out, 0, sizeof(*out));
	out->index = index;
	memcpy(out->name, e->name, BAKERY_LOCK_NAME_MAX);
	out->name[BAKERY_LOCK_NAME_MAX] = '\0';     /* the region's copy may be unterminated */
	algo = CMM_LOAD_SHARED(e->algo);
	out->algo = algo < BAKERY_ALGO_COUNT ? (enum bakery_algo)algo : BAKERY_ALGO_DEFAULT;
	flags = CMM_LOAD_SHARED(e->flags);
	out->owner_dead = !(flags & LOCK_OWNER_DIED) ? 0 : (flags & LOCK_UNREPAIRED)
	                  ? BAKERY_OWNER_DEAD_UNREPAIRED : BAKERY_OWNER_DEAD_DIED;
	out->not_recoverable = !!(flags & LOCK_NOT_RECOVERABLE);
	out->recoveries = CMM_LOAD_SHARED(e->recoveries);
	out->owner_deaths = CMM_LOAD_SHARED(e->owner_deaths);
	out->reader_deaths = CMM_LOAD_SHARED(e->reader_deaths);
	out->capacity = CMM_LOAD_SHARED(e->holders);
	if (out->capacity == 0 || out->capacity > BAKERY_MAX_HOLDERS)
		out->capacity = 1;      /* (a corrupted value is not repeated) */
	out->passes = CMM_LOAD_SHARED(e->passes);
	lock_info_bias(b, e, out);
	dead = lock_info_slots(b, index, out);
	out->state = lock_state(flags, CMM_LOAD_SHARED(e->gen), dead);
	return snapshot_result(b, 0);
}

int bakery_lock_index(bakery_lock_t *l, unsigned *index)
{
	if (!l || !l->b || !index)
		return EINVAL;
	/* its entry may hold another lock by now */
	if (lock_handle_stale(l))
		return lock_removed(l->b);
	*index = l->index;
	return 0;
}

/* ----------------------------------------------------------------- line -- */

struct in_line {
	unsigned slot;
	unsigned doorway;          /* 1: no ticket yet, behind every ticket */
	uint64_t key;
};

static int line_order(const void *pa, const void *pb)
{
	const struct in_line *a = pa, *b = pb;

	if (a->doorway != b->doorway)
		return a->doorway < b->doorway ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* The slots in LOCK's doorway or waiting room into LINE; how many. */
static unsigned line_gather(struct bakery *b, unsigned lock, struct in_line *line)
{
	struct ticket_line tl = ticket_line_of(b, lock);
	unsigned n = 0;

	for (unsigned s = 0; s < b->nslots; s++) {
		uint32_t stage = CMM_LOAD_SHARED(reg_of(b, lock, s)->stage);

		if (stage != BAKERY_PASS_DOORWAY && stage != BAKERY_PASS_WAITING)
			continue;
		line[n].slot = s;
		line[n].doorway = stage == BAKERY_PASS_DOORWAY;
		line[n].key = line[n].doorway ? 0 :
		              ticket_key(&tl, CMM_LOAD_SHARED(reg_of(b, lock, s)->number));
		n++;
	}
	return n;
}

int bakery_lock_queue(bakery_t *b, unsigned index, unsigned *slots, unsigned cap,
                      unsigned *count)
{
	struct in_line *line;
	unsigned n;

	if (!b || !count || (cap && !slots) || b->closed || index >= b->nlocks)
		return EINVAL;
	if (CMM_LOAD_SHARED(b->locks[index].state) != LOCK_READY)
		return snapshot_result(b, ENOENT);
	line = malloc(sizeof(*line) * b->nslots);
	if (!line)
		return ENOMEM;
	n = line_gather(b, index, line);
	qsort(line, n, sizeof(*line), line_order);
	for (unsigned i = 0; i < n && i < cap; i++)
		slots[i] = line[i].slot;
	*count = n;
	free(line);
	return snapshot_result(b, 0);
}
