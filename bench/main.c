/* SPDX-License-Identifier: MIT */
/*
 * main.c - bakery-bench: every libbakery algorithm against the mechanisms
 * users would pick instead, in one run on one machine.
 *
 *   bakery-bench [--quick] [--csv FILE] [--duration SEC] [--rounds N]
 *                [--trials N] [--only NAME,...] [--tests NAME,...]
 *                [--background-load N]
 *
 * Prints the tables (see report.c) on stdout and progress on stderr, and
 * writes the CSV that bench/plot.gp draws.  Exits 1 if any run failed its
 * occupancy check, hung or errored, so that `make bench-quick` catches a
 * regression that breaks a lock, not only one that slows it down.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bakery-bench [options]\n"
	        "  --quick          the short subset (well under a minute)\n"
	        "  --csv FILE       write the results as CSV to FILE (default bakery-bench.csv)\n"
	        "  --duration SEC   length of each contended run (default 1, quick 0.25)\n"
	        "  --rounds N       contended runs per case, the median is kept (default 3, quick 1)\n"
	        "  --trials N       wake-up and SIGKILL trials per mechanism (default 21, quick 5)\n"
	        "  --only A,B,...   only these mechanisms (robust-mutex is always run)\n"
	        "  --tests A,B,...  only these of: uncontended, contended,\n"
	        "                   contended-work (100 ns - 1 us of work outside the lock),\n"
	        "                   blocked, stopped (a waiter SIGSTOPped in line),\n"
	        "                   recovery (the wake-up and SIGKILL trials),\n"
	        "                   holders (k = 1 and 2 alternating, 8 threads per process),\n"
	        "                   loaded (8 processes beside CPU-bound processes at nice 19),\n"
	        "                   scaling (16, 32 and 64 processes)\n"
	        "  --background-load N  CPU-bound processes at nice 19 in the loaded runs\n"
	        "                   (default 2; 0: no loaded runs)\n"
	        "  --help           this text\n"
	        "mechanisms:\n");
	for (unsigned i = 0; i < mech_count; i++)
		fprintf(f, "  %-14s %s\n", mech_table[i]->name, mech_table[i]->what);
}

static void defaults(struct options *o, bool quick)
{
	memset(o, 0, sizeof(*o));
	o->quick = quick;
	o->duration_s = quick ? 0.25 : 1.0;
	o->rounds = quick ? 1 : 3;
	o->blocked_s = quick ? 0.25 : 1.0;
	o->unc_run_s = quick ? 0.01 : 0.03;
	o->unc_runs = quick ? 10 : 30;
	o->trials = quick ? 5 : 21;
	o->procs[0] = 2;
	o->procs[1] = 4;
	o->procs[2] = 8;
	o->nprocs = 3;
	o->scaling[0] = 16;
	o->scaling[1] = 32;
	o->scaling[2] = 64;
	o->nscaling = 3;
	o->holders_procs[0] = 1;
	o->holders_procs[1] = 4;
	o->holders_procs[2] = 16;
	o->nholders = 3;
	o->holders_threads = 8;
	o->holders_k = 2;
	o->holders_s = quick ? 0.25 : 0.5;
	o->background = 2;
	o->loaded_rounds = quick ? 1 : 5;
	o->slots_small = 64;
	o->slots_large = 1024;
	o->csv_path = "bakery-bench.csv";
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "csv", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "trials", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ "tests", required_argument, NULL, 'T' },
		{ "background-load", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *csv = NULL, *only = NULL, *tests = NULL;
	double duration = 0;
	long trials = 0, rounds = 0, background = -1;
	bool quick = false;
	int c;

	while ((c = getopt_long(argc, argv, "qc:d:t:r:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': quick = true; break;
		case 'c': csv = optarg; break;
		case 'd': duration = strtod(optarg, NULL); break;
		case 't': trials = strtol(optarg, NULL, 10); break;
		case 'r': rounds = strtol(optarg, NULL, 10); break;
		case 'o': only = optarg; break;
		case 'T': tests = optarg; break;
		case 'B': background = strtol(optarg, NULL, 10); break;
		case 'h': usage(stdout); exit(0);
		default:  usage(stderr); return -1;
		}
	}
	if (optind != argc || duration < 0 || duration > 60 || trials < 0 ||
	    trials > BENCH_MAX_TRIALS || rounds < 0 || rounds > BENCH_MAX_ROUNDS ||
	    background > BENCH_MAX_BACKGROUND) {
		usage(stderr);
		return -1;
	}
	defaults(o, quick);
	if (csv)
		o->csv_path = csv;
	if (duration > 0)
		o->duration_s = duration;
	if (trials > 0)
		o->trials = (unsigned)trials;
	if (rounds > 0)
		o->rounds = (unsigned)rounds;
	if (background >= 0)
		o->background = (unsigned)background;
	o->only = only;
	o->tests = tests;
	return 0;
}

/* Is NAME an item of the comma-separated LIST (NULL: everything is)? */
static bool listed(const char *list, const char *name)
{
	size_t len = strlen(name);

	if (!list)
		return true;
	for (const char *p = list; (p = strstr(p, name)); p += len)
		if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

/* Is mechanism M selected?  The baseline always is: ratios need it. */
static bool selected(const struct options *o, const struct mech_ops *m)
{
	return m == mech_table[0] || listed(o->only, m->name);
}

static const char *test_label(enum test t)
{
	switch (t) {
	case T_CONTENDED_WORK:   return "contended-work";
	case T_CONTENDED_LOADED: return "loaded";
	case T_SCALING:          return "scaling";
	default:                 return "contended";
	}
}

static void progress(const char *what, const struct result *r)
{
	fprintf(stderr, "%-22s %-14s %5u slots %u procs\n", what, r->mech->name, r->slots, r->procs);
}

/* The run to report out of a case's rounds: a failed one if any (a broken
 * lock must not hide behind a good round), else the median throughput. */
static const struct result *pick_run(const struct result *runs, unsigned n)
{
	const struct result *sorted[BENCH_MAX_ROUNDS];

	for (unsigned i = 0; i < n; i++) {
		if (runs[i].status != ST_OK)
			return &runs[i];
		sorted[i] = &runs[i];
	}
	/* insertion sort by throughput: n is tiny */
	for (unsigned i = 1; i < n; i++)
		for (unsigned k = i; k > 0 && sorted[k]->acq_per_s < sorted[k - 1]->acq_per_s; k--) {
			const struct result *t = sorted[k];
			sorted[k] = sorted[k - 1];
			sorted[k - 1] = t;
		}
	return sorted[n / 2];
}

/* The futex hand-over floor, the median of the rounds: what any lock that
 * hands over through a sleep pays at least per acquisition. */
static void handover_floor(const struct options *o, struct control *c, struct results *rs)
{
	struct result *r = results_add(rs, T_HANDOVER, mech_table[0], 0, 2);
	double v[BENCH_MAX_ROUNDS];
	unsigned n = 0;

	for (unsigned round = 0; round < o->rounds; round++) {
		struct result one;

		result_init(&one, T_HANDOVER, mech_table[0], 0, 2);
		measure_handover(o, c, &one);
		if (one.status != ST_OK)
			r->status = one.status;
		else if (!isnan(one.latency_ns))
			v[n++] = one.latency_ns;
	}
	r->latency_ns = n ? median(v, n) : NAN;
	r->trials = n;
	fprintf(stderr, "%-22s %.2f us\n", "futex hand-over", r->latency_ns / 1e3);
}

/* Runs of one case, reduced to the run reported (pick_run) and kept. */
struct case_runs {
	struct result run[BENCH_MAX_ROUNDS];
};

/* What a series of contended cases runs. */
struct plan {
	enum test test;
	const unsigned *procs;     /* process counts, one case each         */
	unsigned nprocs;
	bool fifo_only;            /* only the FIFO locks and the baseline  */
	bool large_too;            /* libbakery in the large region too, at the first count */
	unsigned rounds;
	unsigned background;       /* CPU-bound processes at nice 19 beside each run */
};

/* The FIFO locks (every libbakery algorithm, the parking ticket lock) and
 * the baseline: the locks of the loaded and scaling cases. */
static bool fifo_or_baseline(const struct mech_ops *m)
{
	return m == mech_table[0] || m->is_bakery || !strcmp(m->name, "ticket-park");
}

/* The region of a libbakery run of PROCS processes: the small one, or two
 * slots per process when that is more (64 processes). */
static unsigned plan_slots(const struct options *o, unsigned procs)
{
	return 2 * procs > o->slots_small ? 2 * procs : o->slots_small;
}

/*
 * The plan's cases: every selected mechanism with each process count.  The
 * rounds go over all of them in turn, so that a burst of load on a shared
 * machine hits one round of each; the median run by throughput is kept.
 */
static void run_plan(const struct options *o, struct control *c, const struct plan *pl,
                     struct results *rs)
{
	static struct case_runs runs[2 * BENCH_MAX_MECHS * BENCH_MAX_PLAN];
	pid_t bg[BENCH_MAX_BACKGROUND];
	unsigned ncase = 0;

	for (unsigned round = 0; round < pl->rounds; round++) {
		ncase = 0;
		for (unsigned p = 0; p < pl->nprocs; p++)
			for (unsigned i = 0; i < mech_count; i++) {
				const struct mech_ops *m = mech_table[i];
				bool two = m->is_bakery && pl->large_too && p == 0;

				if (!selected(o, m) || (pl->fifo_only && !fifo_or_baseline(m)))
					continue;
				for (unsigned big = 0; big < (two ? 2u : 1u); big++) {
					struct result *r = &runs[ncase++].run[round];

					result_init(r, pl->test, m, big ? o->slots_large :
					            plan_slots(o, pl->procs[p]), pl->procs[p]);
					background_start(bg, pl->background);
					measure_contended(o, c, r);
					background_stop(bg, pl->background);
					progress(test_label(pl->test), r);
				}
			}
	}
	for (unsigned k = 0; k < ncase; k++) {
		const struct result *pick = pick_run(runs[k].run, pl->rounds);

		*results_add(rs, pl->test, pick->mech, pick->slots, pick->procs) = *pick;
	}
}

/* k holders: for each algorithm that counts holders and each crowd, k = 1
 * and k = o->holders_k run in alternation, round after round. */
static void holders_cases(const struct options *o, struct control *c, struct results *rs)
{
	static struct case_runs runs[BENCH_MAX_MECHS * 3 * 2];
	unsigned ncase = 0;

	for (unsigned round = 0; round < o->rounds; round++) {
		ncase = 0;
		for (unsigned i = 0; i < mech_count; i++) {
			const struct mech_ops *m = mech_table[i];

			if (!selected(o, m) || !m->counts_holders)
				continue;
			for (unsigned p = 0; p < o->nholders; p++)
				for (unsigned x = 0; x < 2; x++) {
					struct result *r = &runs[ncase++].run[round];

					result_init(r, T_HOLDERS, m, 0, o->holders_procs[p]);
					r->threads = o->holders_threads;
					r->holders = x ? o->holders_k : 1;
					measure_holders(o, c, r);
					fprintf(stderr, "%-22s %-14s k=%u %u procs x %u threads\n",
					        "holders", m->name, r->holders, r->procs, r->threads);
				}
		}
	}
	for (unsigned k = 0; k < ncase; k++) {
		const struct result *pick = pick_run(runs[k].run, o->rounds);
		struct result *r = results_add(rs, T_HOLDERS, pick->mech, 0, pick->procs);

		*r = *pick;
	}
}

static void run_all(const struct options *o, struct control *c, struct results *rs)
{
	for (unsigned round = 0; round < o->unc_runs && listed(o->tests, "uncontended"); round++) {
		fprintf(stderr, "uncontended, round %u of %u\n", round + 1, o->unc_runs);
		for (unsigned i = 0; i < mech_count; i++) {
			const struct mech_ops *m = mech_table[i];

			if (!selected(o, m))
				continue;
			measure_uncontended(o, c, m, o->slots_small, rs, false);
			/* scaling: the same lock in a large region; and a lock
			 * in which another process has slept */
			if (m->is_bakery) {
				measure_uncontended(o, c, m, o->slots_large, rs, false);
				measure_uncontended(o, c, m, o->slots_small, rs, true);
			}
		}
	}
	if (listed(o->tests, "contended") || listed(o->tests, "contended-work"))
		handover_floor(o, c, rs);
	for (unsigned p = 0; p < o->nprocs && listed(o->tests, "contended"); p++) {
		/* the libbakery algorithms in the large region at 2 processes */
		struct plan pl = { T_CONTENDED, &o->procs[p], 1, false, p == 0, o->rounds, 0 };

		run_plan(o, c, &pl, rs);
	}
	if (listed(o->tests, "contended-work")) {
		struct plan pl = { T_CONTENDED_WORK, o->procs, o->nprocs, false, false, o->rounds, 0 };

		run_plan(o, c, &pl, rs);
	}
	if (listed(o->tests, "loaded") && o->background) {
		struct plan pl = { T_CONTENDED_LOADED, &o->procs[o->nprocs - 1], 1, true, false,
		                   o->loaded_rounds, o->background };

		run_plan(o, c, &pl, rs);
	}
	if (listed(o->tests, "scaling")) {
		struct plan pl = { T_SCALING, o->scaling, o->nscaling, true, false, o->rounds, 0 };

		run_plan(o, c, &pl, rs);
	}
	if (listed(o->tests, "holders"))
		holders_cases(o, c, rs);
	for (unsigned i = 0; i < mech_count; i++) {
		const struct mech_ops *m = mech_table[i];

		if (!selected(o, m))
			continue;
		if (listed(o->tests, "blocked")) {
			measure_blocked(o, c, m, o->slots_small, rs);
			progress("blocked waiter", &rs->v[rs->n - 1]);
		}
		if (listed(o->tests, "stopped")) {
			measure_stopped(o, c, m, o->slots_small, rs);
			progress("stopped waiter", &rs->v[rs->n - 1]);
		}
		if (listed(o->tests, "recovery")) {
			measure_recovery(o, c, m, o->slots_small, rs);
			progress("recovery", &rs->v[rs->n - 1]);
		}
	}
}

int main(int argc, char **argv)
{
	struct results rs = { 0 };
	struct options o;
	struct control *c;
	int bad = 0;

	if (parse(argc, argv, &o))
		return 2;
	c = control_new();
	if (!c) {
		perror("bakery-bench: mmap");
		return 2;
	}
	/* how much of the machine others use: the reader's noise gauge */
	o.busy_start = cpus_busy(500000000);
	report_header(stdout, &o);
	run_all(&o, c, &rs);
	o.busy_end = cpus_busy(500000000);
	report_tables(stdout, &o, &rs);
	if (report_csv(o.csv_path, &o, &rs) == 0)
		printf("# CSV: %s\n", o.csv_path);
	else
		bad = 1;
	for (unsigned i = 0; i < rs.n; i++)
		if (rs.v[i].status != ST_OK && rs.v[i].status != ST_NA)
			bad = 1;
	control_free(c);
	free(rs.v);
	return bad;
}
