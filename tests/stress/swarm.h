/* SPDX-License-Identifier: MIT */
/*
 * swarm.h - run a group of bakery-hammer processes against one lock and
 * collect what they report (used by the stress and mutant drivers).
 *
 * A swarm owns a fresh region named after the driver's pid, its occupancy
 * object, and up to SWARM_MAX hammers, each exec'd separately with its
 * stdout on a pipe.  Every hammer dies with the driver (PR_SET_PDEATHSIG)
 * and is killed when the swarm's timeout passes, so nothing outlives a run.
 */
#ifndef BAKERY_TEST_SWARM_H
#define BAKERY_TEST_SWARM_H

#include <stdbool.h>
#include <sys/types.h>

#include "bakery.h"
#include "../common/occupancy.h"

#define SWARM_MAX 16

struct swarm {
	char region[96];
	bakery_t *b;
	struct occupancy *occ;
	unsigned n;                     /* hammers spawned */
	pid_t pid[SWARM_MAX];
	int out[SWARM_MAX];             /* read end of each hammer's stdout */
	int status[SWARM_MAX];          /* waitpid status */
	unsigned long acquired[SWARM_MAX]; /* as the hammer reported it */
	bool reported[SWARM_MAX];       /* printed a well-formed result line */
	bool timed_out;                 /* killed at the deadline */
	bool stopped;                   /* killed because stop() said so */
	double seconds;                 /* all at the start line -> all exited */
};

/* Where the hammer programs are: from ARGV0's directory, or
 * $top_builddir/tests/stress when make check sets it. */
void swarm_init(const char *argv0);
/* The path of hammer program NAME, written to BUF. */
const char *swarm_prog(const char *name, char *buf, size_t size);

/* A fresh region TAG (made unique with the pid) with SLOTS slots (0:
 * default), and its zeroed occupancy object.  0 or an error number. */
int swarm_open(struct swarm *s, const char *tag, unsigned slots);
/* Spawn one hammer: PROG REGION LOCK ALGO ITERATIONS MODE [OPTS...] where
 * OPTS is a NULL-terminated list.  0 or -1. */
int swarm_spawn(struct swarm *s, const char *prog, const char *lock, const char *algo,
                unsigned long iterations, const char *mode, const char *const *opts);
/*
 * Wait for every hammer, at most TIMEOUT_S seconds, polling STOP (may be
 * NULL) every millisecond: when it returns true the hammers are killed.
 * Collects exit statuses and result lines.
 */
void swarm_wait(struct swarm *s, double timeout_s, bool (*stop)(struct swarm *s));
/* Did hammer I exit 0 with a result line?  Prints why not. */
bool swarm_hammer_ok(const struct swarm *s, unsigned i);
/* Unmap and unlink the region and its occupancy object. */
void swarm_close(struct swarm *s);

double swarm_now(void);

#endif
