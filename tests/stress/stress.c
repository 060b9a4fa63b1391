/* SPDX-License-Identifier: MIT */
/*
 * stress.c - multi-process stress of every algorithm (make check).
 *
 * For each configuration, four or eight separately exec'd bakery-hammer-test
 * processes (the test build: its bound assertions abort the process if a
 * Black-White number exceeds n, or a Jayanti token its range, in a lock
 * that has seen no crash or abort) hammer one lock from a common start line.
 * Configurations: every algorithm in pure lock mode on a region with exactly
 * as many slots as hammers (n = 4: the tightest bounds, and the assertions
 * stay live because nothing aborts), every algorithm in mixed mode
 * (lock/trylock/timedlock, default slots) with eight hammers (more aborted
 * passages at once than hammers-1: Jayanti's helpers then drive chains of
 * them), and Lamport and Boulangerie participants mixed on one lock (Moses &
 * Patkin 2018, section 4).  Then asserts:
 *   - every hammer exited 0 and reported all its passages (an assertion
 *     failure is SIGABRT: a failure);
 *   - the occupancy object saw no overlap, and its lossy counter equals
 *     its atomic entry count equals the sum of acquisitions;
 *   - the library's own figures agree: acquisitions counted, no holder, no
 *     waiter, no recovery, no owner death; no abort in lock mode (so the
 *     assertions were armed throughout), some in mixed mode.
 * Finally, joining a lock with an explicit algorithm other than its own must
 * fail with BAKERY_EALGO, except Lamport with Boulangerie.
 *
 * BAKERY_STRESS_SCALE (default 1) multiplies the iteration counts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swarm.h"

#define HAMMERS 4                       /* lock mode */
#define MIXED_HAMMERS 8                 /* mixed mode */
#define HAMMER_TIMEOUT_S 120.0

struct config {
	const char *label;
	const char *algo[MIXED_HAMMERS]; /* per hammer; algo[0] creates the lock */
	const char *mode;
	unsigned hammers;
	unsigned slots;                 /* region capacity; 0: default */
	unsigned long iterations;       /* per hammer */
	unsigned gap;                   /* hammer option gap= (pauses between passages) */
};

/*
 * Iterations sized for ~1-3 s per configuration on two idle cores.  In lock
 * mode the waiters queue up and their doorways seldom meet; a random gap
 * between passages makes them meet often (with it, most of these
 * configurations catch the barrier-less mutant library too).
 */
#define GAP 50
static const struct config configs[] = {
	{ "lamport", { "lamport", "lamport", "lamport", "lamport" }, "lock", HAMMERS, HAMMERS,
	  100000, GAP },
	{ "boulangerie", { "boulangerie", "boulangerie", "boulangerie", "boulangerie" },
	  "lock", HAMMERS, HAMMERS, 100000, GAP },
	{ "black-white", { "black-white", "black-white", "black-white", "black-white" },
	  "lock", HAMMERS, HAMMERS, 100000, GAP },
	{ "jayanti", { "jayanti", "jayanti", "jayanti", "jayanti" }, "lock", HAMMERS, HAMMERS,
	  100000, GAP },
	{ "lamport+boulangerie", { "lamport", "boulangerie", "lamport", "boulangerie" },
	  "lock", HAMMERS, HAMMERS, 100000, GAP },
	/* mixed: twice the hammers, half the passages each */
	{ "lamport", { "lamport", "lamport", "lamport", "lamport", "lamport", "lamport",
	  "lamport", "lamport" }, "mixed", MIXED_HAMMERS, 0, 50000, 0 },
	{ "boulangerie", { "boulangerie", "boulangerie", "boulangerie", "boulangerie",
	  "boulangerie", "boulangerie", "boulangerie", "boulangerie" },
	  "mixed", MIXED_HAMMERS, 0, 50000, 0 },
	{ "black-white", { "black-white", "black-white", "black-white", "black-white",
	  "black-white", "black-white", "black-white", "black-white" },
	  "mixed", MIXED_HAMMERS, 0, 50000, 0 },
	/* with a gap, the aborts of different hammers interleave with each
	 * other's doorways (the chains of aborted passages above) */
	{ "jayanti", { "jayanti", "jayanti", "jayanti", "jayanti", "jayanti", "jayanti",
	  "jayanti", "jayanti" }, "mixed", MIXED_HAMMERS, 0, 20000, GAP },
	{ "lamport+boulangerie", { "boulangerie", "lamport", "boulangerie", "lamport",
	  "boulangerie", "lamport", "boulangerie", "lamport" },
	  "mixed", MIXED_HAMMERS, 0, 50000, 0 },
};

static unsigned long scale = 1;

static bool spawn_all(struct swarm *s, const struct config *c)
{
	char prog[4200], sync[32], gap[32];
	const char *const opts[] = { sync, gap, NULL };

	/* all hammers wait at the start line, then contend from the first passage */
	snprintf(sync, sizeof(sync), "sync=%u", c->hammers);
	snprintf(gap, sizeof(gap), "gap=%u", c->gap);
	swarm_prog("bakery-hammer-test", prog, sizeof(prog));
	for (unsigned i = 0; i < c->hammers; i++)
		if (swarm_spawn(s, prog, "stress", c->algo[i], c->iterations * scale, c->mode,
		                opts)) {
			perror("stress: spawn");
			return false;
		}
	return true;
}

/* The hammers' own verdicts and the occupancy object's. */
static bool check_hammers(const struct swarm *s, const struct config *c, uint64_t *sum)
{
	bool ok = !s->timed_out;
	uint64_t counter = uatomic_read(&s->occ->counter);
	uint64_t entries = uatomic_read(&s->occ->entries);
	uint64_t violations = uatomic_read(&s->occ->violations);

	if (s->timed_out)
		fprintf(stderr, "  timed out after %.0f s\n", HAMMER_TIMEOUT_S);
	*sum = 0;
	for (unsigned i = 0; i < s->n; i++) {
		if (!swarm_hammer_ok(s, i))
			ok = false;
		else if (s->acquired[i] != c->iterations * scale) {
			fprintf(stderr, "  hammer %u acquired %lu of %lu\n", i, s->acquired[i],
			        c->iterations * scale);
			ok = false;
		}
		*sum += s->acquired[i];
	}
	if (violations || counter != entries || entries != *sum) {
		fprintf(stderr, "  MUTUAL EXCLUSION: violations %llu, counter %llu, entries %llu, "
		        "acquisitions %llu\n", (unsigned long long)violations,
		        (unsigned long long)counter, (unsigned long long)entries,
		        (unsigned long long)*sum);
		ok = false;
	}
	return ok;
}

/* What the library says about the lock after the run. */
static bool check_lock(struct swarm *s, const struct config *c, uint64_t sum,
                       uint64_t *aborts)
{
	struct bakery_lock_info info;
	enum bakery_algo want;
	bakery_lock_t *l;
	unsigned index;
	bool ok, lock_mode = !strcmp(c->mode, "lock");

	if (bakery_lock_open(s->b, "stress", BAKERY_ALGO_DEFAULT, &l) ||
	    bakery_lock_index(l, &index) || bakery_lock_info(s->b, index, &info)) {
		fprintf(stderr, "  cannot read the lock's figures\n");
		return false;
	}
	bakery_lock_close(l);
	bakery_algo_parse(c->algo[0], &want);
	*aborts = info.aborts;
	ok = info.algo == want && info.acquisitions == sum && info.holder == -1 &&
	     info.waiters == 0 && !info.owner_dead && !info.not_recoverable &&
	     info.recoveries == 0 && info.owner_deaths == 0 &&
	     (lock_mode ? info.aborts == 0 : info.aborts > 0);
	if (!ok)
		fprintf(stderr, "  lock figures: algo %s acquisitions %llu (hammers %llu) "
		        "holder %d waiters %u owner_dead %d not_recoverable %d "
		        "recoveries %llu owner_deaths %llu aborts %llu (%s)\n",
		        bakery_algo_name(info.algo), (unsigned long long)info.acquisitions,
		        (unsigned long long)sum, info.holder, info.waiters, info.owner_dead,
		        info.not_recoverable, (unsigned long long)info.recoveries,
		        (unsigned long long)info.owner_deaths, (unsigned long long)info.aborts,
		        lock_mode ? "lock mode: want none" : "mixed mode: want some");
	return ok;
}

/* A fresh region for configuration INDEX, its lock made by algo[0]. */
static int prepare(struct swarm *s, const struct config *c, unsigned index)
{
	enum bakery_algo a;
	bakery_lock_t *l;
	char tag[16];
	int err;

	snprintf(tag, sizeof(tag), "%u", index);
	err = swarm_open(s, tag, c->slots);
	if (err)
		return err;
	bakery_algo_parse(c->algo[0], &a);
	err = bakery_lock_open(s->b, "stress", a, &l);
	if (err) {
		swarm_close(s);
		return err;
	}
	bakery_lock_close(l);
	return 0;
}

static bool run_config(const struct config *c, unsigned index)
{
	struct swarm s;
	uint64_t sum = 0, aborts = 0;
	bool ok;
	int err = prepare(&s, c, index);

	if (err) {
		fprintf(stderr, "stress: %s: %s\n", s.region, bakery_strerror(err));
		return false;
	}
	ok = spawn_all(&s, c);
	swarm_wait(&s, HAMMER_TIMEOUT_S, NULL);
	ok = check_hammers(&s, c, &sum) && ok;
	ok = check_lock(&s, c, sum, &aborts) && ok;
	printf("stress: %-20s %-5s %u procs %2u slots %8llu acquisitions %6.2f s %9.0f/s "
	       "aborts %6llu  %s\n", c->label, c->mode, c->hammers, c->slots ? c->slots :
	       BAKERY_DEFAULT_SLOTS, (unsigned long long)sum, s.seconds,
	       s.seconds > 0 ? (double)sum / s.seconds : 0.0, (unsigned long long)aborts,
	       ok ? "ok" : "FAILED");
	fflush(stdout);
	swarm_close(&s);
	return ok;
}

/* May a handle running JOIN take part in a lock created with HAVE? */
static bool joinable(enum bakery_algo have, enum bakery_algo join)
{
	bool lb_have = have == BAKERY_ALGO_LAMPORT || have == BAKERY_ALGO_BOULANGERIE;
	bool lb_join = join == BAKERY_ALGO_LAMPORT || join == BAKERY_ALGO_BOULANGERIE;

	return join == BAKERY_ALGO_DEFAULT || join == have || (lb_have && lb_join);
}

/* Every (creator, joiner) pair of algorithms: 0 or BAKERY_EALGO as the
 * contract says. */
static bool check_algo_joins(void)
{
	struct swarm s;
	unsigned bad = 0, pairs = 0;

	if (swarm_open(&s, "algo", 0))
		return false;
	for (int have = BAKERY_ALGO_LAMPORT; have < BAKERY_ALGO_COUNT; have++) {
		char name[32];
		bakery_lock_t *l;

		snprintf(name, sizeof(name), "join-%s", bakery_algo_name(have));
		if (bakery_lock_open(s.b, name, have, &l)) {
			bad++;
			continue;
		}
		bakery_lock_close(l);
		for (int join = BAKERY_ALGO_DEFAULT; join < BAKERY_ALGO_COUNT; join++) {
			int want = joinable(have, join) ? 0 : BAKERY_EALGO;
			int err = bakery_lock_open(s.b, name, join, &l);

			pairs++;
			if (!err)
				bakery_lock_close(l);
			if (err != want) {
				fprintf(stderr, "  lock created %s, joined %s: %s, want %s\n",
				        bakery_algo_name(have), bakery_algo_name(join),
				        bakery_strerror(err), bakery_strerror(want));
				bad++;
			}
		}
	}
	printf("stress: algorithm joins: %u pairs, %u wrong  %s\n", pairs, bad,
	       bad ? "FAILED" : "ok");
	swarm_close(&s);
	return bad == 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("BAKERY_STRESS_SCALE");
	unsigned failed = 0;

	(void)argc;
	swarm_init(argv[0]);
	if (env && strtoul(env, NULL, 10) > 0)
		scale = strtoul(env, NULL, 10);
	for (unsigned i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		failed += !run_config(&configs[i], i);
	failed += !check_algo_joins();
	if (failed)
		printf("stress: %u configuration(s) FAILED\n", failed);
	return failed ? 1 : 0;
}
