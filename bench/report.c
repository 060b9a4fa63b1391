/* SPDX-License-Identifier: MIT */
/*
 * report.c - statistics and output of bakery-bench: the machine description,
 * the tables on stdout (every figure beside its ratio to the robust mutex of
 * the same run), the targets libbakery is held to, and the CSV file that
 * bench/plot.gp draws.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define BASELINE "robust-mutex"

/* ----------------------------------------------------------- statistics -- */

double jain_index(const uint64_t *x, unsigned n)
{
	double sum = 0, sq = 0;

	for (unsigned i = 0; i < n; i++) {
		sum += (double)x[i];
		sq += (double)x[i] * (double)x[i];
	}
	return sq > 0 ? sum * sum / ((double)n * sq) : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct weighted {
	double value, weight;
};

static int cmp_weighted(const void *a, const void *b)
{
	return cmp_double(&((const struct weighted *)a)->value,
	                  &((const struct weighted *)b)->value);
}

/* Each kept sample of child i stands for sampled_i / kept_i waits, so a
 * busy child's reservoir weighs as much as the waits it saw. */
void wait_percentiles(const struct control *c, unsigned procs, double *p50, double *p99)
{
	struct weighted *w = malloc(sizeof(*w) * BENCH_SAMPLE_CAP * BENCH_MAX_PROCS);
	double total = 0, acc = 0;
	unsigned n = 0, i;

	*p50 = *p99 = NAN;
	if (!w)
		return;
	for (i = 0; i < procs; i++) {
		const struct child_result *r = &c->res[i];

		for (uint64_t k = 0; k < r->kept; k++) {
			w[n].value = (double)c->samples[i][k];
			w[n].weight = (double)r->sampled / (double)r->kept;
			total += w[n++].weight;
		}
	}
	qsort(w, n, sizeof(*w), cmp_weighted);
	for (i = 0; i < n; i++) {
		acc += w[i].weight;
		if (isnan(*p50) && acc >= 0.50 * total)
			*p50 = w[i].value;
		if (isnan(*p99) && acc >= 0.99 * total)
			*p99 = w[i].value;
	}
	free(w);
}

/* -------------------------------------------------------------- results -- */

struct result *results_add(struct results *rs, enum test test,
                           const struct mech_ops *mech, unsigned slots, unsigned procs)
{
	struct result *r;

	if (rs->n == rs->cap) {
		unsigned cap = rs->cap ? rs->cap * 2 : 64;
		struct result *v = realloc(rs->v, cap * sizeof(*v));

		if (!v) {
			perror("bakery-bench");
			exit(2);
		}
		rs->v = v;
		rs->cap = cap;
	}
	r = &rs->v[rs->n++];
	result_init(r, test, mech, slots, procs);
	return r;
}

void result_init(struct result *r, enum test test, const struct mech_ops *mech,
                 unsigned slots, unsigned procs)
{
	memset(r, 0, sizeof(*r));
	r->test = test;
	r->mech = mech;
	r->slots = mech->is_bakery ? slots : 0;
	r->procs = procs;
	r->holders = 1;
	r->threads = 1;
	r->status = ST_OK;
}

/* Index of the result of TEST for MECH, or rs->n if there is none. */
static unsigned results_index(const struct results *rs, enum test test, const char *mech,
                              unsigned slots, unsigned procs)
{
	unsigned i;

	for (i = 0; i < rs->n; i++) {
		const struct result *r = &rs->v[i];

		if (r->test == test && !strcmp(r->mech->name, mech) && r->procs == procs &&
		    (!r->mech->is_bakery || r->slots == slots) && r->holders == 1 &&
		    r->threads == 1)
			break;
	}
	return i;
}

const struct result *results_find(const struct results *rs, enum test test,
                                  const char *mech, unsigned slots, unsigned procs)
{
	unsigned i = results_index(rs, test, mech, slots, procs);

	return i < rs->n ? &rs->v[i] : NULL;
}

struct result *results_get(struct results *rs, enum test test,
                           const char *mech, unsigned slots, unsigned procs)
{
	unsigned i = results_index(rs, test, mech, slots, procs);

	return i < rs->n ? &rs->v[i] : NULL;
}

const struct result *results_find_holders(const struct results *rs, const char *mech,
                                          unsigned procs, unsigned threads, unsigned k)
{
	for (unsigned i = 0; i < rs->n; i++) {
		const struct result *r = &rs->v[i];

		if (r->test == T_HOLDERS && !strcmp(r->mech->name, mech) && r->procs == procs &&
		    r->threads == threads && r->holders == k)
			return r;
	}
	return NULL;
}

static const char *status_name(enum status s)
{
	static const char *const names[] = { "ok", "n/a", "VIOLATION", "ERROR", "HANG" };

	return names[s];
}

static const char *test_name(enum test t)
{
	static const char *const names[] = {
		"uncontended", "contended", "blocked", "wake", "recovery-waiter", "recovery-late",
		"contended-work", "handover", "stopped", "holders", "loaded", "scaling",
		"uncontended-after",
	};

	return names[t];
}

/* ----------------------------------------------------------- formatting -- */

/* Each returns a pointer into a small rotating pool, so several may appear
 * in one printf. */
static char *pool(void)
{
	static char buf[16][32];
	static unsigned next;

	return buf[next++ % 16];
}

static const char *fmt_time(double ns)
{
	char *s = pool();

	if (isnan(ns) || ns < 0)
		return "-";
	if (ns < 1e3)
		snprintf(s, 32, "%.1f ns", ns);
	else if (ns < 1e6)
		snprintf(s, 32, "%.2f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(s, 32, "%.2f ms", ns / 1e6);
	else
		snprintf(s, 32, "%.2f s", ns / 1e9);
	return s;
}

static const char *fmt_rate(double per_s)
{
	char *s = pool();

	if (per_s >= 1e6)
		snprintf(s, 32, "%.2f M", per_s / 1e6);
	else
		snprintf(s, 32, "%.1f k", per_s / 1e3);
	return s;
}

static const char *fmt_ratio(double v, double base)
{
	char *s = pool();

	if (!(base > 0) || isnan(v))
		return "-";
	snprintf(s, 32, "%.2fx", v / base);
	return s;
}

static const char *fmt_slots(const struct result *r)
{
	char *s = pool();

	if (!r->mech->is_bakery)
		return "-";
	snprintf(s, 32, "%u", r->slots);
	return s;
}

/* --------------------------------------------------------------- header -- */

static void cpu_model(char *out, size_t size)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(out, size, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(out, size, "%s", strchr(line, ':') + 2);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	fclose(f);
}

static void loadavg(char *out, size_t size)
{
	FILE *f = fopen("/proc/loadavg", "re");

	snprintf(out, size, "?");
	if (f) {
		if (fgets(out, (int)size, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

void report_header(FILE *f, const struct options *o)
{
	char model[200], load[100], date[64];
	struct utsname u;
	time_t t = time(NULL);

	cpu_model(model, sizeof(model));
	loadavg(load, sizeof(load));
	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
	fprintf(f, "# bakery-bench %s (%s)\n", PACKAGE_VERSION, o->quick ? "quick" : "full");
	fprintf(f, "# date: %s\n", date);
	fprintf(f, "# machine: %ld CPUs online, %s, %s %s %s\n",
	        sysconf(_SC_NPROCESSORS_ONLN), model, u.sysname, u.release, u.machine);
	fprintf(f, "# load average: %s; CPUs busy with other work at start: %.0f%%\n",
	        load, 100 * o->busy_start);
	if (o->busy_start > 0.2)
		fprintf(f, "# WARNING: other work holds the CPUs: the measured processes share them, so\n"
		        "# contended runs see less contention (a low 'handov'; with two processes\n"
		        "# they may not run at the same time at all) and every figure is noisier\n");
	fprintf(f, "# contended runs %.2f s (median of %u), blocked waiter %.2f s, "
	        "uncontended best of %u runs of %.0f ms, recovery trials %u\n",
	        o->duration_s, o->rounds, o->blocked_s, o->unc_runs, o->unc_run_s * 1e3, o->trials);
}

/* --------------------------------------------------------------- tables -- */

/* A row of the uncontended table: R's time per lock+unlock, and its ratio
 * to the baseline's B. */
static void unc_row(FILE *f, const struct result *r, double b)
{
	fprintf(f, "%-14s %6s %12s %9s  %s\n", r->mech->name, fmt_slots(r),
	        fmt_time(r->ns_per_op), fmt_ratio(r->ns_per_op, b), status_name(r->status));
}

/* The same loop in a lock in which another process has slept first (on
 * x86 its unlocks fence until the lock's mark wears off: exitfence.h). */
static void table_unc_after(FILE *f, const struct results *rs, double b)
{
	bool any = false;

	for (unsigned i = 0; i < rs->n; i++) {
		const struct result *r = &rs->v[i];

		if (r->test != T_UNC_AFTER)
			continue;
		if (!any)
			fprintf(f, "after another process slept in the lock once (then %u "
			        "passages of ours):\n", AFTER_PASSES);
		any = true;
		unc_row(f, r, b);
	}
}

static void table_uncontended(FILE *f, const struct options *o, const struct results *rs)
{
	const struct result *base = results_find(rs, T_UNCONTENDED, BASELINE, 0, 1);
	double b = base ? base->ns_per_op : NAN;

	fprintf(f, "\nUncontended lock+unlock, one process (best of %u runs of %.0f ms, "
	        "each in a fresh process, rounds taken over all mechanisms in turn)\n",
	        o->unc_runs, o->unc_run_s * 1e3);
	fprintf(f, "%-14s %6s %12s %9s  %s\n", "mechanism", "slots", "per op", "vs mutex", "check");
	for (unsigned i = 0; i < rs->n; i++) {
		const struct result *r = &rs->v[i];

		if (r->test != T_UNCONTENDED)
			continue;
		unc_row(f, r, b);
	}
	table_unc_after(f, rs, b);
}

/* Time per acquisition in futex hand-overs, for runs with more processes
 * than CPUs (where every acquisition of a FIFO lock waits for one), or "-". */
static const char *fmt_floor(const struct result *r, const struct result *handover)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!handover || !(handover->latency_ns > 0) || !(r->acq_per_s > 0) ||
	    (long)r->procs <= cpus)
		return "-";
	return fmt_ratio(1e9 / r->acq_per_s, handover->latency_ns);
}

static void contended_row(FILE *f, const struct result *r, const struct result *base,
                          const struct result *handover)
{
	fprintf(f, "%5u %-14s %5s %9s %7s %6.3f %7.2f %10s %7s %6.2f %5.0f%% %7s %9s %9s %9s  %s\n",
	        r->procs, r->mech->name, fmt_slots(r), fmt_rate(r->acq_per_s),
	        fmt_ratio(r->acq_per_s, base ? base->acq_per_s : NAN), r->jain,
	        r->max_min > 1e9 ? INFINITY : r->max_min, fmt_time(r->cpu_ns_per_acq),
	        fmt_ratio(r->cpu_ns_per_acq, base ? base->cpu_ns_per_acq : NAN),
	        r->vcsw_per_acq + r->ivcsw_per_acq, 100 * r->handoff_ratio,
	        fmt_floor(r, handover), fmt_time(r->wait_p50_ns), fmt_time(r->wait_p99_ns), fmt_time(r->wait_max_ns),
	        status_name(r->status));
}

static void table_contended(FILE *f, const struct options *o, const struct results *rs,
                            enum test test)
{
	const struct result *handover = results_find(rs, T_HANDOVER, BASELINE, 0, 2);
	bool any = false;

	for (unsigned i = 0; i < rs->n; i++)
		any |= rs->v[i].test == test;
	if (!any)
		return;
	fprintf(f, "\nContended%s: N processes loop lock / check occupancy / unlock%s for %.2f s, "
	        "the median of %u runs by throughput\n"
	        "(CPU/acq = user+system time per acquisition; cs/acq = context switches per "
	        "acquisition;\n handov = acquisitions that took the lock from another process; "
	        "x h-o = time per acquisition in\n futex hand-overs, with more processes than "
	        "CPUs; wait = lock call to acquisition, 1 in %u timed)\n",
	        test == T_CONTENDED_LOADED ? ", beside CPU-bound processes at nice 19" : "",
	        test == T_CONTENDED_WORK ? " / 100 ns - 1 us of work" : "",
	        o->duration_s, test == T_CONTENDED_LOADED ? o->loaded_rounds : o->rounds,
	        BENCH_SAMPLE_MASK + 1);
	if (test == T_CONTENDED_LOADED)
		fprintf(f, "(%u CPU-bound processes at nice 19 run beside each run: other work on the "
		        "machine)\n", o->background);
	fprintf(f, "%5s %-14s %5s %9s %7s %6s %7s %10s %7s %6s %6s %7s %9s %9s %9s  %s\n", "procs",
	        "mechanism", "slots", "acq/s", "vs mtx", "Jain", "max/min", "CPU/acq",
	        "vs mtx", "cs/acq", "handov", "x h-o", "wait p50", "p99", "max", "check");
	for (unsigned p = 0; p < o->nprocs; p++) {
		const struct result *base = results_find(rs, test, BASELINE, 0, o->procs[p]);

		for (unsigned i = 0; i < rs->n; i++)
			if (rs->v[i].test == test && rs->v[i].procs == o->procs[p])
				contended_row(f, &rs->v[i], base, handover);
	}
}

static void line_handover(FILE *f, const struct results *rs)
{
	const struct result *h = results_find(rs, T_HANDOVER, BASELINE, 0, 2);

	if (h)
		fprintf(f, "\nFutex hand-over floor (two processes pass a futex word back and forth, "
		        "median of %u runs):\n  %s per hand-over, %s hand-overs/s  %s\n", h->trials,
		        fmt_time(h->latency_ns), fmt_rate(1e9 / h->latency_ns), status_name(h->status));
}

/* "median (worst)" of a recovery series, or its status. */
static void latency_cell(const struct result *r, char *out, size_t size)
{
	if (!r)
		snprintf(out, size, "-");
	else if (r->status != ST_OK)
		snprintf(out, size, "%s", status_name(r->status));
	else
		snprintf(out, size, "%s (%s)", fmt_time(r->latency_ns), fmt_time(r->latency_max_ns));
}

static void table_recovery(FILE *f, const struct options *o, const struct results *rs)
{
	fprintf(f, "\nBlocked waiter and hand-over to it: blocked CPU = the waiter's CPU time per second "
	        "blocked;\nwake-up = holder's unlock call to the sleeping waiter holding the lock; "
	        "SIGKILL = holder killed,\nthe sleeping waiter acquires / a late arrival's lock call "
	        "(median of %u trials, worst in brackets)\n", o->trials);
	fprintf(f, "%-14s %5s %12s  %-22s %-22s %-22s\n", "mechanism", "slots", "blocked CPU",
	        "wake-up", "SIGKILL: waiter", "SIGKILL: late arrival");
	for (unsigned i = 0; i < mech_count; i++) {
		const char *m = mech_table[i]->name;
		unsigned s = mech_table[i]->is_bakery ? o->slots_small : 0;
		const struct result *b = results_find(rs, T_BLOCKED, m, s, 2);
		const struct result *k = results_find(rs, T_WAKE, m, s, 2);
		const struct result *w = results_find(rs, T_RECOVERY_WAITER, m, s, 2);
		const struct result *l = results_find(rs, T_RECOVERY_LATE, m, s, 2);
		char kb[64], wb[64], lb[64], cpu[32];

		if (!b && !k && !w && !l)
			continue;
		if (!b)
			snprintf(cpu, sizeof(cpu), "-");
		else if (b->status == ST_OK)
			snprintf(cpu, sizeof(cpu), "%.3f ms/s", b->cpu_ms_per_s);
		else
			snprintf(cpu, sizeof(cpu), "%s", status_name(b->status));
		latency_cell(k, kb, sizeof(kb));
		latency_cell(w, wb, sizeof(wb));
		latency_cell(l, lb, sizeof(lb));
		fprintf(f, "%-14s %5s %12s  %-22s %-22s %-22s\n", m,
		        s ? fmt_slots(b ? b : k ? k : w ? w : l) : "-", cpu, kb, wb, lb);
	}
}

static void table_stopped(FILE *f, const struct results *rs)
{
	bool any = false;

	for (unsigned i = 0; i < rs->n; i++)
		any |= rs->v[i].test == T_STOPPED;
	if (!any)
		return;
	fprintf(f, "\nStopped waiter: a waiter asleep in line is SIGSTOPped, a second one queues "
	        "behind it,\nthe holder releases: time from the release to the second one "
	        "holding the lock\n(\"stalled\": not within %.0f ms, only once the stopped one "
	        "was continued)\n", BENCH_STOPPED_WAIT_NS / 1e6);
	fprintf(f, "%-14s %5s  %s\n", "mechanism", "slots", "release -> next holder");
	for (unsigned i = 0; i < rs->n; i++) {
		const struct result *r = &rs->v[i];

		if (r->test != T_STOPPED)
			continue;
		fprintf(f, "%-14s %5s  %s\n", r->mech->name, fmt_slots(r),
		        r->status != ST_OK ? status_name(r->status) :
		        isinf(r->latency_ns) ? "stalled" : fmt_time(r->latency_ns));
	}
}

/* A k-holder run's row: its figures and its ratios to K1, the k = 1 run
 * of the same crowd. */
static void holders_row(FILE *f, const struct result *r, const struct result *k1)
{
	fprintf(f, "%-14s %5u %5u %8u %3u %9s %7s %10s %6.2f %8.1f %9s %7s  %s\n",
	        r->mech->name, r->procs, r->threads, r->procs * r->threads, r->holders,
	        fmt_rate(r->acq_per_s), fmt_ratio(r->acq_per_s, k1 ? k1->acq_per_s : NAN),
	        fmt_time(r->cpu_ns_per_acq), r->vcsw_per_acq,
	        r->max_min > 1e9 ? INFINITY : r->max_min, fmt_time(r->wait_max_ns),
	        fmt_ratio(r->wait_max_ns, k1 ? k1->wait_max_ns : NAN), status_name(r->status));
}

static void table_holders(FILE *f, const struct options *o, const struct results *rs)
{
	bool any = false;

	for (unsigned i = 0; i < rs->n; i++)
		any |= rs->v[i].test == T_HOLDERS;
	if (!any)
		return;
	fprintf(f, "\nk holders: PROCS processes of THREADS threads loop lock / check / unlock on a "
	        "lock of k holders\nfor %.2f s, k = 1 and k = %u in alternation, the median of %u "
	        "runs by throughput (vs k=1:\nratio to k = 1 of the same crowd; wait max: the "
	        "longest lock call, every one timed;\nmax/min: the busiest thread's acquisitions "
	        "over the idlest's)\n", o->holders_s, o->holders_k, o->rounds);
	fprintf(f, "%-14s %5s %5s %8s %3s %9s %7s %10s %6s %8s %9s %7s  %s\n", "mechanism", "procs",
	        "thr", "threads", "k", "acq/s", "vs k=1", "CPU/acq", "cs/acq", "max/min",
	        "wait max", "vs k=1", "check");
	for (unsigned i = 0; i < rs->n; i++) {
		const struct result *r = &rs->v[i];

		if (r->test == T_HOLDERS)
			holders_row(f, r, results_find_holders(rs, r->mech->name, r->procs,
			                                       r->threads, 1));
	}
}

/* A contended run of MECH with PROCS processes: the contended test's for
 * its process counts (o->procs, in the small region), else the scaling
 * test's; NULL if none. */
static const struct result *scaling_find(const struct options *o, const struct results *rs,
                                         const char *mech, unsigned procs)
{
	for (unsigned p = 0; p < o->nprocs; p++)
		if (o->procs[p] == procs)
			return results_find(rs, T_CONTENDED, mech, o->slots_small, procs);
	for (unsigned i = 0; i < rs->n; i++)
		if (rs->v[i].test == T_SCALING && rs->v[i].procs == procs &&
		    !strcmp(rs->v[i].mech->name, mech))
			return &rs->v[i];
	return NULL;
}

/* Cost per acquisition against the number of processes, one line per
 * figure: CPU time per acquisition, and time per acquisition (1 /
 * throughput).  A FIFO lock that parks its waiters should keep both flat. */
static void table_scaling(FILE *f, const struct options *o, const struct results *rs)
{
	unsigned counts[6], n = 0, ref = 0;
	bool any = false;

	for (unsigned i = 0; i < rs->n; i++)
		any |= rs->v[i].test == T_SCALING;
	if (!any)
		return;
	for (unsigned p = 0; p < o->nprocs; p++)
		counts[n++] = o->procs[p];
	/* growth from the contended runs' largest count on */
	ref = n - 1;
	for (unsigned p = 0; p < o->nscaling; p++)
		counts[n++] = o->scaling[p];
	fprintf(f, "\nScaling: cost per acquisition with N processes on %ld CPUs (the contended "
	        "runs, then more\nprocesses, %.2f s runs, the median of %u; 2 slots per process "
	        "beyond 32): CPU = user+system\ntime per acquisition, time = 1 / throughput\n",
	        sysconf(_SC_NPROCESSORS_ONLN), o->duration_s, o->rounds);
	fprintf(f, "%-14s %-6s", "mechanism", "figure");
	for (unsigned c = 0; c < n; c++)
		fprintf(f, " %9u", counts[c]);
	fprintf(f, "  %3u vs %u\n", counts[n - 1], counts[ref]);
	for (unsigned i = 0; i < mech_count; i++) {
		const char *m = mech_table[i]->name;
		double at_ref[2] = { NAN, NAN }, last[2] = { NAN, NAN };

		if (!scaling_find(o, rs, m, counts[n - 1]))
			continue;
		for (unsigned fig = 0; fig < 2; fig++) {
			fprintf(f, "%-14s %-6s", fig ? "" : m, fig ? "time" : "CPU");
			for (unsigned c = 0; c < n; c++) {
				const struct result *r = scaling_find(o, rs, m, counts[c]);
				double v = NAN;

				if (r && r->status == ST_OK)
					v = fig ? (r->acq_per_s > 0 ? 1e9 / r->acq_per_s : NAN)
					        : r->cpu_ns_per_acq;
				if (c == ref)
					at_ref[fig] = v;
				last[fig] = v;
				fprintf(f, " %9s", r && r->status != ST_OK ? status_name(r->status)
				                                          : fmt_time(v));
			}
			fprintf(f, "  %9s\n", fmt_ratio(last[fig], at_ref[fig]));
		}
	}
}

/* -------------------------------------------------------------- targets -- */

enum target_id {
	TG_UNC_SMALL, TG_UNC_LARGE, TG_UNC_AFTER, TG_UNC_SMALL_STRETCH, TG_UNC_LARGE_STRETCH,
	TG_LOW_THR, TG_LOW_JAIN, TG_LOW_MAXMIN,
	/* fair with more processes than CPUs too (4 on 2: the line fills
	 * with preempted ticket holders, docs/performance.md) */
	TG_MID_JAIN,
	TG_HIGH_THR, TG_HIGH_CPU,
	/* no loss to the parking ticket lock below the most processes
	 * (o->procs[0] and [1]: 2 and 4), then at the most (8) */
	TG_PARK_THR_LOW, TG_PARK_THR_MID,
	TG_PARK_THR, TG_PARK_CPU, TG_PARK_THR_LOADED, TG_PARK_CPU_LOADED,
	/* k holders: throughput and longest wait against k = 1, for each of
	 * the crowds (o->holders_procs) in turn */
	TG_K_THR_0, TG_K_WAIT_0, TG_K_THR_1, TG_K_WAIT_1, TG_K_THR_2, TG_K_WAIT_2,
	TG_BLOCKED, TG_KILL_WAITER, TG_KILL_LATE, TG_COUNT
};

struct target {
	double limit;
	bool at_most;              /* met when value <= limit, else >= limit */
	const char *unit;          /* printed after the value               */
	double scale;              /* raw value / scale is printed          */
};

static const struct target targets[TG_COUNT] = {
	[TG_UNC_SMALL]   = { 1.5,  true,  "x",   1 },
	[TG_UNC_LARGE]   = { 1.5,  true,  "x",   1 },
	[TG_UNC_AFTER]   = { 1.5,  true,  "x",   1 },
	[TG_UNC_SMALL_STRETCH] = { 1.0, true, "x", 1 },
	[TG_UNC_LARGE_STRETCH] = { 1.0, true, "x", 1 },
	[TG_LOW_THR]     = { 0.5,  false, "x",   1 },
	[TG_LOW_JAIN]    = { 0.99, false, "",    1 },
	[TG_LOW_MAXMIN]  = { 1.1,  true,  "",    1 },
	[TG_MID_JAIN]    = { 0.95, false, "",    1 },
	[TG_HIGH_THR]    = { 0.1,  false, "x",   1 },
	[TG_HIGH_CPU]    = { 3,    true,  "x",   1 },
	[TG_PARK_THR_LOW] = { 1,   false, "x",   1 },
	[TG_PARK_THR_MID] = { 1,   false, "x",   1 },
	[TG_PARK_THR]    = { 1,    false, "x",   1 },
	[TG_PARK_CPU]    = { 1,    true,  "x",   1 },
	[TG_PARK_THR_LOADED] = { 1, false, "x",  1 },
	[TG_PARK_CPU_LOADED] = { 1, true,  "x",  1 },
	[TG_K_THR_0]     = { 1,    false, "x",   1 },
	[TG_K_WAIT_0]    = { 2,    true,  "x",   1 },
	[TG_K_THR_1]     = { 1,    false, "x",   1 },
	[TG_K_WAIT_1]    = { 2,    true,  "x",   1 },
	[TG_K_THR_2]     = { 1,    false, "x",   1 },
	[TG_K_WAIT_2]    = { 2,    true,  "x",   1 },
	[TG_BLOCKED]     = { 20,   true,  " ms", 1 },
	[TG_KILL_WAITER] = { 1e6,  true,  " ms", 1e6 },
	[TG_KILL_LATE]   = { 5e4,  true,  " us", 1e3 },
};

/* The crowd of k-holder target T: its index in o->holders_procs. */
static unsigned k_crowd(enum target_id t)
{
	return (unsigned)(t - TG_K_THR_0) / 2;
}

static void target_label(enum target_id t, const struct options *o, char *out, size_t size)
{
	unsigned lo = o->procs[0], mid = o->procs[o->nprocs / 2], hi = o->procs[o->nprocs - 1];
	unsigned threads = t >= TG_K_THR_0 && t <= TG_K_WAIT_2 ?
	                   o->holders_procs[k_crowd(t)] * o->holders_threads : 0;

	switch (t) {
	case TG_UNC_SMALL:   snprintf(out, size, "uncontended, %u slots <= 1.5x", o->slots_small); break;
	case TG_UNC_LARGE:   snprintf(out, size, "uncontended, %u slots <= 1.5x", o->slots_large); break;
	case TG_UNC_AFTER:   snprintf(out, size, "unc. after a sleeper <= 1.5x"); break;
	case TG_UNC_SMALL_STRETCH:
		snprintf(out, size, "uncontended, %u slots <= 1.0x", o->slots_small); break;
	case TG_UNC_LARGE_STRETCH:
		snprintf(out, size, "uncontended, %u slots <= 1.0x", o->slots_large); break;
	case TG_LOW_THR:     snprintf(out, size, "%u procs: throughput >= 0.5x", lo); break;
	case TG_LOW_JAIN:    snprintf(out, size, "%u procs: Jain >= 0.99", lo); break;
	case TG_LOW_MAXMIN:  snprintf(out, size, "%u procs: max/min <= 1.1", lo); break;
	case TG_MID_JAIN:    snprintf(out, size, "%u procs: Jain >= 0.95", mid); break;
	case TG_HIGH_THR:    snprintf(out, size, "%u procs: throughput >= 0.1x", hi); break;
	case TG_HIGH_CPU:    snprintf(out, size, "%u procs: CPU/acq <= 3x", hi); break;
	case TG_PARK_THR_LOW: snprintf(out, size, "%u procs: thr >= 1x ticket-park", lo); break;
	case TG_PARK_THR_MID: snprintf(out, size, "%u procs: thr >= 1x ticket-park", mid); break;
	case TG_PARK_THR:    snprintf(out, size, "%u procs: thr >= 1x ticket-park", hi); break;
	case TG_PARK_CPU:    snprintf(out, size, "%u procs: CPU <= 1x ticket-park", hi); break;
	case TG_PARK_THR_LOADED:
		snprintf(out, size, "%u procs+load: thr >= 1x t-park", hi); break;
	case TG_PARK_CPU_LOADED:
		snprintf(out, size, "%u procs+load: CPU <= 1x t-park", hi); break;
	case TG_K_THR_0: case TG_K_THR_1: case TG_K_THR_2:
		snprintf(out, size, "k=%u, %u threads: thr >= 1x k=1", o->holders_k, threads); break;
	case TG_K_WAIT_0: case TG_K_WAIT_1: case TG_K_WAIT_2:
		snprintf(out, size, "k=%u, %u threads: wait <= 2x k=1", o->holders_k, threads); break;
	case TG_BLOCKED:     snprintf(out, size, "blocked 1 s: CPU <= 20 ms"); break;
	case TG_KILL_WAITER: snprintf(out, size, "SIGKILL: waiter acquires <= 1 ms"); break;
	default:             snprintf(out, size, "SIGKILL: late arrival <= 50 us"); break;
	}
}

/* A ratio of MECH's figure to the baseline's in the same test, or NAN. */
static double ratio_of(const struct results *rs, enum test test, const char *mech,
                       unsigned slots, unsigned procs, double (*get)(const struct result *))
{
	const struct result *r = results_find(rs, test, mech, slots, procs);
	const struct result *b = results_find(rs, test, BASELINE, 0, procs);

	if (!r || !b || r->status != ST_OK || b->status != ST_OK || !(get(b) > 0))
		return NAN;
	return get(r) / get(b);
}

static double get_ns(const struct result *r) { return r->ns_per_op; }
static double get_thr(const struct result *r) { return r->acq_per_s; }
static double get_cpu(const struct result *r) { return r->cpu_ns_per_acq; }
static double get_jain(const struct result *r) { return r->jain; }
static double get_max_min(const struct result *r) { return r->max_min; }
static double get_blocked(const struct result *r) { return r->cpu_ms_per_s; }
static double get_latency(const struct result *r) { return r->latency_ns; }

/* MECH's uncontended loop after a sleeper, to the baseline's uncontended
 * loop, or NAN. */
static double ratio_after(const struct results *rs, const char *mech, unsigned slots)
{
	const struct result *r = results_find(rs, T_UNC_AFTER, mech, slots, 1);
	const struct result *b = results_find(rs, T_UNCONTENDED, BASELINE, 0, 1);

	if (!r || !b || r->status != ST_OK || b->status != ST_OK || !(b->ns_per_op > 0))
		return NAN;
	return r->ns_per_op / b->ns_per_op;
}

/* A ratio of MECH's figure to the parking ticket lock's in TEST, or NAN. */
static double ratio_park(const struct results *rs, enum test test, const char *mech,
                         unsigned slots, unsigned procs, double (*get)(const struct result *))
{
	const struct result *r = results_find(rs, test, mech, slots, procs);
	const struct result *b = results_find(rs, test, "ticket-park", 0, procs);

	if (!r || !b || r->status != ST_OK || b->status != ST_OK || !(get(b) > 0))
		return NAN;
	return get(r) / get(b);
}

/* A ratio of MECH's k-holder run to its k = 1 run of the same crowd
 * (target T's), or NAN. */
static double ratio_k1(const struct options *o, const struct results *rs, enum target_id t,
                       const char *mech, double (*get)(const struct result *))
{
	unsigned procs = o->holders_procs[k_crowd(t)];
	const struct result *r = results_find_holders(rs, mech, procs, o->holders_threads,
	                                              o->holders_k);
	const struct result *b = results_find_holders(rs, mech, procs, o->holders_threads, 1);

	if (!r || !b || r->status != ST_OK || b->status != ST_OK || !(get(b) > 0))
		return NAN;
	return get(r) / get(b);
}

static double get_wait_max(const struct result *r) { return r->wait_max_ns; }

/* A figure of MECH's own, or NAN. */
static double own(const struct results *rs, enum test test, const char *mech, unsigned slots,
                  unsigned procs, double (*get)(const struct result *))
{
	const struct result *r = results_find(rs, test, mech, slots, procs);

	return r && r->status == ST_OK ? get(r) : NAN;
}

static double target_value(enum target_id t, const struct options *o,
                           const struct results *rs, const char *m)
{
	unsigned s = o->slots_small, lo = o->procs[0], mid = o->procs[o->nprocs / 2];
	unsigned hi = o->procs[o->nprocs - 1];

	switch (t) {
	case TG_UNC_SMALL:   return ratio_of(rs, T_UNCONTENDED, m, s, 1, get_ns);
	case TG_UNC_LARGE:   return ratio_of(rs, T_UNCONTENDED, m, o->slots_large, 1, get_ns);
	case TG_UNC_AFTER:   return ratio_after(rs, m, s);
	case TG_UNC_SMALL_STRETCH: return ratio_of(rs, T_UNCONTENDED, m, s, 1, get_ns);
	case TG_UNC_LARGE_STRETCH:
		return ratio_of(rs, T_UNCONTENDED, m, o->slots_large, 1, get_ns);
	case TG_LOW_THR:     return ratio_of(rs, T_CONTENDED, m, s, lo, get_thr);
	case TG_LOW_JAIN:    return own(rs, T_CONTENDED, m, s, lo, get_jain);
	case TG_LOW_MAXMIN:  return own(rs, T_CONTENDED, m, s, lo, get_max_min);
	case TG_MID_JAIN:    return own(rs, T_CONTENDED, m, s, mid, get_jain);
	case TG_HIGH_THR:    return ratio_of(rs, T_CONTENDED, m, s, hi, get_thr);
	case TG_HIGH_CPU:    return ratio_of(rs, T_CONTENDED, m, s, hi, get_cpu);
	case TG_PARK_THR_LOW: return ratio_park(rs, T_CONTENDED, m, s, lo, get_thr);
	case TG_PARK_THR_MID: return ratio_park(rs, T_CONTENDED, m, s, mid, get_thr);
	case TG_PARK_THR:    return ratio_park(rs, T_CONTENDED, m, s, hi, get_thr);
	case TG_PARK_CPU:    return ratio_park(rs, T_CONTENDED, m, s, hi, get_cpu);
	case TG_PARK_THR_LOADED: return ratio_park(rs, T_CONTENDED_LOADED, m, s, hi, get_thr);
	case TG_PARK_CPU_LOADED: return ratio_park(rs, T_CONTENDED_LOADED, m, s, hi, get_cpu);
	case TG_K_THR_0: case TG_K_THR_1: case TG_K_THR_2:
		return ratio_k1(o, rs, t, m, get_thr);
	case TG_K_WAIT_0: case TG_K_WAIT_1: case TG_K_WAIT_2:
		return ratio_k1(o, rs, t, m, get_wait_max);
	case TG_BLOCKED:     return own(rs, T_BLOCKED, m, s, 2, get_blocked);
	case TG_KILL_WAITER: return own(rs, T_RECOVERY_WAITER, m, s, 2, get_latency);
	default:             return own(rs, T_RECOVERY_LATE, m, s, 2, get_latency);
	}
}

static void target_cell(enum target_id t, double v, char *out, size_t size)
{
	const struct target *g = &targets[t];
	bool met = g->at_most ? v <= g->limit : v >= g->limit;

	if (isnan(v))
		snprintf(out, size, "-");
	else
		snprintf(out, size, "%.3g%s %s", v / g->scale, g->unit, met ? "met" : "MISSED");
}

static void table_targets(FILE *f, const struct options *o, const struct results *rs)
{
	char label[64], cell[48];

	fprintf(f, "\nTargets (ratios to %s in this run; to ticket-park, and to k = 1, where "
	        "said)\n%-34s", BASELINE, "target");
	for (unsigned i = 0; i < mech_count; i++)
		if (mech_table[i]->is_bakery)
			fprintf(f, " %-17s", mech_table[i]->name);
	fputc('\n', f);
	for (unsigned t = 0; t < TG_COUNT; t++) {
		target_label(t, o, label, sizeof(label));
		fprintf(f, "%-34s", label);
		for (unsigned i = 0; i < mech_count; i++) {
			if (!mech_table[i]->is_bakery)
				continue;
			target_cell(t, target_value(t, o, rs, mech_table[i]->name), cell, sizeof(cell));
			if (t >= TG_K_THR_0 && t <= TG_K_WAIT_2 && !mech_table[i]->counts_holders)
				snprintf(cell, sizeof(cell), "n/a");
			fprintf(f, " %-17s", cell);
		}
		fputc('\n', f);
	}
}

void report_tables(FILE *f, const struct options *o, const struct results *rs)
{
	char load[100];

	table_uncontended(f, o, rs);
	line_handover(f, rs);
	table_contended(f, o, rs, T_CONTENDED);
	table_contended(f, o, rs, T_CONTENDED_WORK);
	table_contended(f, o, rs, T_CONTENDED_LOADED);
	table_recovery(f, o, rs);
	table_stopped(f, rs);
	table_holders(f, o, rs);
	table_scaling(f, o, rs);
	table_targets(f, o, rs);
	loadavg(load, sizeof(load));
	fprintf(f, "\n# load average at end: %s; CPUs busy with other work at end: %.0f%%\n",
	        load, 100 * o->busy_end);
	fprintf(f, "# the robust mutex is the baseline: vs mtx = figure / robust-mutex figure\n");
}

/* ------------------------------------------------------------------ CSV -- */

static void csv_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs(",", f);
	else
		fprintf(f, ",%.6g", v);
}

static void csv_row(FILE *f, const struct results *rs, const struct result *r)
{
	bool ok = r->status == ST_OK;
	bool unc = ok && r->test == T_UNCONTENDED;
	bool con = ok && (r->test == T_CONTENDED || r->test == T_CONTENDED_WORK ||
	                  r->test == T_CONTENDED_LOADED || r->test == T_SCALING ||
	                  r->test == T_HOLDERS);
	bool blk = ok && r->test == T_BLOCKED;
	bool rec = ok && (r->test == T_WAKE || r->test == T_RECOVERY_WAITER ||
	                  r->test == T_RECOVERY_LATE || r->test == T_HANDOVER ||
	                  r->test == T_STOPPED);
	double ratio = NAN;

	if (unc)
		ratio = ratio_of(rs, r->test, r->mech->name, r->slots, r->procs, get_ns);
	else if (con)
		ratio = ratio_of(rs, r->test, r->mech->name, r->slots, r->procs, get_thr);
	fprintf(f, "%s,%s,%u,%u,%s", test_name(r->test), r->mech->name, r->slots, r->procs,
	        status_name(r->status));
	csv_num(f, unc ? r->ns_per_op : NAN);
	csv_num(f, con ? r->acq_per_s : NAN);
	csv_num(f, con ? r->jain : NAN);
	csv_num(f, con ? r->max_min : NAN);
	csv_num(f, con ? r->cpu_ns_per_acq : NAN);
	csv_num(f, con ? r->vcsw_per_acq : NAN);
	csv_num(f, con ? r->ivcsw_per_acq : NAN);
	csv_num(f, con ? r->handoff_ratio : NAN);
	csv_num(f, con ? r->wait_p50_ns : NAN);
	csv_num(f, con ? r->wait_p99_ns : NAN);
	csv_num(f, con ? r->wait_max_ns : NAN);
	csv_num(f, blk ? r->cpu_ms_per_s : NAN);
	csv_num(f, rec ? r->latency_ns : NAN);
	csv_num(f, rec ? r->latency_max_ns : NAN);
	csv_num(f, rec || unc ? (double)r->trials : NAN);
	csv_num(f, ratio);
	csv_num(f, con ? ratio_of(rs, r->test, r->mech->name, r->slots, r->procs, get_cpu) : NAN);
	fprintf(f, ",%u,%u\n", r->holders, r->threads);
}

static unsigned mech_index(const struct mech_ops *m)
{
	unsigned i = 0;

	while (i < mech_count && mech_table[i] != m)
		i++;
	return i;
}

static unsigned csv_slots_large;

/* Test, then (contended) the scaling runs last, then mechanism, slots and
 * process count: the rows of one line of a plot come out together. */
static int csv_order(const void *pa, const void *pb)
{
	const struct result *a = *(const struct result *const *)pa;
	const struct result *b = *(const struct result *const *)pb;
	unsigned ka[5] = { a->test, a->test == T_CONTENDED && a->slots == csv_slots_large,
	                   mech_index(a->mech), a->slots, a->procs };
	unsigned kb[5] = { b->test, b->test == T_CONTENDED && b->slots == csv_slots_large,
	                   mech_index(b->mech), b->slots, b->procs };

	for (unsigned i = 0; i < 5; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

int report_csv(const char *path, const struct options *o, const struct results *rs)
{
	const struct result **order = malloc(sizeof(*order) * (rs->n ? rs->n : 1));
	FILE *f = fopen(path, "we");

	if (!f || !order) {
		perror(path);
		free(order);
		if (f)
			fclose(f);
		return -1;
	}
	for (unsigned i = 0; i < rs->n; i++)
		order[i] = &rs->v[i];
	csv_slots_large = o->slots_large;
	qsort(order, rs->n, sizeof(*order), csv_order);
	report_header(f, o);
	fprintf(f, "test,mechanism,slots,procs,status,ns_per_op,acq_per_s,jain,max_min,"
	        "cpu_ns_per_acq,vcsw_per_acq,ivcsw_per_acq,handoff_ratio,"
	        "wait_p50_ns,wait_p99_ns,wait_max_ns,blocked_cpu_ms_per_s,"
	        "latency_ns,latency_max_ns,trials,ratio,cpu_ratio,holders,threads\n");
	for (unsigned i = 0; i < rs->n; i++)
		csv_row(f, rs, order[i]);
	free(order);
	return fclose(f) ? -1 : 0;
}
