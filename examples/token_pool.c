/* SPDX-License-Identifier: MIT */
/*
 * token_pool.c - workers share a pool of K tokens (K resources: think
 * licences, GPU slots, connections) through a bakery lock of K holders:
 * at most K workers hold a unit at once, in arrival order, and each
 * holder uses one of the K resources, each guarded by a mutex of its own.
 *
 *   token_pool REGION LOG-FILE K ROUNDS [STOP-AT]
 *
 * The worker takes a unit ROUNDS times, and each time takes a free
 * resource, uses it a little and gives both back.  It appends "+ PID" to
 * LOG-FILE once in and "- PID" before leaving, so that the log tells how
 * many were inside at once.  With STOP-AT N, its Nth turn stops holding a
 * unit and a resource, and waits to be killed.
 *
 * A worker that dies gives its unit back when its death is proven, and
 * the next worker in is told (EOWNERDEAD); the pool protects no data of its
 * own, so there is nothing to repair.  The resource the dead worker held
 * is found by the next worker that tries it, told too, and reset.
 */
#include <bakery.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOKENS 32

struct worker {
	bakery_lock_t *pool;               /* K holders */
	bakery_lock_t *resource[MAX_TOKENS];
	unsigned k;
	int log;                           /* LOG-FILE, O_APPEND */
	int told;                          /* times told a holder died */
};

/* One line in the log: a write of O_APPEND lands whole, after the others. */
static void log_line(struct worker *w, char what)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%c %d\n", what, (int)getpid());

	if (write(w->log, line, (size_t)n) != n)
		perror("token_pool: log");
}

/*
 * A free resource, held on return: its index, or an error.  With at most K
 * holders, at most K - 1 others hold a resource, so one is free; a try
 * may still fail while another worker tries the same one: look again.
 */
static int take_resource(struct worker *w)
{
	for (;; sched_yield()) {
		for (unsigned i = 0; i < w->k; i++) {
			int err = bakery_trylock(w->resource[i]);

			if (err == EOWNERDEAD) {   /* its last user died with it */
				printf("worker %d: resource %u, left by a dead worker, reset\n",
				       (int)getpid(), i);
				err = bakery_consistent(w->resource[i]);
			}
			if (err == 0)
				return (int)i;
			if (err != EBUSY)
				return err;
		}
	}
}

static int turn(struct worker *w, int stop)
{
	int err = bakery_lock(w->pool), r;

	if (err == EOWNERDEAD) {            /* a holder died: its unit is back */
		w->told++;
		err = bakery_consistent(w->pool);
	}
	if (err)
		return err;
	log_line(w, '+');
	if ((r = take_resource(w)) < 0) {
		log_line(w, '-');
		bakery_unlock(w->pool);
		return r;
	}
	if (stop) {
		printf("worker %d: stopped holding resource %d\n", (int)getpid(), r);
		fflush(stdout);
		for (;;)
			pause();
	}
	usleep(2000);                       /* use it */
	bakery_unlock(w->resource[r]);
	log_line(w, '-');
	return bakery_unlock(w->pool);
}

static int open_locks(bakery_t *b, struct worker *w)
{
	struct bakery_lock_config cfg = { .algo = BAKERY_ALGO_DEFAULT, .holders = w->k };
	char name[32];
	int err = bakery_lock_open_config(b, "tokens", &cfg, &w->pool);

	for (unsigned i = 0; i < w->k && !err; i++) {
		snprintf(name, sizeof(name), "token.%u", i);
		err = bakery_lock_open(b, name, BAKERY_ALGO_DEFAULT, &w->resource[i]);
	}
	return err;
}

static void close_locks(struct worker *w)
{
	bakery_lock_close(w->pool);
	for (unsigned i = 0; i < w->k; i++)
		bakery_lock_close(w->resource[i]);
}

int main(int argc, char **argv)
{
	struct worker w = { .k = argc > 3 ? (unsigned)atoi(argv[3]) : 0 };
	int err, rounds, stop_at, i;
	bakery_t *b;

	if (argc < 5 || w.k < 1 || w.k > MAX_TOKENS) {
		fprintf(stderr, "usage: token_pool REGION LOG-FILE K ROUNDS [STOP-AT] "
		        "(K from 1 to %d)\n", MAX_TOKENS);
		return 2;
	}
	rounds = atoi(argv[4]);
	stop_at = argc > 5 ? atoi(argv[5]) : 0;
	if ((w.log = open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0600)) < 0) {
		perror(argv[2]);
		return 1;
	}
	if ((err = bakery_open(argv[1], BAKERY_CREATE, NULL, &b)) || (err = open_locks(b, &w)))
		goto fail;
	for (err = 0, i = 0; i < rounds && !err; i++)
		err = turn(&w, i + 1 == stop_at);
	printf("worker %d: %d turns, told of a dead holder %d times\n", (int)getpid(),
	       i - (err != 0), w.told);
	close_locks(&w);
	bakery_close(b);
	if (!err)
		return 0;
fail:
	fprintf(stderr, "token_pool: %s\n", bakery_strerror(err));
	return 1;
}
