/* SPDX-License-Identifier: MIT */
/*
 * hostile.h - helpers of the hostile-participant and misuse tests, on top
 * of the test kit (tests/common/tk.h: names, children, gates, clocks): a
 * "raw" view of a region that writes its tables directly (as a hostile or
 * buggy participant would, with no library in between), and a child's
 * survival of a misuse.
 *
 * Children forked by a test never return into Check: they report through
 * their exit status and leave with _exit().
 */
#ifndef BAKERY_TEST_HOSTILE_H
#define BAKERY_TEST_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "shm_layout.h"
#include "handle.h"
#include "../common/tk.h"

/* ------------------------------------------------------------- regions -- */

/* A fresh region (CREATE|EXCL; 0 = default capacity); aborts the test on
 * failure.  NAME gets TK_NAME_SIZE bytes (tk_name). */
bakery_t *h_region(char *name, const char *tag, unsigned slots, unsigned locks);
bakery_lock_t *h_lock(bakery_t *b, const char *lock, enum bakery_algo algo);
unsigned h_lock_index(bakery_lock_t *l);

/* --------------------------------------------------------- the raw view -- */

/* The object mapped behind the library's back, its tables located from the
 * header (of a region the library made, so the header is sound). */
struct raw {
	int fd;
	size_t size;
	unsigned char *base;
	struct bakery_shm_header *hdr;
	struct bakery_shm_slot *slots;
	struct bakery_shm_lock *locks;
	uint64_t *active;
	struct bakery_shm_reg *regs;
	unsigned nslots, nlocks, active_words;
	uint64_t tokens_off;
	uint32_t page_size;
};

void raw_map(struct raw *r, const char *name);
void raw_unmap(struct raw *r);
struct bakery_shm_reg *raw_reg(struct raw *r, unsigned lock, unsigned slot);
/* Token word I (slot I's first, or the lock table's at I = 2 nslots). */
uint32_t *raw_token(struct raw *r, unsigned i);

/* ----------------------------------------------------------- processes -- */

/* Run FN(ARG) in a child.  0 if it returned 0 within TIMEOUT seconds;
 * otherwise prints WHAT and how the child ended (a signal: a crash; killed
 * at the time limit: a hang; another status: a wrong answer) and returns 1. */
int h_survives(const char *what, int (*fn)(void *), void *arg, double timeout);
#ifdef CHECK_H
/* main() of a Check suite: runs S between tk_run_begin() and tk_run_end();
 * the exit status. */
static inline int h_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	tk_run_begin();
	srunner_run_all(sr, CK_NORMAL);
	tk_run_end();
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
#endif

#endif
