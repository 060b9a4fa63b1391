/* SPDX-License-Identifier: MIT */
/*
 * unit.c - helpers shared by the Check unit suites (see unit.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

/* ------------------------------------------------------------- regions -- */

bakery_t *unit_region(char *name, const char *tag, unsigned slots, unsigned locks)
{
	struct bakery_config cfg = { .slots = slots, .locks = locks };
	bakery_t *b = NULL;
	int rc;

	tk_name(name, TK_NAME_SIZE, tag);
	rc = bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b);
	ck_assert_msg(rc == 0, "creating %s: %s", name, bakery_strerror(rc));
	return b;
}

bakery_lock_t *unit_lock(bakery_t *b, const char *lock, enum bakery_algo algo)
{
	bakery_lock_t *l = NULL;
	int rc = bakery_lock_open(b, lock, algo, &l);

	ck_assert_msg(rc == 0, "opening lock %s (%s): %s", lock,
	              bakery_algo_name(algo), bakery_strerror(rc));
	return l;
}

void unit_shm_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "/dev/shm/%s", name[0] == '/' ? name + 1 : name);
}

/* ------------------------------------------------------------- fixture -- */

void unit_fixture_open_config(struct unit_fixture *f, const char *tag, unsigned slots,
                              unsigned locks, const char *lock,
                              const struct bakery_lock_config *cfg)
{
	int rc;

	memset(f, 0, sizeof(*f));
	f->lock = lock;
	f->algo = cfg->algo;
	f->holders = cfg->holders;
	f->b = unit_region(f->name, tag, slots, locks);
	rc = bakery_lock_open_config(f->b, lock, cfg, &f->l);
	ck_assert_msg(rc == 0, "opening lock %s (%s, %u holders): %s", lock,
	              bakery_algo_name(cfg->algo), cfg->holders, bakery_strerror(rc));
	ck_assert_int_eq(bakery_lock_index(f->l, &f->index), 0);
}

void unit_fixture_open(struct unit_fixture *f, const char *tag, unsigned slots,
                       unsigned locks, const char *lock, enum bakery_algo algo)
{
	const struct bakery_lock_config cfg = { .algo = algo };

	unit_fixture_open_config(f, tag, slots, locks, lock, &cfg);
}

void unit_fixture_close(struct unit_fixture *f)
{
	ck_assert_int_eq(bakery_lock_close(f->l), 0);
	ck_assert_int_eq(bakery_close(f->b), 0);
	ck_assert_int_eq(bakery_unlink(f->name), 0);
}

struct bakery_lock_info unit_lock_info(bakery_t *b, unsigned index)
{
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	return li;
}

struct bakery_lock_info unit_fixture_info(const struct unit_fixture *f)
{
	return unit_lock_info(f->b, f->index);
}

struct bakery_slot_info unit_slot_info(bakery_t *b, int slot)
{
	struct bakery_slot_info si;

	ck_assert_int_ge(slot, 0);
	ck_assert_int_eq(bakery_slot_info(b, (unsigned)slot, &si), 0);
	return si;
}

/* -------------------------------------------------------------- holder -- */

static void *holder_main(void *arg)
{
	struct unit_holder *h = arg;

	h->lock_rc = bakery_lock(h->lock);
	tk_gate_open(&h->held);
	tk_gate_wait(&h->release, 60);
	h->unlock_rc = bakery_unlock(h->lock);
	return NULL;
}

void unit_holder_start(struct unit_holder *h, bakery_lock_t *lock)
{
	h->lock = lock;
	h->lock_rc = h->unlock_rc = -1;
	tk_gate_init(&h->held);
	tk_gate_init(&h->release);
	ck_assert_int_eq(pthread_create(&h->thread, NULL, holder_main, h), 0);
	ck_assert_msg(tk_gate_wait(&h->held, 10), "holder thread never got the lock");
	ck_assert_msg(h->lock_rc == 0, "holder's lock: %s", bakery_strerror(h->lock_rc));
}

void unit_holder_stop(struct unit_holder *h)
{
	tk_gate_open(&h->release);
	ck_assert_int_eq(pthread_join(h->thread, NULL), 0);
	ck_assert_msg(h->unlock_rc == 0, "holder's unlock: %s", bakery_strerror(h->unlock_rc));
	tk_gate_close(&h->held);
	tk_gate_close(&h->release);
}

struct holder_process {
	const char *region, *lock;
	enum bakery_algo algo;
	struct tk_gate held;
};

static int holder_process_main(void *arg)
{
	struct holder_process *h = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(h->region, 0, NULL, &b) || bakery_lock_open(b, h->lock, h->algo, &l))
		return 1;
	if (bakery_lock(l))
		return 2;
	tk_gate_open(&h->held);
	sleep(60);
	return 3;
}

pid_t unit_holder_process(const char *region, const char *lock, enum bakery_algo algo)
{
	struct holder_process h = { region, lock, algo, { { -1, -1 } } };
	pid_t pid;
	bool held;

	tk_gate_init(&h.held);
	pid = tk_fork(holder_process_main, &h);
	held = tk_gate_wait(&h.held, 10);
	tk_gate_close(&h.held);
	if (!held)
		tk_kill(pid);
	ck_assert_msg(held, "the holder process never took the lock");
	return pid;
}

char unit_proc_state(pid_t pid)
{
	char path[64], comm[64], state = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	if (fscanf(f, "%*d %63s %c", comm, &state) != 2)
		state = '?';
	fclose(f);
	return state;
}

bool unit_queued_asleep(void *arg)
{
	struct unit_queued *q = arg;
	struct bakery_lock_info li;

	return bakery_lock_info(q->b, 0, &li) == 0 && li.waiters == q->count &&
	       unit_proc_state(q->pid) == 'S';
}

/* ---------------------------------------------------------------- main -- */

int unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	tk_run_begin();
	srunner_run_all(sr, CK_NORMAL);
	tk_run_end();
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
