/* SPDX-License-Identifier: MIT */
/*
 * scene.h - the stage the Check crash tests play on: a fresh region with
 * one lock, the test's own handle for introspection (it never takes a slot:
 * it calls no lock function and no bakery_recover), a kill-tolerant
 * occupancy object, and up to SCENE_PARTS participant processes
 * (crashkit.h's crash_part) described in memory shared with them.
 */
#ifndef BAKERY_TEST_SCENE_H
#define BAKERY_TEST_SCENE_H

#include <check.h>

#include "crashkit.h"

#define SCENE_PARTS 12

struct scene_shared {
	struct occupancy occ;
	struct crash_part part[SCENE_PARTS];
};

struct scene {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	bakery_t *b;
	bakery_lock_t *l;
	struct scene_shared *sh;
	pid_t pid[SCENE_PARTS];
	int retry_eslots;          /* participants started now retry BAKERY_ESLOTS and EAGAIN */
};

/* A fresh region of SLOTS slots (0: default) and lock CRASH_LOCK with ALGO. */
void scene_open(struct scene *s, const char *tag, enum bakery_algo algo, unsigned slots);
void scene_close(struct scene *s);

/* Start participant K (serial K + 1) acquiring with bakery_lock, holding
 * until released if HOLD, dying at crash point CRASH_AT if not NULL. */
pid_t scene_start(struct scene *s, unsigned k, const char *crash_at, int hold);
/* The same with another acquiring MODE and TIMEOUT (seconds). */
pid_t scene_start_mode(struct scene *s, unsigned k, const char *crash_at, int hold,
                       enum crash_mode mode, double timeout);

/* Assertions on the participants. */
void scene_wait_holding(struct scene *s, unsigned k);
void scene_wait_waiting(struct scene *s, unsigned k);
void scene_release(struct scene *s, unsigned k);
/* Participant K ended with exit status WANT (CRASH_SIGKILLED: a crash point). */
void scene_expect_exit(struct scene *s, unsigned k, int want);

/* The slot info of participant K's slot (found by pid). */
struct bakery_slot_info scene_slot(struct scene *s, unsigned k);

/* No overlap was seen, and ENTRIES passages went through the occupancy
 * check with no lost update. */
void scene_expect_exclusion(struct scene *s, uint64_t entries);

/* A crash suite's main(): run S (each test in its own child), exit status. */
int scene_run(Suite *s);

/* loop tests run every algorithm: _i indexes crash_algos */
#define SCENE_ALGO(i) (crash_algos[(i)])

#endif
