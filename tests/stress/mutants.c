/* SPDX-License-Identifier: MIT */
/*
 * mutants.c - the barriers matter: the occupancy check catches the library
 * built without them (bakery-aligned-mutant: store_mb() a plain store
 * instead of a store with a full barrier), and catches nothing in the real
 * library (bakery-aligned), in aligned trials (aligned.c).
 *
 * x86-64 reorders a store with a later load of another location, and that
 * is exactly what store_mb() forbids in every doorway: without it two
 * threads can each read the other's ticket as 0 and both enter.  The
 * window is a few nanoseconds, so the trials are aligned: two threads on
 * two CPUs meet at a barrier and then each run one passage, so that every
 * trial is a collision of two doorways.
 *
 * The verdict must not depend on the machine or its load, so the mutant's
 * budget is not a time but evidence measured in the same run: its lock
 * trials are interleaved with trials of the raw store-buffering litmus
 * test, and the mutant fails to be caught only if the litmus test has shown
 * the reordering EVIDENCE times meanwhile.  How many litmus reorderings it
 * takes to catch each mutant was surveyed (make check-mutants, which prints
 * the distribution): on the reference machine the worst of 60 runs per
 * algorithm was 2,286 (Black-White; the medians were 0-125), so EVIDENCE =
 * 100,000 leaves a margin of over 40x over the worst and 800x over the
 * median, and costs only the time of a real failure (about 4 s here).  Where the hardware shows fewer than EVIDENCE reorderings within
 * MAX_TRIALS lock trials or MAX_SECONDS, it cannot tell a missing barrier
 * from luck, and the mutant half is skipped with the measured rate.
 *
 *   bakery-mutants [--survey [--runs N]] [--algo NAME] [--real-trials N]
 *
 * Plain (make check): per algorithm, the mutant half as above, and a real
 * half of REAL_TRIALS aligned trials that must show no overlap and an exact
 * counter.  Exit 0 when every mutant is caught (or judged impossible to
 * catch here) and every real half is clean; 77 when no mutant could be
 * judged but the real halves were clean; 1 otherwise.  Skips (77) with fewer
 * than two CPUs.
 * --survey (make check-mutants): RUNS (20) mutant runs per algorithm without
 * the evidence limit, printing how many litmus reorderings each catch took.
 *
 * Under AddressSanitizer only the real halves run: its instrumentation of
 * the doorway (not of the litmus test's two accesses) moves the window, and
 * there the mutant needed up to 90,000 litmus reorderings, or more than 60 s
 * (plain builds judge the mutants: make check and make distcheck).
 *
 * The test needs two CPUs to itself to be quick, so make check runs it
 * after every other test (tests/stress/local.mk); its verdict holds under
 * load either way.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bakery.h"
#include "../common/tk.h"
#include "swarm.h"

#define EVIDENCE      "100000"
#define MAX_TRIALS    "50000000"
#define MAX_SECONDS   "60"
#define REAL_TRIALS   "300000"
#define RUN_DEADLINE  300.0     /* kill a trial program that hangs */

/* Run tests/stress/PROG ARGS...; its exit status, or -1 if it did not exit
 * by itself within the deadline (it is killed) or could not be started. */
static int run(const char *prog, const char *const *args)
{
	char path[4200];
	const char *argv[8] = { path };
	pid_t pid;
	int st;

	swarm_prog(prog, path, sizeof(path));
	for (int i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	fflush(stdout);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(path, (char *const *)argv);
		fprintf(stderr, "mutants: %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	st = tk_reap(pid, RUN_DEADLINE);
	if (st < 0 || st >= 128) {
		printf("mutants: %s %s %s: %s\n", prog, args[0], args[1] ? args[1] : "",
		       st == TK_KILLED ? "HUNG, killed" : "died or lost");
		return -1;
	}
	return st;
}

struct tally {
	unsigned caught, unjudged, failed;
};

#if defined(__SANITIZE_ADDRESS__)
#define MUTANT_JUDGED 0
#else
#define MUTANT_JUDGED 1
#endif

static void one_algorithm(const char *algo, const char *real_trials, struct tally *t)
{
	const char *mutant[] = { "mutant", algo, EVIDENCE, MAX_TRIALS, MAX_SECONDS, NULL };
	const char *real[] = { "real", algo, real_trials, NULL };
	int st = 77;

	if (MUTANT_JUDGED)
		st = run("bakery-aligned-mutant", mutant);
	else
		printf("mutant %-12s not judged under AddressSanitizer\n", algo);
	if (st == 0)
		t->caught++;
	else if (st == 77)
		t->unjudged++;
	else
		t->failed++;
	t->failed += run("bakery-aligned", real) != 0;
}

static void survey(const char *algo, unsigned runs)
{
	const char *mutant[] = { "mutant", algo, "1000000000", MAX_TRIALS, MAX_SECONDS, NULL };

	for (unsigned r = 0; r < runs; r++)
		run("bakery-aligned-mutant", mutant);
}

int main(int argc, char **argv)
{
	const char *only = NULL, *real_trials = REAL_TRIALS;
	const char *litmus[] = { "litmus", "100000", NULL };
	unsigned runs = 20;
	bool surveying = false;
	struct tally t = { 0 };
	enum bakery_algo a;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--survey"))
			surveying = true;
		else if (v && !strcmp(argv[i], "--runs") && ++i)
			runs = (unsigned)strtoul(v, NULL, 10);
		else if (v && !strcmp(argv[i], "--real-trials") && ++i)
			real_trials = v;
		else if (v && !strcmp(argv[i], "--algo") && ++i && !bakery_algo_parse(v, &a) &&
		         a != BAKERY_ALGO_DEFAULT)
			only = v;
		else {
			fprintf(stderr, "usage: %s [--survey [--runs N]] [--algo NAME] "
			        "[--real-trials N]\n", argv[0]);
			return 99;
		}
	}
	swarm_init(argv[0]);
	/* a first look at the hardware (and the two-CPU check: 77 if not) */
	if (run("bakery-aligned", litmus) == 77)
		return 77;
	for (int i = BAKERY_ALGO_LAMPORT; i < BAKERY_ALGO_COUNT; i++) {
		const char *name = bakery_algo_name((enum bakery_algo)i);

		if (only && strcmp(only, name))
			continue;
		if (surveying)
			survey(name, runs);
		else
			one_algorithm(name, real_trials, &t);
	}
	if (surveying)
		return 0;
	printf("mutants: %u caught, %u not judged, %u failed\n", t.caught, t.unjudged,
	       t.failed);
	if (t.failed)
		return 1;
	return t.caught ? 0 : 77;
}
