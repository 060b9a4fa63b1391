/* SPDX-License-Identifier: MIT */
/*
 * measure.c - the measurements of bakery-bench.  Every run uses a fresh
 * instance of the mechanism and fresh child processes, so that no run
 * inherits the state (slots, dead owners, cache placement) of another.
 *
 *   uncontended  one process, lock+unlock in a loop, best of several runs
 *   contended    N processes loop lock / tiny critical section / unlock for a
 *                fixed time: throughput, fairness, CPU per acquisition and
 *                sampled wait times; the critical section checks occupancy
 *   blocked      a waiter blocked behind a holder for a while: its CPU time
 *   recovery     the holder is SIGKILLed: how soon a blocked waiter gets the
 *                lock, and how long the lock call of a later arriver takes
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <urcu/arch.h>

#include "bench.h"

#define ASLEEP_NS         (20 * INT64_C(1000000))    /* a waiter is in the kernel by then */
#define WARMUP_PASSES     1000
#define UNC_BATCH         256
/* Work outside the lock in the contended-work test: 100 ns - 1 us, the
 * range where a holder's passage and the others' outside work overlap. */
#define WORK_LO_NS        100
#define WORK_HI_NS        1000

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Lock and unlock N times; 0 or the error of a failed lock. */
static int passes(struct mech *m, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (m->ops->lock(m) == MECH_FAILED)
			return m->err;
		m->ops->unlock(m);
	}
	return 0;
}

/* Attach and take a few passes (a libbakery child claims its slot here). */
static int child_start(struct mech *m, unsigned warmup)
{
	int err = m->ops->attach(m);

	return err ? err : passes(m, warmup);
}

static void result_error(struct result *r, const struct control *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (c->res[i].err) {
			fprintf(stderr, "  %s: child %u: %s\n", r->mech->name, i,
			        r->mech->is_bakery ? bakery_strerror(c->res[i].err)
			                           : strerror(c->res[i].err));
			r->status = ST_ERROR;
		}
}

/* ---------------------------------------------------------- uncontended -- */

/* One timed run of lock+unlock in batches, into R. */
static void uncontended_run(struct mech *m, struct control *c, struct child_result *r)
{
	int64_t t0 = now_ns(), t = 0;
	uint64_t n = 0;

	while (!r->err && t < c->run_ns) {
		r->err = passes(m, UNC_BATCH);
		n += UNC_BATCH;
		t = now_ns() - t0;
	}
	r->value = n ? (double)t / (double)n : 0;
}

/* Warm up, then the timed run. */
static void uncontended_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];

	r->err = child_start(m, WARMUP_PASSES * 10);
	uncontended_run(m, c, r);
	m->ops->detach(m);
}

/* The sleeper of an "after" round: once the measured child holds the
 * lock, take it (it sleeps in it: a libbakery lock is marked, exitfence.h)
 * and go. */
static void sleeper_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];

	if ((r->err = m->ops->attach(m))) {
		flag_inc(&c->go);       /* the measured child goes on; the run is an ERROR */
		return;
	}
	flag_wait(&c->ready, 1);
	if (m->ops->lock(m) == MECH_FAILED)
		r->err = m->err;
	else
		m->ops->unlock(m);
	flag_inc(&c->go);
	m->ops->detach(m);
}

/* The measured child of an "after" round: hold the lock while the sleeper
 * comes to sleep in it, then warm up past the passages after which the
 * lock's mark wears off (AFTER_PASSES), and the timed run. */
#define AFTER_HOLD_NS (20 * INT64_C(1000000))
static void unc_after_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];

	if ((r->err = child_start(m, 1)) || m->ops->lock(m) == MECH_FAILED) {
		r->err = r->err ? r->err : m->err;
		flag_inc(&c->ready);
		m->ops->detach(m);
		return;
	}
	flag_inc(&c->ready);
	sleep_ns(AFTER_HOLD_NS);
	m->ops->unlock(m);
	flag_wait(&c->go, 1);
	r->err = passes(m, AFTER_PASSES + WARMUP_PASSES * 10);
	uncontended_run(m, c, r);
	m->ops->detach(m);
}

/*
 * One round: one run in a fresh process, kept if it is the best so far.
 * The caller runs the rounds over all mechanisms in turn, so that a burst of
 * load on a shared machine hits one round of each rather than every run of
 * one mechanism; the best run is the one least disturbed.
 */
void measure_uncontended(const struct options *o, struct control *c,
                         const struct mech_ops *ops, unsigned slots, struct results *rs,
                         bool after)
{
	enum test test = after ? T_UNC_AFTER : T_UNCONTENDED;
	struct result *r = results_get(rs, test, ops->name, slots, 1);
	struct mech m;
	pid_t pid[2];
	unsigned n = 1;

	if (!r) {
		r = results_add(rs, test, ops, slots, 1);
		r->ns_per_op = INFINITY;
	}
	control_reset(c);
	c->run_ns = (int64_t)(o->unc_run_s * 1e9);
	if (mech_new(&m, ops, slots)) {
		r->status = ST_ERROR;
		return;
	}
	pid[0] = spawn(after ? unc_after_child : uncontended_child, &m, c, 0);
	if (after && pid[0] > 0)
		pid[n++] = spawn(sleeper_child, &m, c, 1);
	if (pid[0] < 0 || pid[n - 1] < 0 ||
	    !reap(pid, n, BENCH_SETUP_TIMEOUT_NS + 4 * c->run_ns))
		r->status = ST_HANG;
	result_error(r, c, n);
	if (r->status == ST_OK && c->res[0].value < r->ns_per_op)
		r->ns_per_op = c->res[0].value;
	r->trials++;
	mech_free(&m);
}

/* ------------------------------------------------------------ contended -- */

/* Keep a uniform sample of the timed waits (reservoir sampling). */
static void sample_keep(struct child_result *r, uint64_t *buf, uint64_t v, uint64_t *rng)
{
	r->sampled++;
	if (v > r->wait_max_ns)
		r->wait_max_ns = v;
	if (r->kept < BENCH_SAMPLE_CAP) {
		buf[r->kept++] = v;
	} else {
		uint64_t k = xorshift(rng) % r->sampled;
		if (k < BENCH_SAMPLE_CAP)
			buf[k] = v;
	}
}

/* Busy work outside the lock, uniform in [work_lo_ns, work_hi_ns]: what a
 * process does between two critical sections. */
static void work_outside(const struct control *c, uint64_t *rng)
{
	int64_t span = c->work_hi_ns - c->work_lo_ns + 1;
	int64_t until = now_ns() + c->work_lo_ns + (int64_t)(xorshift(rng) % (uint64_t)span);

	while (now_ns() < until)
		caa_cpu_relax();
}

/* The measured loop; returns 0 or the error of a failed lock. */
static int contend_loop(struct mech *m, struct control *c, unsigned id,
                        struct child_result *r)
{
	int32_t me = (int32_t)getpid();
	uint64_t rng = (uint64_t)me * 0x9e3779b97f4a7c15u | 1;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		bool timed = (xorshift(&rng) & BENCH_SAMPLE_MASK) == 0;
		int64_t t0 = timed ? now_ns() : 0;
		int rc = m->ops->lock(m);

		if (rc == MECH_FAILED)
			return m->err;
		if (timed)
			sample_keep(r, c->samples[id], (uint64_t)(now_ns() - t0), &rng);
		occupancy_visit(&c->occ, me);
		m->ops->unlock(m);
		r->acquisitions++;
		r->owner_died += rc == MECH_OWNER_DIED;
		if (c->work_hi_ns)
			work_outside(c, &rng);
	}
	return 0;
}

static void contend_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result r = { 0 };
	struct usage u0;

	r.err = child_start(m, 1);
	flag_inc(&c->ready);
	if (!r.err) {
		flag_wait(&c->go, 1);
		u0 = usage_self();
		r.err = contend_loop(m, c, id, &r);
		usage_into(&r, &u0);
		m->ops->detach(m);
	}
	c->res[id] = r;
}

static void contended_stats(struct result *r, const struct control *c, unsigned procs,
                            double seconds)
{
	uint64_t acq[BENCH_MAX_PROCS], total = 0, cpu = 0, vcsw = 0, ivcsw = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	double wmax = 0;

	for (unsigned i = 0; i < procs; i++) {
		const struct child_result *x = &c->res[i];

		acq[i] = x->acquisitions;
		total += acq[i];
		cpu += x->cpu_ns;
		vcsw += x->vcsw;
		ivcsw += x->ivcsw;
		lo = acq[i] < lo ? acq[i] : lo;
		hi = acq[i] > hi ? acq[i] : hi;
		if ((double)x->wait_max_ns > wmax)
			wmax = (double)x->wait_max_ns;
	}
	r->acq_per_s = (double)total / seconds;
	r->jain = jain_index(acq, procs);
	r->max_min = lo ? (double)hi / (double)lo : 1e300;
	r->cpu_ns_per_acq = total ? (double)cpu / (double)total : 0;
	r->vcsw_per_acq = total ? (double)vcsw / (double)total : 0;
	r->ivcsw_per_acq = total ? (double)ivcsw / (double)total : 0;
	r->wait_max_ns = wmax;
	r->handoff_ratio = total ? (double)c->occ.handoffs / (double)total : 0;
	wait_percentiles(c, procs, &r->wait_p50_ns, &r->wait_p99_ns);
	if (c->occ.violations || c->occ.counter != total) {
		fprintf(stderr, "  %s: MUTUAL EXCLUSION VIOLATED: %llu overlaps, "
		        "counter %llu for %llu acquisitions\n", r->mech->name,
		        (unsigned long long)c->occ.violations,
		        (unsigned long long)c->occ.counter, (unsigned long long)total);
		r->status = ST_VIOLATION;
	}
}

void measure_contended(const struct options *o, struct control *c, struct result *r)
{
	pid_t pids[BENCH_MAX_PROCS];
	unsigned n, procs = r->procs;
	struct mech m;
	int64_t elapsed;

	control_reset(c);
	if (r->test == T_CONTENDED_WORK) {
		c->work_lo_ns = WORK_LO_NS;
		c->work_hi_ns = WORK_HI_NS;
	}
	if (mech_new(&m, r->mech, r->slots)) {
		r->status = ST_ERROR;
		return;
	}
	n = run_children(contend_child, &m, c, pids, procs, 1, o->duration_s, &elapsed);
	if (n < procs || !reap(pids, n, BENCH_DRAIN_TIMEOUT_NS))
		r->status = ST_HANG;
	result_error(r, c, n);
	contended_stats(r, c, n, (double)elapsed / 1e9);
	mech_free(&m);
}

/* --------------------------------------------------- hand-over floor -- */

/* Child ID passes the turn when the word's parity is its own: one side
 * makes it odd, the other even, each waking the other and sleeping until
 * its turn comes back.  No polling: every pass is a wake-up and a switch. */
static void pingpong_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];

	(void)m;
	flag_inc(&c->ready);
	flag_wait(&c->go, 1);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		uint32_t v = __atomic_load_n(&c->ping, __ATOMIC_ACQUIRE);

		if ((v & 1) == id) {
			flag_set(&c->ping, v + 1);
			r->acquisitions++;
		} else {
			flag_wait_change(&c->ping, v);
		}
	}
	/* the other side may sleep on the word: end its wait */
	flag_inc(&c->ping);
}

void measure_handover(const struct options *o, struct control *c, struct result *r)
{
	pid_t pids[2];
	unsigned n;
	int64_t elapsed;
	uint64_t passes;

	control_reset(c);
	n = run_children(pingpong_child, NULL, c, pids, 2, 1, o->duration_s, &elapsed);
	flag_inc(&c->ping);
	if (n < 2 || !reap(pids, n, BENCH_DRAIN_TIMEOUT_NS))
		r->status = ST_HANG;
	passes = c->res[0].acquisitions + c->res[1].acquisitions;
	r->latency_ns = passes ? (double)elapsed / (double)passes : NAN;
	r->acq_per_s = (double)passes / ((double)elapsed / 1e9);
	r->trials++;
}

/* ------------------------------------------- blocked waiter and recovery -- */

/* Child 0: takes the lock once the waiter is ready, holds it until told to
 * release (or is killed). */
static void holder_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];
	int rc;

	r->err = m->ops->attach(m);
	flag_wait(&c->phase[PH_WAITER_READY], 1);
	rc = r->err ? MECH_ACQUIRED : m->ops->lock(m);
	if (rc == MECH_FAILED)
		r->err = m->err;
	flag_set(&c->phase[PH_HELD], 1);
	if (r->err)
		return;
	flag_wait(&c->phase[PH_RELEASE], 1);
	r->stamp_ns = now_ns();
	m->ops->unlock(m);
	m->ops->detach(m);
}

/* Child 1: calls lock while the holder holds it; notes its CPU time and
 * the moment it acquired. */
static void waiter_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];
	struct usage u0;
	int rc;

	r->err = child_start(m, WARMUP_PASSES);
	flag_set(&c->phase[PH_WAITER_READY], 1);
	if (r->err)
		return;
	flag_wait(&c->phase[PH_HELD], 1);
	flag_set(&c->phase[PH_WAITING], 1);
	u0 = usage_self();
	rc = m->ops->lock(m);
	r->stamp_ns = now_ns();
	r->cpu_ns = usage_self().cpu_ns - u0.cpu_ns;
	if (rc == MECH_FAILED) {
		r->err = m->err;
		return;
	}
	r->owner_died = rc == MECH_OWNER_DIED;
	m->ops->unlock(m);
	m->ops->detach(m);
}

/* Child 1: arrives after the holder died; times its own lock call. */
static void late_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];
	int64_t t0;
	int rc;

	r->err = child_start(m, WARMUP_PASSES);
	flag_set(&c->phase[PH_WAITER_READY], 1);
	if (r->err)
		return;
	flag_wait(&c->phase[PH_GO], 1);
	t0 = now_ns();
	rc = m->ops->lock(m);
	r->value = (double)(now_ns() - t0);
	if (rc == MECH_FAILED) {
		r->err = m->err;
		return;
	}
	r->owner_died = rc == MECH_OWNER_DIED;
	m->ops->unlock(m);
	m->ops->detach(m);
}

/* Child 2 of the stopped-waiter scenario: warmed up before the others
 * start, calls lock when told to, behind the stopped waiter. */
static void behind_child(struct mech *m, struct control *c, unsigned id)
{
	struct child_result *r = &c->res[id];
	int rc;

	r->err = child_start(m, WARMUP_PASSES);
	flag_inc(&c->ready);
	if (r->err)
		return;
	flag_wait(&c->phase[PH_GO], 1);
	rc = m->ops->lock(m);
	r->stamp_ns = now_ns();
	flag_set(&c->phase[PH_ACQUIRED], 1);
	if (rc == MECH_FAILED) {
		r->err = m->err;
		return;
	}
	m->ops->unlock(m);
	m->ops->detach(m);
}

/* End whatever children of PIDS were started (-1: not started). */
static void reap_started(pid_t *pids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (pids[i] > 0)
			reap(&pids[i], 1, 0);
}

/* Start holder and WAITER; false if the holder did not get the lock. */
static bool pair_start(struct mech *m, struct control *c, child_fn waiter, pid_t pids[2])
{
	pids[0] = spawn(holder_child, m, c, 0);
	pids[1] = spawn(waiter, m, c, 1);
	if (pids[0] < 0 || pids[1] < 0)
		return false;
	return flag_wait_for(&c->phase[PH_HELD], 1, BENCH_SETUP_TIMEOUT_NS) && !c->res[0].err;
}

void measure_blocked(const struct options *o, struct control *c,
                     const struct mech_ops *ops, unsigned slots, struct results *rs)
{
	struct result *r = results_add(rs, T_BLOCKED, ops, slots, 2);
	struct mech m;
	pid_t pids[2];

	control_reset(c);
	if (mech_new(&m, ops, slots)) {
		r->status = ST_ERROR;
		return;
	}
	if (pair_start(&m, c, waiter_child, pids) &&
	    flag_wait_for(&c->phase[PH_WAITING], 1, BENCH_SETUP_TIMEOUT_NS)) {
		sleep_ns((int64_t)(o->blocked_s * 1e9));
		flag_set(&c->phase[PH_RELEASE], 1);
		if (!reap(pids, 2, BENCH_SETUP_TIMEOUT_NS))
			r->status = ST_HANG;
	} else {
		reap_started(pids, 2);
		r->status = ST_ERROR;
	}
	result_error(r, c, 2);
	r->cpu_ms_per_s = (double)c->res[1].cpu_ns / 1e6 / o->blocked_s;
	mech_free(&m);
}

/*
 * One trial of TEST on a fresh lock: the holder releases (T_WAKE) or is
 * SIGKILLed while the waiter sleeps on the lock, or is killed before a late
 * arrival calls lock.  Returns the latency in ns; -1 if a process hung or
 * failed, -2 if the next holder was not told of the holder's death.
 */
static double holder_trial(struct control *c, struct mech *m, enum test test)
{
	bool late = test == T_RECOVERY_LATE;
	pid_t pids[2];
	int64_t t0;
	bool ok;

	if (!pair_start(m, c, late ? late_child : waiter_child, pids) ||
	    (!late && !flag_wait_for(&c->phase[PH_WAITING], 1, BENCH_SETUP_TIMEOUT_NS))) {
		reap_started(pids, 2);
		return -1;
	}
	if (!late)
		sleep_ns(ASLEEP_NS);
	t0 = now_ns();
	if (test == T_WAKE) {
		flag_set(&c->phase[PH_RELEASE], 1);
	} else {
		kill(pids[0], SIGKILL);
		reap(&pids[0], 1, BENCH_SETUP_TIMEOUT_NS);     /* the holder is gone for good */
	}
	if (late)
		flag_set(&c->phase[PH_GO], 1);
	ok = reap(&pids[1], 1, BENCH_SETUP_TIMEOUT_NS) && !c->res[1].err;
	if (test == T_WAKE)
		ok = reap(&pids[0], 1, BENCH_SETUP_TIMEOUT_NS) && ok;
	if (!ok)
		return -1;
	if (test != T_WAKE && m->ops->tells_owner_died && !c->res[1].owner_died) {
		/* the holder died inside its critical section: the next
		 * holder must hear of it */
		fprintf(stderr, "  %s: the holder's death was not reported\n", m->ops->name);
		return -2;
	}
	if (late)
		return c->res[1].value;
	/* wake-up: from the holder's own unlock call, not from our signal */
	return (double)(c->res[1].stamp_ns - (test == T_WAKE ? c->res[0].stamp_ns : t0));
}

static void trial_series(const struct options *o, struct control *c,
                         const struct mech_ops *ops, unsigned slots, enum test test,
                         struct results *rs)
{
	struct result *r = results_add(rs, test, ops, slots, 2);
	double v[BENCH_MAX_TRIALS];
	unsigned n = 0;

	if (test != T_WAKE && !ops->recovers) {
		r->status = ST_NA;
		return;
	}
	for (unsigned t = 0; t < o->trials && t < BENCH_MAX_TRIALS; t++) {
		struct mech m;
		double lat;

		control_reset(c);
		if (mech_new(&m, ops, slots)) {
			r->status = ST_ERROR;
			break;
		}
		lat = holder_trial(c, &m, test);
		mech_free(&m);
		if (lat < 0) {
			r->status = lat < -1.5 ? ST_ERROR : ST_HANG;
			break;
		}
		v[n++] = lat;
	}
	r->trials = n;
	if (n) {
		r->latency_ns = median(v, n);
		r->latency_max_ns = v[n - 1];   /* median() sorted them */
	}
}

void measure_recovery(const struct options *o, struct control *c,
                      const struct mech_ops *ops, unsigned slots, struct results *rs)
{
	trial_series(o, c, ops, slots, T_WAKE, rs);
	trial_series(o, c, ops, slots, T_RECOVERY_WAITER, rs);
	trial_series(o, c, ops, slots, T_RECOVERY_LATE, rs);
}

/* ------------------------------------------------------ stopped waiter -- */

/* One trial: the latency (ns), INFINITY if the later waiter got in only
 * after the stopped one was continued, -1 if a process hung or failed. */
static double stopped_trial(struct control *c, struct mech *m)
{
	pid_t pids[3] = { -1, -1, -1 };
	bool passed, ok;

	pids[2] = spawn(behind_child, m, c, 2);
	if (pids[2] < 0 || !flag_wait_for(&c->ready, 1, BENCH_SETUP_TIMEOUT_NS) || c->res[2].err ||
	    !pair_start(m, c, waiter_child, pids) ||
	    !flag_wait_for(&c->phase[PH_WAITING], 1, BENCH_SETUP_TIMEOUT_NS)) {
		reap_started(pids, 3);
		return -1;
	}
	sleep_ns(ASLEEP_NS);               /* the first waiter is asleep in line */
	kill(pids[1], SIGSTOP);
	flag_set(&c->phase[PH_GO], 1);
	sleep_ns(ASLEEP_NS);               /* the second is asleep behind it */
	flag_set(&c->phase[PH_RELEASE], 1);
	passed = flag_wait_for(&c->phase[PH_ACQUIRED], 1, BENCH_STOPPED_WAIT_NS);
	kill(pids[1], SIGCONT);
	ok = reap(pids, 3, BENCH_SETUP_TIMEOUT_NS) && !c->res[0].err && !c->res[1].err && !c->res[2].err;
	if (!ok)
		return -1;
	return passed ? (double)(c->res[2].stamp_ns - c->res[0].stamp_ns) : INFINITY;
}

void measure_stopped(const struct options *o, struct control *c,
                     const struct mech_ops *ops, unsigned slots, struct results *rs)
{
	struct result *r = results_add(rs, T_STOPPED, ops, slots, 3);
	struct mech m;
	double lat;

	(void)o;
	control_reset(c);
	if (mech_new(&m, ops, slots)) {
		r->status = ST_ERROR;
		return;
	}
	lat = stopped_trial(c, &m);
	mech_free(&m);
	if (lat < 0)
		r->status = ST_HANG;
	r->latency_ns = lat;
	r->trials = 1;
}
