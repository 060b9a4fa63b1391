/* SPDX-License-Identifier: MIT */
/*
 * crashkit.c - helpers of the crash, recovery and abort tests (see
 * crashkit.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "crashkit.h"

const enum bakery_algo crash_algos[CRASH_NALGOS] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE,
	BAKERY_ALGO_BLACK_WHITE, BAKERY_ALGO_JAYANTI,
};

/* ------------------------------------------------------------- regions -- */

int crash_create(const char *name, unsigned slots, bakery_t **out)
{
	struct bakery_config cfg = { .slots = slots };

	return bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, out);
}

unsigned crash_orphans(const char *name)
{
	char prefix[TK_NAME_SIZE + 16];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	unsigned n = 0;
	size_t len;

	if (!d)
		return 0;
	/* temporary objects are named after the region, plus a suffix that
	 * starts with DEL (0x7f), a character no region name may contain */
	len = (size_t)snprintf(prefix, sizeof(prefix), "%s\x7f", name + (name[0] == '/'));
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, len) == 0;
	closedir(d);
	return n;
}

unsigned crash_shm_objects(const char *prefix)
{
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	size_t len = strlen(prefix + (prefix[0] == '/'));
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix + (prefix[0] == '/'), len) == 0;
	closedir(d);
	return n;
}

/* ---------------------------------------------------------- resources -- */

static unsigned count_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;   /* the directory stream's own descriptor */
}

unsigned crash_count_fds(void)
{
	return count_entries("/proc/self/fd");
}

unsigned crash_count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* ---------------------------------------------------------------- soak -- */

double crash_chaos_seconds(double short_run)
{
	const char *env = getenv("BAKERY_CHAOS_SECONDS");
	double s = env ? atof(env) : 0;

	return s > 0 ? s : short_run;
}

bool crash_chaos_soak(void)
{
	const char *env = getenv("BAKERY_CHAOS_SECONDS");

	return env && atof(env) > 0;
}

/* ---------------------------------------------------------------- time -- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void crash_stats(uint64_t *v, unsigned n, uint64_t *median, uint64_t *worst)
{
	*median = *worst = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*worst = v[n - 1];
}

/* ----------------------------------------------------------- processes -- */

pid_t crash_fork(int (*fn)(void *), void *arg, const char *crash_at)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);           /* nothing buffered is written twice */
	pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the parent died before the prctl (the init of a new PID namespace
	 * sees no parent: 0) */
	if (getppid() != parent && getppid() != 0)
		_exit(98);
	alarm(CRASH_CHILD_LIMIT);
	if (crash_at)
		setenv("BAKERY_CRASH_AT", crash_at, 1);
	else
		unsetenv("BAKERY_CRASH_AT");
	_exit(fn(arg));
}

char crash_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

int crash_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : errno ? errno : EIO;
}

int crash_map_ids(uid_t uid, gid_t gid)
{
	char buf[64];
	int err;

	snprintf(buf, sizeof(buf), "0 %u 1\n", (unsigned)uid);
	if ((err = crash_write_file("/proc/self/uid_map", buf)))
		return err;
	if ((err = crash_write_file("/proc/self/setgroups", "deny")) && err != ENOENT)
		return err;
	snprintf(buf, sizeof(buf), "0 %u 1\n", (unsigned)gid);
	return crash_write_file("/proc/self/gid_map", buf);
}

/* --------------------------------------------------------------- slots -- */

int crash_slot_of(bakery_t *b, pid_t pid)
{
	struct bakery_region_info ri;
	struct bakery_slot_info si;
	int found = -1;

	if (bakery_region_info(b, &ri))
		return -1;
	for (unsigned i = 0; i < ri.slots; i++) {
		if (bakery_slot_info(b, i, &si) || si.pid != pid)
			continue;
		/* a slot it owns now wins over one it had before */
		if (si.state != BAKERY_SLOT_FREE)
			return (int)i;
		found = (int)i;
	}
	return found;
}

struct pass_wait {
	bakery_t *b;
	pid_t pid;
	enum bakery_pass_state pass;
};

static bool in_pass(void *arg)
{
	struct pass_wait *w = arg;
	struct bakery_slot_info si;
	int s = crash_slot_of(w->b, w->pid);

	return s >= 0 && bakery_slot_info(w->b, (unsigned)s, &si) == 0 &&
	       si.state == BAKERY_SLOT_ACTIVE && si.pass == w->pass;
}

bool crash_wait_pass(bakery_t *b, pid_t pid, enum bakery_pass_state pass, double timeout)
{
	struct pass_wait w = { b, pid, pass };

	return tk_wait_until(in_pass, &w, timeout);
}

unsigned crash_slots_used(bakery_t *b)
{
	struct bakery_region_info ri;

	if (bakery_region_info(b, &ri)) {
		fprintf(stderr, "crashkit: bakery_region_info failed\n");
		exit(99);
	}
	return ri.slots_used;
}

struct bakery_lock_info crash_lock_info(bakery_t *b, bakery_lock_t *l)
{
	struct bakery_lock_info li;
	unsigned index;

	if (bakery_lock_index(l, &index) || bakery_lock_info(b, index, &li)) {
		fprintf(stderr, "crashkit: bakery_lock_info failed\n");
		exit(99);
	}
	return li;
}

struct recover_job {
	const char *name;
	int err;
	unsigned reclaimed;
};

static int recover_child(void *arg)
{
	struct recover_job *j = arg;
	bakery_t *b;

	j->err = bakery_open(j->name, BAKERY_NORECOVER, NULL, &b);
	if (j->err)
		return 1;
	j->err = bakery_recover(b, &j->reclaimed);
	/* give back the slot bakery_recover took for us */
	if (bakery_close(b))
		return 2;
	return j->err ? 3 : 0;
}

int crash_recover_in_child(const char *name, unsigned *reclaimed)
{
	struct recover_job *j = tk_shared(sizeof(*j));
	int st, err;

	j->name = name;
	st = tk_reap(crash_fork(recover_child, j, NULL), 30);
	err = st == 0 ? 0 : j->err ? j->err : -1;
	if (reclaimed)
		*reclaimed = j->reclaimed;
	munmap(j, sizeof(*j));
	return err;
}

/* --------------------------------------------------------- participant -- */

static int acquire(bakery_lock_t *l, struct crash_part *p)
{
	struct timespec at;

	p->t_call = tk_ns();
	switch (p->mode) {
	case CRASH_MODE_TRY:
		return bakery_trylock(l);
	case CRASH_MODE_TIMED_RT:
		at = tk_in(CLOCK_REALTIME, p->timeout);
		return bakery_timedlock(l, &at);
	case CRASH_MODE_CLOCK_MONO:
		at = tk_in(CLOCK_MONOTONIC, p->timeout);
		return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
	case CRASH_MODE_CLOCK_RT:
		at = tk_in(CLOCK_REALTIME, p->timeout);
		return bakery_clocklock(l, CLOCK_REALTIME, &at);
	default:
		return bakery_lock(l);
	}
}

/* Inside: repair after EOWNERDEAD, check occupancy, hold if asked, leave. */
static int passage_body(bakery_lock_t *l, struct crash_part *p, int rc)
{
	p->t_acq = tk_ns();
	p->order = uatomic_add_return(&p->occ->order, 1);
	if (rc == EOWNERDEAD && bakery_consistent(l))
		return 10;
	occupancy_in(p->occ, p->serial, CRASH_OCC_PAUSE);
	CMM_STORE_SHARED(p->holding, 1);
	while (p->hold && !CMM_LOAD_SHARED(p->release))
		usleep(100);
	occupancy_out(p->occ, p->serial);
	p->t_release = tk_ns();
	if (bakery_unlock(l))
		return 11;
	CMM_STORE_SHARED(p->holding, 0);
	return 0;
}

int crash_part_run(void *arg)
{
	struct crash_part *p = arg;
	bakery_t *b;
	bakery_lock_t *l;
	int rc;

	p->slot = -1;
	if (bakery_open(p->region, BAKERY_NORECOVER, NULL, &b))
		return 1;
	if (bakery_lock_open(b, CRASH_LOCK, p->algo, &l))
		return 2;
	CMM_STORE_SHARED(p->opened, 1);
	while (p->wait_go && !CMM_LOAD_SHARED(p->go))
		caa_cpu_relax();
	/* no slot free (ESLOTS), or none yet: a dead one still serves a
	 * Jayanti passage being completed for it (EAGAIN) */
	while (((rc = p->rc = acquire(l, p)) == BAKERY_ESLOTS || rc == EAGAIN) &&
	       p->retry_eslots) {
		CMM_STORE_SHARED(p->eslots, p->eslots + 1);
		usleep(500);
	}
	p->slot = tk_self_slot(b);
	if (rc == EBUSY || rc == ETIMEDOUT) {
		p->t_gave_up = tk_ns();
		CMM_STORE_SHARED(p->gave_up, 1);
		/* alive and idle: the registers must not hold anyone up */
		while (!CMM_LOAD_SHARED(p->release))
			usleep(100);
		if (!p->retry)
			goto out;
		rc = p->rc_retry = bakery_lock(l);
	}
	if (rc != 0 && rc != EOWNERDEAD)
		return 3;
	rc = passage_body(l, p, rc);
	if (rc)
		return rc;
out:
	if (bakery_lock_close(l))
		return 4;
	if (bakery_close(b))
		return 5;
	return 0;
}
