/* SPDX-License-Identifier: MIT */
/*
 * test_registers.c - a participant that writes garbage into its own
 * registers.  Checked: the library never crashes and never reads or writes
 * outside the mapping; honest participants keep mutual exclusion and make
 * progress, and the garbage goes away with its writer's death.
 *
 *   huge number (alive)      a ticket number far beyond any real one, in
 *                            the current colour: it is behind every honest
 *                            ticket, so a trylock gets in at once, and an
 *                            honest ticket taken over it is clamped at
 *                            2^62 instead of wrapping to 0
 *   choosing stuck at 1      an honest waiter waits (trylock: EBUSY) until
 *     then death             the writer dies, then gets the lock (0: it was
 *                            not in the critical section)
 *   stage out of range       introspection reports a valid stage, the lock
 *                            shows no holder and no waiter, trylock gets in
 *   stage = critical and a   the recoverer takes it for a holder's death:
 *     ticket, then death     the next acquirer gets EOWNERDEAD
 *
 * The garbage is written through a raw mapping of the object (hostile.h),
 * by a real participant process into its own slot's registers.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "hostile.h"

#define NUMBER_LIMIT (UINT64_C(1) << 62)        /* lib/algo/common.h */

/* What the scribbler writes into its registers of lock "r". */
struct scribble {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	uint32_t choosing, stage;
	uint64_t number;
	int same_colour;           /* Black-White: put the lock's colour in bit 63 */
	int die;                   /* SIGKILL itself DIE_MS after writing */
	struct tk_gate ready, release;
};

#define DIE_MS 300

/* A participant: one honest passage (it now owns a slot and has joined the
 * lock), then garbage into its registers; stays until released or dies. */
static int scribbler(void *arg)
{
	struct scribble *s = arg;
	struct bakery_shm_reg *reg;
	struct raw raw;
	bakery_t *b;
	bakery_lock_t *l;
	unsigned idx;
	int slot;

	if (bakery_open(s->region, 0, NULL, &b) || bakery_lock_open(b, "r", s->algo, &l) ||
	    bakery_lock(l) || bakery_unlock(l))
		return 10;
	slot = tk_self_slot(b);
	if (slot < 0)
		return 11;
	idx = h_lock_index(l);
	raw_map(&raw, s->region);
	reg = raw_reg(&raw, idx, (unsigned)slot);
	if (s->same_colour)
		s->number |= (uint64_t)(CMM_LOAD_SHARED(raw.locks[idx].color) & 1) << 63;
	CMM_STORE_SHARED(reg->number, s->number);
	CMM_STORE_SHARED(reg->choosing, s->choosing);
	CMM_STORE_SHARED(reg->stage, s->stage);
	cmm_smp_mb();
	tk_gate_open(&s->ready);
	if (s->die) {
		usleep(DIE_MS * 1000);
		raise(SIGKILL);
	}
	tk_gate_wait(&s->release, 30);
	return 0;
}

/* Start a scribbler on REGION and wait until its garbage is in place. */
static pid_t scribbler_start(struct scribble *s)
{
	pid_t pid;

	tk_gate_init(&s->ready);
	tk_gate_init(&s->release);
	pid = tk_fork(scribbler, s);
	ck_assert_msg(tk_gate_wait(&s->ready, 10), "the scribbler never got ready");
	return pid;
}

static struct scribble *scribble_new(bakery_t **b, bakery_lock_t **l, enum bakery_algo algo)
{
	struct scribble *s = tk_shared(sizeof(*s));

	*b = h_region(s->region, "reg", 4, 2);
	*l = h_lock(*b, "r", algo);
	s->algo = algo;
	return s;
}

/* ------------------------------------------------------------------ tests -- */

/* Lamport, Boulangerie, Black-White: a huge ticket is behind ours. */
START_TEST(huge_number_is_behind_honest_tickets)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	bakery_t *b;
	bakery_lock_t *l;
	struct scribble *s = scribble_new(&b, &l, algo);
	struct raw raw;
	pid_t pid;
	int me, them;
	unsigned reclaimed;

	s->number = algo == BAKERY_ALGO_BLACK_WHITE ? (UINT64_C(1) << 63) - 1 : UINT64_MAX;
	s->same_colour = algo == BAKERY_ALGO_BLACK_WHITE;
	pid = scribbler_start(s);
	them = tk_slot_of(b, pid, pid);
	ck_assert_int_ge(them, 0);

	ck_assert_int_eq(bakery_trylock(l), 0);
	me = tk_self_slot(b);
	raw_map(&raw, s->region);
	/* our ticket, taken over theirs, is clamped (no wrap to 0 or to 1) */
	if (algo != BAKERY_ALGO_BLACK_WHITE)
		ck_assert_uint_eq(CMM_LOAD_SHARED(raw_reg(&raw, h_lock_index(l), (unsigned)me)->number),
		                  NUMBER_LIMIT);
	ck_assert_int_eq(bakery_unlock(l), 0);

	tk_gate_open(&s->release);
	ck_assert_int_eq(tk_reap(pid, 10), 0);
	/* it exited without giving its slot back: proven dead, reclaimed */
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 1);
	ck_assert_uint_eq(CMM_LOAD_SHARED(raw_reg(&raw, h_lock_index(l), (unsigned)them)->number), 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* Every algorithm: choosing stuck at 1 holds honest waiters until death. */
START_TEST(choosing_stuck_then_death)
{
	bakery_t *b;
	bakery_lock_t *l;
	struct scribble *s = scribble_new(&b, &l, (enum bakery_algo)_i);
	struct timespec deadline;
	double t0;
	pid_t pid;

	s->choosing = 1;
	s->number = UINT64_C(0xdeadbeefcafe);
	s->stage = BAKERY_PASS_DOORWAY;
	s->die = 1;
	pid = scribbler_start(s);
	t0 = tk_now(CLOCK_MONOTONIC);
	/* (a Jayanti trylock abort here is bug-jayanti-abort.c) */
	if (_i != BAKERY_ALGO_JAYANTI)
		ck_assert_int_eq(bakery_trylock(l), EBUSY);
	deadline = tk_in(CLOCK_REALTIME, 10);
	ck_assert_int_eq(bakery_timedlock(l, &deadline), 0);
	/* it had to wait for the death (DIE_MS after the garbage) */
	ck_assert_msg(tk_now(CLOCK_MONOTONIC) - t0 > DIE_MS / 2000.0, "entered while choosing was stuck");
	ck_assert_int_eq(tk_reap(pid, 10), 128 + SIGKILL);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(stage_out_of_range_is_not_shown)
{
	bakery_t *b;
	bakery_lock_t *l;
	struct scribble *s = scribble_new(&b, &l, (enum bakery_algo)_i);
	struct bakery_slot_info si;
	struct bakery_lock_info li;
	pid_t pid;
	int them;

	s->stage = 0xdeadbeefu;
	pid = scribbler_start(s);
	them = tk_slot_of(b, pid, pid);
	ck_assert_int_ge(them, 0);
	ck_assert_int_eq(bakery_slot_info(b, (unsigned)them, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_ACTIVE);
	ck_assert_int_eq(si.alive, 1);
	ck_assert_int_le(si.pass, BAKERY_PASS_CRITICAL);
	ck_assert_int_eq(bakery_lock_info(b, h_lock_index(l), &li), 0);
	ck_assert_int_eq(li.holder, -1);
	ck_assert_uint_eq(li.waiters, 0);
	ck_assert_int_eq(bakery_trylock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	tk_gate_open(&s->release);
	ck_assert_int_eq(tk_reap(pid, 10), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* A death with stage = critical reads as a holder's death: the next
 * acquirer is told EOWNERDEAD (what a hostile stage write costs: a spurious
 * repair, never a crash). */
START_TEST(scribbled_critical_stage_then_death)
{
	bakery_t *b;
	bakery_lock_t *l;
	struct scribble *s = scribble_new(&b, &l, (enum bakery_algo)_i);
	pid_t pid;

	s->stage = BAKERY_PASS_CRITICAL;
	s->number = 1;             /* a ticket, as a holder has */
	s->same_colour = _i == BAKERY_ALGO_BLACK_WHITE;
	s->die = 1;
	pid = scribbler_start(s);
	ck_assert_int_eq(tk_reap(pid, 10), 128 + SIGKILL);
	ck_assert_int_eq(bakery_lock(l), EOWNERDEAD);
	ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

static Suite *registers_suite(void)
{
	Suite *s = suite_create("hostile registers");
	TCase *tc = tcase_create("own registers");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, huge_number_is_behind_honest_tickets,
	                    BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BLACK_WHITE + 1);
	tcase_add_loop_test(tc, choosing_stuck_then_death, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, stage_out_of_range_is_not_shown, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, scribbled_critical_stage_then_death, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return h_run_suite(registers_suite());
}
