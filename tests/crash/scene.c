/* SPDX-License-Identifier: MIT */
/*
 * scene.c - the stage of the Check crash tests (see scene.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu/system.h>

#include "scene.h"

/* Long enough for a loaded two-core machine, short enough for make check. */
#define SCENE_WAIT 10.0

void scene_open(struct scene *s, const char *tag, enum bakery_algo algo, unsigned slots)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->algo = algo;
	tk_name(s->region, TK_NAME_SIZE, tag);
	rc = crash_create(s->region, slots, &s->b);
	ck_assert_msg(rc == 0, "creating %s: %s", s->region, bakery_strerror(rc));
	rc = bakery_lock_open(s->b, CRASH_LOCK, algo, &s->l);
	ck_assert_msg(rc == 0, "lock (%s): %s", bakery_algo_name(algo), bakery_strerror(rc));
	s->sh = tk_shared(sizeof(*s->sh));
}

void scene_close(struct scene *s)
{
	ck_assert_int_eq(bakery_lock_close(s->l), 0);
	ck_assert_int_eq(bakery_close(s->b), 0);
	bakery_unlink(s->region);
	munmap(s->sh, sizeof(*s->sh));
}

pid_t scene_start_mode(struct scene *s, unsigned k, const char *crash_at, int hold,
                       enum crash_mode mode, double timeout)
{
	struct crash_part *p = &s->sh->part[k];

	ck_assert(k < SCENE_PARTS);
	memset(p, 0, sizeof(*p));
	snprintf(p->region, sizeof(p->region), "%s", s->region);
	p->algo = s->algo;
	p->mode = mode;
	p->timeout = timeout;
	p->hold = hold;
	p->retry_eslots = s->retry_eslots;
	p->serial = k + 1;
	p->occ = &s->sh->occ;
	s->pid[k] = crash_fork(crash_part_run, p, crash_at);
	ck_assert_msg(s->pid[k] > 0, "fork");
	return s->pid[k];
}

pid_t scene_start(struct scene *s, unsigned k, const char *crash_at, int hold)
{
	return scene_start_mode(s, k, crash_at, hold, CRASH_MODE_LOCK, 0);
}

void scene_wait_holding(struct scene *s, unsigned k)
{
	ck_assert_msg(tk_wait_flag(&s->sh->part[k].holding, 1, SCENE_WAIT),
	              "%s: participant %u never got the lock", bakery_algo_name(s->algo), k);
}

void scene_wait_waiting(struct scene *s, unsigned k)
{
	ck_assert_msg(crash_wait_pass(s->b, s->pid[k], BAKERY_PASS_WAITING, SCENE_WAIT),
	              "%s: participant %u never queued", bakery_algo_name(s->algo), k);
}

void scene_release(struct scene *s, unsigned k)
{
	CMM_STORE_SHARED(s->sh->part[k].release, 1);
}

void scene_expect_exit(struct scene *s, unsigned k, int want)
{
	int st = tk_reap(s->pid[k], SCENE_WAIT);

	ck_assert_msg(st == want, "%s: participant %u ended with %d, expected %d (rc %s)",
	              bakery_algo_name(s->algo), k, st, want,
	              bakery_strerror(s->sh->part[k].rc));
}

struct bakery_slot_info scene_slot(struct scene *s, unsigned k)
{
	struct bakery_slot_info si;
	int slot = crash_slot_of(s->b, s->pid[k]);

	ck_assert_msg(slot >= 0, "%s: participant %u has no slot", bakery_algo_name(s->algo), k);
	ck_assert_int_eq(bakery_slot_info(s->b, (unsigned)slot, &si), 0);
	return si;
}

void scene_expect_exclusion(struct scene *s, uint64_t entries)
{
	struct occupancy *o = &s->sh->occ;

	ck_assert_msg(o->violations == 0, "%s: %llu overlaps in the critical section",
	              bakery_algo_name(s->algo), (unsigned long long)o->violations);
	ck_assert_msg(o->entries == entries && o->counter == entries,
	              "%s: %llu entries, counter %llu, expected %llu",
	              bakery_algo_name(s->algo), (unsigned long long)o->entries,
	              (unsigned long long)o->counter, (unsigned long long)entries);
}

int scene_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
