/* SPDX-License-Identifier: MIT */
/*
 * crash-points.c - SIGKILL at every stage of a passage, for every algorithm.
 *
 * With the test build, a participant sets BAKERY_CRASH_AT and dies at an
 * exact step: region creation (create-format, create-link), slot claim
 * (claim), a token taken but not yet linked or unlinked but not yet given
 * back (token-taken, token-unlinked), lock-table entry creation
 * (lock-create), doorway, doorway-color (Black-White: the colour read, no
 * ticket yet), doorway-token
 * (Jayanti: token published, gettoken still set), waiting, critical, exit,
 * proxy-finish (Jayanti: the proxy finisher of a dead passage).  Another
 * process holds the lock meanwhile, so that the victim dies with others
 * queued before and after it.  Each test checks:
 *   - every other participant, queued before or arriving after the death,
 *     gets in without any manual step, in doorway order;
 *   - mutual exclusion, through the occupancy object (not the lock);
 *   - EOWNERDEAD goes to the next acquirer exactly when the death was inside
 *     the critical section, and to nobody after it has been repaired;
 *   - the dead slot is FREE again once the survivors are through, and no
 *     slot is left in use.
 * Also: every slot of a region dead in the waiting room; a sequence the
 * model checker found against Jayanti with a plain reset of dead slots
 * (token drift).  Then random-time SIGKILLs: a victim hammering the lock is
 * killed at random moments while a survivor hammers too; each death is
 * recovered, counted as an owner death whenever the victim was inside, and
 * reported to the survivor exactly as often.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "scene.h"
#include "handle.h"         /* the header's count of threads asleep for a slot */

/* participants */
enum { H, W1, W2, V, W3, W4, V2 };

/* The slot of a dead participant: taken right after its death, before a
 * later participant may reuse the slot once it is recovered. */
static unsigned dead_slot(struct scene *s, unsigned k)
{
	return scene_slot(s, k).index;
}

/* SLOT is FREE: recovered, and anyone who reused it since is gone too. */
static void expect_free(struct scene *s, unsigned slot)
{
	struct bakery_slot_info si;

	ck_assert_int_eq(bakery_slot_info(s->b, slot, &si), 0);
	ck_assert_msg(si.state == BAKERY_SLOT_FREE, "%s: the dead slot %u is %s, not FREE",
	              bakery_algo_name(s->algo), slot,
	              si.state == BAKERY_SLOT_ACTIVE ? "ACTIVE" : "RECOVERING");
}

static void expect_counts(struct scene *s, uint64_t recoveries, uint64_t owner_deaths)
{
	struct bakery_lock_info li = crash_lock_info(s->b, s->l);

	ck_assert_msg(li.recoveries == recoveries && li.owner_deaths == owner_deaths,
	              "%s: recoveries %llu owner_deaths %llu, expected %llu and %llu",
	              bakery_algo_name(s->algo), (unsigned long long)li.recoveries,
	              (unsigned long long)li.owner_deaths, (unsigned long long)recoveries,
	              (unsigned long long)owner_deaths);
	ck_assert_msg(!li.owner_dead && !li.not_recoverable && li.holder == -1 && li.waiters == 0,
	              "%s: lock left owner_dead %d not_recoverable %d holder %d waiters %u",
	              bakery_algo_name(s->algo), li.owner_dead, li.not_recoverable,
	              li.holder, li.waiters);
}

static void expect_rc(struct scene *s, unsigned k, int want)
{
	int rc = s->sh->part[k].rc;

	ck_assert_msg(rc == want, "%s: participant %u got %s, expected %s",
	              bakery_algo_name(s->algo), k, bakery_strerror(rc), bakery_strerror(want));
}

/* K got in before M (doorway FIFO) */
static void expect_before(struct scene *s, unsigned k, unsigned m)
{
	ck_assert_msg(s->sh->part[k].order < s->sh->part[m].order,
	              "%s: participant %u (order %llu) after %u (order %llu)",
	              bakery_algo_name(s->algo), k, (unsigned long long)s->sh->part[k].order,
	              m, (unsigned long long)s->sh->part[m].order);
}

/* The victim V is dead, not yet recovered, and died at stage PASS. */
static void expect_dead_at(struct scene *s, enum bakery_pass_state pass)
{
	struct bakery_slot_info si = scene_slot(s, V);

	ck_assert_msg(si.state == BAKERY_SLOT_ACTIVE && si.alive == 0 && si.pass == pass,
	              "%s: dead slot %u: state %d alive %d pass %d, expected ACTIVE, 0, %d",
	              bakery_algo_name(s->algo), si.index, si.state, si.alive, si.pass, pass);
}

/*
 * H holds; W1 queues; V dies at POINT on its way in; W2 arrives after the
 * death; H lets go.  W1 and W2 get in, in order, neither told EOWNERDEAD.
 */
static void death_on_the_way_in(enum bakery_algo algo, const char *point,
                                enum bakery_pass_state pass)
{
	struct scene s;
	unsigned vs;

	scene_open(&s, point, algo, 8);
	scene_start(&s, H, NULL, 1);
	scene_wait_holding(&s, H);
	scene_start(&s, W1, NULL, 0);
	scene_wait_waiting(&s, W1);
	scene_start(&s, V, point, 0);
	scene_expect_exit(&s, V, CRASH_SIGKILLED);
	expect_dead_at(&s, pass);
	vs = dead_slot(&s, V);
	scene_start(&s, W2, NULL, 0);
	scene_wait_waiting(&s, W2);
	scene_release(&s, H);
	scene_expect_exit(&s, H, 0);
	scene_expect_exit(&s, W1, 0);
	scene_expect_exit(&s, W2, 0);
	expect_rc(&s, W1, 0);
	expect_rc(&s, W2, 0);
	expect_before(&s, H, W1);
	expect_before(&s, W1, W2);
	scene_expect_exclusion(&s, 3);
	expect_counts(&s, 1, 0);
	expect_free(&s, vs);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}

START_TEST(test_doorway)
{
	death_on_the_way_in(SCENE_ALGO(_i), "doorway", BAKERY_PASS_DOORWAY);
}
END_TEST

START_TEST(test_waiting)
{
	death_on_the_way_in(SCENE_ALGO(_i), "waiting", BAKERY_PASS_WAITING);
}
END_TEST

/* Jayanti only: the token is published, gettoken still set, X not written:
 * the passage must be completed by proxy, not reset. */
START_TEST(test_doorway_token)
{
	death_on_the_way_in(BAKERY_ALGO_JAYANTI, "doorway-token", BAKERY_PASS_DOORWAY);
}
END_TEST

/* Black-White only: the colour read, no ticket read yet. */
START_TEST(test_doorway_color)
{
	death_on_the_way_in(BAKERY_ALGO_BLACK_WHITE, "doorway-color", BAKERY_PASS_DOORWAY);
}
END_TEST

/*
 * H holds; V queues and W1 behind it; H lets go, V gets in and dies there;
 * W1, woken by the death, is told EOWNERDEAD and repairs; W2, arriving after
 * the death, is not told.  Then the same without contention: V2 takes the
 * free lock and dies inside; W3, arriving later, is told; W4 is not.
 */
START_TEST(test_critical)
{
	struct scene s;
	unsigned vs, v2s;

	scene_open(&s, "critical", SCENE_ALGO(_i), 8);
	scene_start(&s, H, NULL, 1);
	scene_wait_holding(&s, H);
	scene_start(&s, V, "critical", 0);
	scene_wait_waiting(&s, V);
	scene_start(&s, W1, NULL, 0);
	scene_wait_waiting(&s, W1);
	scene_release(&s, H);
	scene_expect_exit(&s, H, 0);
	scene_expect_exit(&s, V, CRASH_SIGKILLED);
	vs = dead_slot(&s, V);
	scene_start(&s, W2, NULL, 0);
	scene_expect_exit(&s, W1, 0);
	scene_expect_exit(&s, W2, 0);
	expect_rc(&s, W1, EOWNERDEAD);
	expect_rc(&s, W2, 0);
	expect_before(&s, W1, W2);
	expect_counts(&s, 1, 1);
	expect_free(&s, vs);

	scene_start(&s, V2, "critical", 0);
	scene_expect_exit(&s, V2, CRASH_SIGKILLED);
	v2s = dead_slot(&s, V2);
	scene_start(&s, W3, NULL, 0);
	scene_expect_exit(&s, W3, 0);
	scene_start(&s, W4, NULL, 0);
	scene_expect_exit(&s, W4, 0);
	expect_rc(&s, W3, EOWNERDEAD);
	expect_rc(&s, W4, 0);
	expect_counts(&s, 2, 2);
	expect_free(&s, v2s);
	scene_expect_exclusion(&s, 5);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

/* V holds; W1 queues; V unlocks and dies half-way through its exit (stage
 * already idle, ticket not yet withdrawn).  Nobody is told EOWNERDEAD. */
START_TEST(test_exit)
{
	struct scene s;
	unsigned vs;

	scene_open(&s, "exit", SCENE_ALGO(_i), 8);
	scene_start(&s, V, "exit", 1);
	scene_wait_holding(&s, V);
	scene_start(&s, W1, NULL, 0);
	scene_wait_waiting(&s, W1);
	scene_release(&s, V);
	scene_expect_exit(&s, V, CRASH_SIGKILLED);
	vs = dead_slot(&s, V);
	scene_start(&s, W2, NULL, 0);
	scene_expect_exit(&s, W1, 0);
	scene_expect_exit(&s, W2, 0);
	expect_rc(&s, W1, 0);
	expect_rc(&s, W2, 0);
	expect_before(&s, W1, W2);
	scene_expect_exclusion(&s, 3);
	expect_counts(&s, 1, 0);
	expect_free(&s, vs);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

/*
 * V dies at POINT around its slot claim, in a region of two slots: H and W1
 * then need both, so V's slot must be taken over.
 *   claim           token taken, slot not yet ACTIVE
 *   token-taken     token word taken, robust-list node not yet linked
 *   token-unlinked  node unlinked, word not yet given back (as bakery_close
 *                   gives the slot back)
 * In the last two only the list's pending entry tells the kernel about the
 * word (token.c); if it did not mark the word owner-died, the slot would
 * look owned for ever.  V_ENTRIES: V's own passages before it died.
 */
static void claim_case(const char *point, enum bakery_algo algo, unsigned v_entries)
{
	struct scene s;

	scene_open(&s, point, algo, 2);
	scene_start(&s, V, point, 0);
	scene_expect_exit(&s, V, CRASH_SIGKILLED);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_start(&s, H, NULL, 1);
	scene_wait_holding(&s, H);
	scene_start(&s, W1, NULL, 0);
	scene_wait_waiting(&s, W1);
	ck_assert_uint_eq(crash_slots_used(s.b), 2);
	scene_release(&s, H);
	scene_expect_exit(&s, H, 0);
	scene_expect_exit(&s, W1, 0);
	expect_rc(&s, H, 0);
	expect_rc(&s, W1, 0);
	scene_expect_exclusion(&s, 2 + v_entries);
	expect_counts(&s, 0, 0);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}

START_TEST(test_claim)
{
	claim_case("claim", SCENE_ALGO(_i), 0);
}
END_TEST

START_TEST(test_token_taken)
{
	claim_case("token-taken", SCENE_ALGO(_i), 0);
}
END_TEST

START_TEST(test_token_unlinked)
{
	claim_case("token-unlinked", SCENE_ALGO(_i), 1);
}
END_TEST

/*
 * Every slot of the region dead in the waiting room: a one-slot region
 * whose only participant died waiting, then a two-slot region whose two
 * participants did.  The next locker must get a slot and the lock (for
 * Jayanti the dead passages are completed by proxy before their slots are
 * free: the claimer must be able to finish them).
 */
START_TEST(test_all_slots_dead)
{
	for (unsigned slots = 1; slots <= 2; slots++) {
		unsigned dead[2];
		struct scene s;

		scene_open(&s, "all-dead", SCENE_ALGO(_i), slots);
		for (unsigned k = 0; k < slots; k++) {
			/* V, then the next index (unused here) */
			scene_start(&s, V + k, "waiting", 0);
			scene_expect_exit(&s, V + k, CRASH_SIGKILLED);
			dead[k] = dead_slot(&s, V + k);
		}
		scene_start(&s, W1, NULL, 0);
		scene_expect_exit(&s, W1, 0);
		expect_rc(&s, W1, 0);
		scene_start(&s, W2, NULL, 0);
		scene_expect_exit(&s, W2, 0);
		expect_rc(&s, W2, 0);
		scene_expect_exclusion(&s, 2);
		expect_counts(&s, slots, 0);
		for (unsigned k = 0; k < slots; k++)
			expect_free(&s, dead[k]);
		ck_assert_uint_eq(crash_slots_used(s.b), 0);
		scene_close(&s);
	}
}
END_TEST

/*
 * A sequence the model checker found against Jayanti's algorithm with a
 * plain reset of dead slots (tests/model), in a region of three slots
 * (tokens mod 5).  H holds with token 1 (X = 1); V takes token 2 and dies
 * waiting; W2 takes token 3 (V's token still there) and waits; V is
 * recovered; W1 arrives and, with V's token gone, takes 4; W2 is killed.
 * Compared around W1's pivot, token 4 is now "before" H's 1: a reset that
 * drops V's and W2's tokens lets W1 in while H still holds.  Completing the
 * dead passages by proxy keeps W1 out until H leaves.  Run for every
 * algorithm: the others' plain reset must pass it too.
 */
/* W1 of test_token_drift queued, or found no free slot yet */
static bool w1_queued(void *arg)
{
	struct scene *s = arg;
	int slot = crash_slot_of(s->b, s->pid[W1]);
	struct bakery_slot_info si;

	if (CMM_LOAD_SHARED(s->sh->part[W1].eslots) || uatomic_read(&s->b->hdr->slot_sleepers))
		return true;
	return slot >= 0 && bakery_slot_info(s->b, (unsigned)slot, &si) == 0 &&
	       si.state == BAKERY_SLOT_ACTIVE && si.pass == BAKERY_PASS_WAITING;
}

START_TEST(test_token_drift)
{
	struct scene s;
	unsigned vs, w2s;

	scene_open(&s, "drift", SCENE_ALGO(_i), 3);
	scene_start(&s, H, NULL, 1);
	scene_wait_holding(&s, H);
	scene_start(&s, V, "waiting", 0);
	scene_expect_exit(&s, V, CRASH_SIGKILLED);
	vs = dead_slot(&s, V);
	scene_start(&s, W2, NULL, 0);
	scene_wait_waiting(&s, W2);
	ck_assert_int_eq(crash_recover_in_child(s.region, NULL), 0);
	/* the only free slot may be V's, once its passage is complete:
	 * W1 waits for it (asleep for a slot) or in the lock */
	s.retry_eslots = 1;
	scene_start(&s, W1, NULL, 0);
	ck_assert_msg(tk_wait_until(w1_queued, &s, 10), "%s: W1 never tried", bakery_algo_name(s.algo));
	occupancy_doom(&s.sh->occ, s.sh->part[W2].serial);
	kill(s.pid[W2], SIGKILL);
	scene_expect_exit(&s, W2, CRASH_SIGKILLED);
	w2s = dead_slot(&s, W2);
	tk_sleep_ms(50);
	ck_assert_msg(!s.sh->part[W1].holding, "%s: W1 got in while H holds",
	              bakery_algo_name(s.algo));
	scene_release(&s, H);
	scene_expect_exit(&s, H, 0);
	scene_expect_exit(&s, W1, 0);
	expect_rc(&s, W1, 0);
	scene_expect_exclusion(&s, 2);
	expect_counts(&s, 2, 0);
	expect_free(&s, vs);
	expect_free(&s, w2s);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

/* ---------------------------------------------------- region creation -- */

/* H holds, W1 queues, both get in: the lock of S works, no death involved. */
static void lock_works(struct scene *s)
{
	s->sh = tk_shared(sizeof(*s->sh));
	scene_start(s, H, NULL, 1);
	scene_wait_holding(s, H);
	scene_start(s, W1, NULL, 0);
	scene_wait_waiting(s, W1);
	scene_release(s, H);
	scene_expect_exit(s, H, 0);
	scene_expect_exit(s, W1, 0);
	expect_rc(s, W1, 0);
	scene_expect_exclusion(s, 2);
	expect_counts(s, 0, 0);
	ck_assert_uint_eq(crash_slots_used(s->b), 0);
}

struct creator {
	char region[TK_NAME_SIZE];
};

static int create_run(void *arg)
{
	struct creator *c = arg;
	struct bakery_config cfg = { .slots = 8 };
	bakery_t *b;

	/* dies inside at the crash point; reaching the end is a failure */
	if (bakery_open(c->region, BAKERY_CREATE, &cfg, &b))
		return 1;
	return 2;
}

/*
 * A creator dies at POINT: the name must not exist (nothing half-built is
 * visible), the next creator succeeds and removes the dead one's temporary
 * object, and the region then works: H holds, W1 queues, both get in.
 */
static void creator_dies(enum bakery_algo algo, const char *point)
{
	struct creator *c = tk_shared(sizeof(*c));
	struct scene s;
	bakery_t *b;
	int st;

	tk_name(c->region, TK_NAME_SIZE, point);
	st = tk_reap(crash_fork(create_run, c, point), 10);
	ck_assert_msg(st == CRASH_SIGKILLED, "creator ended with %d", st);
	ck_assert_int_eq(bakery_open(c->region, BAKERY_NORECOVER, NULL, &b), ENOENT);

	memset(&s, 0, sizeof(s));
	s.algo = algo;
	snprintf(s.region, sizeof(s.region), "%s", c->region);
	ck_assert_int_eq(crash_create(s.region, 8, &s.b), 0);
	ck_assert_uint_eq(crash_orphans(s.region), 0);
	ck_assert_int_eq(bakery_lock_open(s.b, CRASH_LOCK, algo, &s.l), 0);
	lock_works(&s);
	scene_close(&s);
	munmap(c, sizeof(*c));
}

static int lock_create_run(void *arg)
{
	struct scene *s = arg;
	bakery_t *b;
	bakery_lock_t *l;

	/* dies inside at the crash point, holding the lock table's mutex */
	if (bakery_open(s->region, BAKERY_NORECOVER, NULL, &b))
		return 1;
	if (bakery_lock_open(b, CRASH_LOCK, s->algo, &l))
		return 2;
	return 3;
}

/* A process dies while creating a lock-table entry (holding the table's
 * robust mutex): the entry is not half-visible, the next opener creates the
 * lock without waiting, and the lock works. */
START_TEST(test_lock_create)
{
	struct bakery_region_info ri;
	struct scene s;
	int st;

	memset(&s, 0, sizeof(s));
	s.algo = SCENE_ALGO(_i);
	tk_name(s.region, TK_NAME_SIZE, "lock-create");
	ck_assert_int_eq(crash_create(s.region, 8, &s.b), 0);
	st = tk_reap(crash_fork(lock_create_run, &s, "lock-create"), 10);
	ck_assert_msg(st == CRASH_SIGKILLED, "lock creator ended with %d", st);
	ck_assert_int_eq(bakery_region_info(s.b, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 0);
	ck_assert_int_eq(bakery_lock_open(s.b, CRASH_LOCK, s.algo, &s.l), 0);
	ck_assert_int_eq(bakery_region_info(s.b, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 1);
	lock_works(&s);
	scene_close(&s);
}
END_TEST

START_TEST(test_create_format)
{
	creator_dies(SCENE_ALGO(_i), "create-format");
}
END_TEST

START_TEST(test_create_link)
{
	creator_dies(SCENE_ALGO(_i), "create-link");
}
END_TEST

/* -------------------------------------------------------- proxy finish -- */

/*
 * Jayanti: H holds; V dies waiting (token published, X not written); W
 * queues behind V.  When H lets go, W completes V's passage by proxy and
 * dies right after claiming the finish.  W2, arriving later, must finish
 * both dead passages (V's, whose finisher died, and W's own) and get in.
 */
START_TEST(test_proxy_finish)
{
	struct scene s;
	unsigned vs, ws;

	scene_open(&s, "proxy", BAKERY_ALGO_JAYANTI, 8);
	scene_start(&s, H, NULL, 1);
	scene_wait_holding(&s, H);
	scene_start(&s, V, "waiting", 0);
	scene_expect_exit(&s, V, CRASH_SIGKILLED);
	vs = dead_slot(&s, V);
	scene_start(&s, W1, "proxy-finish", 0);
	scene_wait_waiting(&s, W1);
	scene_release(&s, H);
	scene_expect_exit(&s, H, 0);
	scene_expect_exit(&s, W1, CRASH_SIGKILLED);
	ws = dead_slot(&s, W1);
	scene_start(&s, W2, NULL, 0);
	scene_expect_exit(&s, W2, 0);
	expect_rc(&s, W2, 0);
	scene_expect_exclusion(&s, 2);
	expect_counts(&s, 2, 0);
	expect_free(&s, vs);
	expect_free(&s, ws);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

/* -------------------------------------------------------- random kills -- */

#define KILL_ROUNDS 12
#define SURVIVOR_PROGRESS 50    /* passages the survivor makes after each kill */

struct hammer {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	struct occupancy *occ;
	unsigned serial;
	volatile int stop;
	volatile int in_cs;        /* between the lock's return and the unlock */
	uint64_t passes, owner_dead;
	int err;
};

struct hammers {
	struct occupancy occ;
	struct hammer survivor;
	struct hammer victim[KILL_ROUNDS];
};

static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		caa_cpu_relax();
}

static int hammer_run(void *arg)
{
	struct hammer *h = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(h->region, BAKERY_NORECOVER, NULL, &b) || bakery_lock_open(b, CRASH_LOCK, h->algo, &l))
		return 1;
	while (!CMM_LOAD_SHARED(h->stop)) {
		int rc = bakery_lock(l);

		if (rc != 0 && rc != EOWNERDEAD) {
			h->err = rc;
			return 2;
		}
		CMM_STORE_SHARED(h->in_cs, 1);
		if (rc == EOWNERDEAD) {
			uatomic_inc(&h->owner_dead);
			if (bakery_consistent(l))
				return 3;
		}
		occupancy_pass(h->occ, h->serial, CRASH_OCC_PAUSE);
		spin(500);              /* a critical section kills can land in */
		uatomic_inc(&h->passes);
		CMM_STORE_SHARED(h->in_cs, 0);
		if (bakery_unlock(l))
			return 4;
		spin(500);
	}
	if (bakery_lock_close(l) || bakery_close(b))
		return 5;
	return 0;
}

static void hammer_init(struct hammer *h, struct hammers *hs, const char *region,
                        enum bakery_algo algo, unsigned serial)
{
	snprintf(h->region, sizeof(h->region), "%s", region);
	h->algo = algo;
	h->occ = &hs->occ;
	h->serial = serial;
}

/* Wait until the survivor has made SURVIVOR_PROGRESS passages past FROM. */
static bool survivor_progress(struct hammer *survivor, uint64_t from)
{
	uint64_t end = tk_ns() + 10000000000ull;

	while (uatomic_read(&survivor->passes) < from + SURVIVOR_PROGRESS) {
		if (tk_ns() > end)
			return false;
		usleep(200);
	}
	return true;
}

/* One round: start a victim, kill it at a random moment, check the lock. */
static void kill_round(struct scene *s, struct hammers *hs, unsigned r, unsigned *in_cs_kills)
{
	struct hammer *v = &hs->victim[r];
	struct bakery_lock_info before, after;
	struct bakery_slot_info si;
	unsigned reclaimed;
	uint64_t passes;
	pid_t pid;
	int slot;

	hammer_init(v, hs, s->region, s->algo, 2 + r);
	pid = crash_fork(hammer_run, v, NULL);
	for (uint64_t end = tk_ns() + 10000000000ull; !uatomic_read(&v->passes); usleep(100))
		ck_assert_msg(tk_ns() < end, "%s: victim %u never got in", bakery_algo_name(s->algo), r);
	/* odd rounds: as soon as it is seen inside, so that some deaths
	 * surely land in the critical section; even rounds: any moment */
	if (r % 2)
		tk_wait_flag(&v->in_cs, 1, 10);
	else
		tk_sleep_ms((double)(rand() % 3000) / 1000.0);
	before = crash_lock_info(s->b, s->l);
	passes = uatomic_read(&hs->survivor.passes);
	occupancy_doom(&hs->occ, v->serial);
	kill(pid, SIGKILL);
	ck_assert_int_eq(tk_reap(pid, 10), CRASH_SIGKILLED);
	slot = crash_slot_of(s->b, pid);
	ck_assert_msg(survivor_progress(&hs->survivor, passes),
	              "%s: the survivor made no progress after kill %u", bakery_algo_name(s->algo), r);
	after = crash_lock_info(s->b, s->l);
	/* a death inside is an owner death; one outside may be (the stage is
	 * set a little before the lock returns and cleared a little after the
	 * unlock call), but never more than one */
	ck_assert_msg(after.owner_deaths - before.owner_deaths <= 1, "owner deaths jumped");
	if (v->in_cs) {
		++*in_cs_kills;
		ck_assert_msg(after.owner_deaths == before.owner_deaths + 1,
		              "%s: victim killed inside, no owner death recorded", bakery_algo_name(s->algo));
	}
	/* the dead slot is freed, by the survivor or else by a recovery */
	ck_assert_int_eq(crash_recover_in_child(s->region, &reclaimed), 0);
	ck_assert_msg(slot >= 0, "victim had no slot");
	ck_assert_int_eq(bakery_slot_info(s->b, (unsigned)slot, &si), 0);
	/* FREE, or freed and claimed since by the recovering child */
	ck_assert_msg(si.state == BAKERY_SLOT_FREE || si.pid != pid,
	              "%s: the victim's slot %d is not freed", bakery_algo_name(s->algo), slot);
}

START_TEST(test_random_kill)
{
	struct hammers *hs;
	struct bakery_lock_info li;
	unsigned in_cs_kills = 0;
	struct scene s;
	pid_t survivor;

	srand((unsigned)getpid());
	scene_open(&s, "random", SCENE_ALGO(_i), 8);
	hs = tk_shared(sizeof(*hs));
	hammer_init(&hs->survivor, hs, s.region, s.algo, 1);
	survivor = crash_fork(hammer_run, &hs->survivor, NULL);
	for (unsigned r = 0; r < KILL_ROUNDS; r++)
		kill_round(&s, hs, r, &in_cs_kills);
	CMM_STORE_SHARED(hs->survivor.stop, 1);
	ck_assert_int_eq(tk_reap(survivor, 10), 0);
	li = crash_lock_info(s.b, s.l);
	fprintf(stderr, "%s: random kills %u (inside %u), owner deaths %llu, survivor "
	        "passes %llu, told EOWNERDEAD %llu, stale holders %llu\n",
	        bakery_algo_name(s.algo), KILL_ROUNDS, in_cs_kills,
	        (unsigned long long)li.owner_deaths, (unsigned long long)hs->survivor.passes,
	        (unsigned long long)hs->survivor.owner_dead, (unsigned long long)hs->occ.stale);
	ck_assert_msg(hs->occ.violations == 0, "%s: %llu overlaps", bakery_algo_name(s.algo),
	              (unsigned long long)hs->occ.violations);
	ck_assert(hs->occ.counter >= hs->occ.entries &&
	          hs->occ.counter <= hs->occ.entries + KILL_ROUNDS);
	/* every recorded owner death was reported to the next acquirer, the
	 * survivor (victims start only after the survivor went through) */
	ck_assert_uint_eq(hs->survivor.owner_dead, li.owner_deaths);
	ck_assert_uint_eq(li.recoveries, KILL_ROUNDS);
	ck_assert(!li.owner_dead && !li.not_recoverable);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	munmap(hs, sizeof(*hs));
	scene_close(&s);
}
END_TEST

/* ---------------------------------------------------------------- main -- */

static Suite *suite(void)
{
	Suite *su = suite_create("crash-points");
	TCase *tc = tcase_create("stages");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_doorway, 0, CRASH_NALGOS);
	tcase_add_test(tc, test_doorway_token);
	tcase_add_test(tc, test_doorway_color);
	tcase_add_loop_test(tc, test_waiting, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_critical, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_exit, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_claim, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_token_taken, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_token_unlinked, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_all_slots_dead, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_token_drift, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_create_format, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_create_link, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_lock_create, 0, CRASH_NALGOS);
	tcase_add_test(tc, test_proxy_finish);
	suite_add_tcase(su, tc);

	tc = tcase_create("random");
	tcase_set_timeout(tc, 90);
	tcase_add_loop_test(tc, test_random_kill, 0, CRASH_NALGOS);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	return scene_run(suite());
}
