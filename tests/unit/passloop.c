/* SPDX-License-Identifier: MIT */
/*
 * passloop.c - uncontended passages for an instruction count: for each
 * subject (an algorithm in a mode, in a region of a number of slots, and a
 * robust pthread mutex for comparison), one process takes and releases the
 * lock PASSES_SHORT times, then PASSES_LONG times, each run in one call of
 * measured_passes().  Under `valgrind --tool=callgrind --dump-before=
 * measured_passes --dump-after=measured_passes` every run is a dump of its
 * own, and (long - short) / (PASSES_LONG - PASSES_SHORT) is the cost of one
 * lock+unlock with everything else (setup, first calls, the dumps' own
 * edges) cancelled.  The loop alone (two calls that do nothing) is a
 * subject too, so that a reader can take its cost off the others'.  test-instructions.sh does that and holds the counts to
 * their budget.
 *
 *   passloop            every subject, in order
 *   passloop NAME...    only those ("black-white/exclusive/64", ...)
 *
 * Prints one line per subject run, "NAME PASSES_SHORT PASSES_LONG", in the
 * order of the runs (two dumps each), or "NAME error: ..." and exits 1 when
 * a call failed: a count of a call that returned an error early would be
 * a count of the wrong path.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bakery.h"
#include "../common/tk.h"

#define PASSES_WARM  1000       /* claim the slot, join the set, warm caches */
#define PASSES_SHORT 1000
#define PASSES_LONG  3000
#define HOLDERS_K    2          /* the k of the k-holder subjects */

enum kind { EXCLUSIVE, SHARED, HOLDERS, BIASED, MUTEX, NOTHING };

static const char *const kind_names[] = { "exclusive", "shared", "k-holder", "biased", "-", "-" };

struct subject {
	const char *algo_name;
	enum bakery_algo algo;
	enum kind kind;
	unsigned slots;
};

static const struct subject subjects[] = {
	{ "loop-alone", BAKERY_ALGO_DEFAULT, NOTHING, 0 },
	{ "robust-mutex", BAKERY_ALGO_DEFAULT, MUTEX, 0 },
	{ "lamport", BAKERY_ALGO_LAMPORT, EXCLUSIVE, 64 },
	{ "lamport", BAKERY_ALGO_LAMPORT, EXCLUSIVE, 1024 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, EXCLUSIVE, 64 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, EXCLUSIVE, 1024 },
	{ "black-white", BAKERY_ALGO_BLACK_WHITE, EXCLUSIVE, 64 },
	{ "black-white", BAKERY_ALGO_BLACK_WHITE, EXCLUSIVE, 1024 },
	{ "jayanti", BAKERY_ALGO_JAYANTI, EXCLUSIVE, 64 },
	{ "jayanti", BAKERY_ALGO_JAYANTI, EXCLUSIVE, 1024 },
	{ "lamport", BAKERY_ALGO_LAMPORT, SHARED, 64 },
	{ "lamport", BAKERY_ALGO_LAMPORT, SHARED, 1024 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, SHARED, 64 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, SHARED, 1024 },
	{ "black-white", BAKERY_ALGO_BLACK_WHITE, SHARED, 64 },
	{ "black-white", BAKERY_ALGO_BLACK_WHITE, SHARED, 1024 },
	{ "lamport", BAKERY_ALGO_LAMPORT, HOLDERS, 64 },
	{ "lamport", BAKERY_ALGO_LAMPORT, HOLDERS, 1024 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, HOLDERS, 64 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, HOLDERS, 1024 },
	{ "lamport", BAKERY_ALGO_LAMPORT, BIASED, 64 },
	{ "lamport", BAKERY_ALGO_LAMPORT, BIASED, 1024 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, BIASED, 64 },
	{ "boulangerie", BAKERY_ALGO_BOULANGERIE, BIASED, 1024 },
};

/* What one run takes and releases. */
struct target {
	enum kind kind;
	bakery_lock_t *lock;
	pthread_mutex_t *mutex;
};

/* The loop's own cost: two calls that do nothing. */
__attribute__((noinline)) static int pass_nothing(const struct target *t)
{
	__asm__ volatile("" : : "r"(t) : "memory");
	return 0;
}

/* The measured loop: N lock+unlock, and the number that failed.  Not
 * static, not inlined: callgrind finds it by this name. */
unsigned long measured_passes(const struct target *t, unsigned long n);

__attribute__((noinline)) unsigned long measured_passes(const struct target *t, unsigned long n)
{
	unsigned long failed = 0;

	for (unsigned long i = 0; i < n; i++) {
		switch (t->kind) {
		case SHARED:
			failed += bakery_rdlock(t->lock) != 0;
			failed += bakery_unlock(t->lock) != 0;
			break;
		case MUTEX:
			failed += pthread_mutex_lock(t->mutex) != 0;
			failed += pthread_mutex_unlock(t->mutex) != 0;
			break;
		case NOTHING:
			failed += pass_nothing(t) != 0;
			failed += pass_nothing(t) != 0;
			break;
		default:
			failed += bakery_lock(t->lock) != 0;
			failed += bakery_unlock(t->lock) != 0;
			break;
		}
	}
	return failed;
}

static void subject_name(const struct subject *s, char *buf, size_t size)
{
	if (s->kind == MUTEX || s->kind == NOTHING)
		snprintf(buf, size, "%s", s->algo_name);
	else
		snprintf(buf, size, "%s/%s/%u", s->algo_name, kind_names[s->kind], s->slots);
}

/* The three runs on T; 0, or 1 after saying what failed. */
static int runs(const char *name, const struct target *t)
{
	unsigned long failed = measured_passes(t, PASSES_WARM);

	failed += measured_passes(t, PASSES_SHORT);
	failed += measured_passes(t, PASSES_LONG);
	if (failed) {
		printf("%s error: %lu lock or unlock calls failed\n", name, failed);
		return 1;
	}
	printf("%s %u %u\n", name, PASSES_SHORT, PASSES_LONG);
	return 0;
}

static int run_mutex(const char *name)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	struct target t = { MUTEX, NULL, &m };
	int rc;

	/* as bakery-bench's baseline: robust and process-shared */
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m, &a);
	pthread_mutexattr_destroy(&a);
	rc = runs(name, &t);
	pthread_mutex_destroy(&m);
	return rc;
}

static int run_subject(const struct subject *s)
{
	struct bakery_config cfg = { .slots = s->slots };
	struct bakery_lock_config lc = { .algo = s->algo, .holders = s->kind == HOLDERS ? HOLDERS_K : 0,
	                                 .flags = s->kind == BIASED ? BAKERY_LOCK_BIASED : 0 };
	struct target t = { s->kind, NULL, NULL };
	char name[64], region[TK_NAME_SIZE];
	bakery_t *b;
	int err, rc;

	subject_name(s, name, sizeof(name));
	if (s->kind == NOTHING)
		return runs(name, &t);
	if (s->kind == MUTEX)
		return run_mutex(name);
	tk_name(region, sizeof(region), "passloop");
	err = bakery_open(region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b);
	if (!err)
		err = bakery_lock_open_config(b, "passloop", &lc, &t.lock);
	if (err) {
		printf("%s error: %s\n", name, bakery_strerror(err));
		return 1;
	}
	rc = runs(name, &t);
	bakery_lock_close(t.lock);
	bakery_close(b);
	bakery_unlink(region);
	return rc;
}

static bool wanted(const struct subject *s, int argc, char **argv)
{
	char name[64];

	if (argc < 2)
		return true;
	subject_name(s, name, sizeof(name));
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	int rc = 0;

	tk_run_begin();
	for (size_t i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++)
		if (wanted(&subjects[i], argc, argv))
			rc |= run_subject(&subjects[i]);
	tk_run_end();
	return rc;
}
