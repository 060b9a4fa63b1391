/* SPDX-License-Identifier: MIT */
/*
 * holders.c - locks of k holders under a crowd: PROCS processes of THREADS
 * threads each (so many more takers than CPUs) loop lock / check / unlock
 * on one lock of k holders for a fixed time.  main.c runs k = 1 and k > 1
 * of one algorithm in alternation, so that a lock of k holders is held to
 * what the mutex of the same run does: never slower, and its longest wait
 * not much longer.
 *
 * Every acquisition is timed (the lock call's start to its return): the
 * longest wait is a worst case, not a sample's.  Inside, the occupancy
 * check of the tests counts the holders (tests/common/rw_occupancy.h): a
 * run that saw more than k inside at once is a VIOLATION.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* A thread of a holders child, and what it reports to its process. */
struct taker {
	struct mech *m;
	struct control *c;
	uint64_t acquisitions;
	uint64_t wait_max_ns;
	int err;
	pthread_t thread;
};

static void *taker_run(void *arg)
{
	struct taker *t = arg;
	struct control *c = t->c;
	unsigned k = t->m->holders;

	/* the first lock call claims the thread's slot: before the start */
	if (t->m->ops->lock(t->m) == MECH_FAILED) {
		t->err = t->m->err;
		flag_inc(&c->ready);
		return NULL;
	}
	t->m->ops->unlock(t->m);
	flag_inc(&c->ready);
	flag_wait(&c->go, 1);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		int64_t t0 = now_ns();
		uint64_t waited;

		if (t->m->ops->lock(t->m) == MECH_FAILED) {
			t->err = t->m->err;
			break;
		}
		waited = (uint64_t)(now_ns() - t0);
		if (waited > t->wait_max_ns)
			t->wait_max_ns = waited;
		rw_occupancy_in(&c->rwocc, false, k);
		rw_occupancy_out(&c->rwocc, false);
		t->m->ops->unlock(t->m);
		t->acquisitions++;
	}
	return NULL;
}

/* One process: its threads, their sums into c->res[id].  The parent
 * waits for procs * threads arrivals in c->ready (one per thread). */
static void holders_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result r = { .acq_min = UINT64_MAX };
	struct taker t[BENCH_MAX_THREADS];
	unsigned n = 0;
	struct usage u0;

	u0 = usage_self();
	for (; n < c->threads; n++) {
		t[n] = (struct taker){ .m = m, .c = c };
		if (pthread_create(&t[n].thread, NULL, taker_run, &t[n])) {
			r.err = EAGAIN;
			break;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(t[i].thread, NULL);
		r.acquisitions += t[i].acquisitions;
		if (t[i].wait_max_ns > r.wait_max_ns)
			r.wait_max_ns = t[i].wait_max_ns;
		if (t[i].acquisitions < r.acq_min)
			r.acq_min = t[i].acquisitions;
		if (t[i].acquisitions > r.acq_max)
			r.acq_max = t[i].acquisitions;
		if (t[i].err)
			r.err = t[i].err;
	}
	usage_into(&r, &u0);
	m->ops->detach(m);
	c->res[id] = r;
}

/* The figures of a run from the processes' reports. */
static void holders_stats(struct result *r, const struct control *c, unsigned procs,
                          double seconds)
{
	uint64_t total = 0, cpu = 0, cs = 0, lo = UINT64_MAX, hi = 0, wmax = 0;

	for (unsigned i = 0; i < procs; i++) {
		const struct child_result *x = &c->res[i];

		total += x->acquisitions;
		cpu += x->cpu_ns;
		cs += x->vcsw + x->ivcsw;
		lo = x->acq_min < lo ? x->acq_min : lo;
		hi = x->acq_max > hi ? x->acq_max : hi;
		wmax = x->wait_max_ns > wmax ? x->wait_max_ns : wmax;
		if (x->err) {
			fprintf(stderr, "  %s: child %u: %s\n", r->mech->name, i,
			        bakery_strerror(x->err));
			r->status = ST_ERROR;
		}
	}
	r->acq_per_s = (double)total / seconds;
	r->cpu_ns_per_acq = total ? (double)cpu / (double)total : 0;
	r->vcsw_per_acq = total ? (double)cs / (double)total : 0;
	r->max_min = lo ? (double)hi / (double)lo : 1e300;
	r->wait_max_ns = (double)wmax;
	if (c->rwocc.violations) {
		fprintf(stderr, "  %s: MORE THAN %u HOLDERS: %llu violations\n", r->mech->name,
		        r->holders, (unsigned long long)c->rwocc.violations);
		r->status = ST_VIOLATION;
	}
}

void measure_holders(const struct options *o, struct control *c, struct result *r)
{
	pid_t pids[BENCH_MAX_PROCS];
	unsigned n, procs = r->procs;
	/* a slot per thread, and room for those still giving theirs back */
	unsigned slots = 2 * procs * r->threads;
	struct mech m;
	int64_t elapsed;

	control_reset(c);
	c->threads = r->threads;
	if (mech_new_holders(&m, r->mech, slots < 64 ? 64 : slots, r->holders)) {
		r->status = ST_ERROR;
		return;
	}
	n = run_children(holders_child, &m, c, pids, procs, r->threads, o->holders_s, &elapsed);
	if (n < procs || !reap(pids, n, BENCH_DRAIN_TIMEOUT_NS))
		r->status = ST_HANG;
	holders_stats(r, c, n, (double)elapsed / 1e9);
	mech_free(&m);
}
