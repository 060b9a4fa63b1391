/*
 * crashkit.c - helpers of the crash, recovery and abort tests (see
 * crashkit.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
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
#include "child.h"

const enum bakery_algo ck_algos[CK_NALGOS] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE,
	BAKERY_ALGO_BLACK_WHITE, BAKERY_ALGO_JAYANTI,
};

/* ------------------------------------------------------------- regions -- */

#define CK_MAX_NAMES 256

static char names[CK_MAX_NAMES][CK_NAME_SIZE];
static unsigned name_count;
static pid_t names_owner;

/* Runs in the process that made the names only (children leave with
 * _exit), also when a failed Check assertion ends the test process. */
static void names_unlink(void)
{
	if (getpid() != names_owner)
		return;
	for (unsigned i = 0; i < name_count; i++)
		bakery_unlink(names[i]);
}

void ck_name(char *buf, const char *tag)
{
	static unsigned counter;

	snprintf(buf, CK_NAME_SIZE, "/bkcrash-%s-%d-%u", tag, (int)getpid(), counter++);
	if (names_owner != getpid()) {
		names_owner = getpid();
		name_count = 0;
		atexit(names_unlink);
	}
	if (name_count < CK_MAX_NAMES)
		snprintf(names[name_count++], CK_NAME_SIZE, "%s", buf);
}

int ck_create(const char *name, unsigned slots, bakery_t **out)
{
	struct bakery_config cfg = { .slots = slots };

	return bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, out);
}

unsigned ck_orphans(const char *name)
{
	char prefix[CK_NAME_SIZE + 16];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	unsigned n = 0;
	size_t len;

	if (!d)
		return 0;
	/* temporary objects are named after the region, plus a suffix that
	 * starts with a dot: "NAME." cannot match another test's region */
	len = (size_t)snprintf(prefix, sizeof(prefix), "%s.", name + (name[0] == '/'));
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, len) == 0;
	closedir(d);
	return n;
}

/* ---------------------------------------------------------------- time -- */

uint64_t ck_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct timespec ck_in(clockid_t clock, double seconds)
{
	struct timespec t;
	long long ns = (long long)(seconds * 1e9);

	clock_gettime(clock, &t);
	t.tv_sec += (time_t)(ns / 1000000000LL);
	t.tv_nsec += (long)(ns % 1000000000LL);
	if (t.tv_nsec >= 1000000000L) {
		t.tv_nsec -= 1000000000L;
		t.tv_sec++;
	} else if (t.tv_nsec < 0) {             /* a time in the past */
		t.tv_nsec += 1000000000L;
		t.tv_sec--;
	}
	return t;
}

void ck_sleep_ms(double ms)
{
	struct timespec t = { (time_t)(ms / 1000), (long)((ms - (double)(long)(ms / 1000) * 1000) * 1e6) };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

pid_t ck_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool ck_poll(bool (*cond)(void *), void *arg, double timeout)
{
	uint64_t end = ck_ns() + (uint64_t)(timeout * 1e9);

	while (!cond(arg)) {
		if (ck_ns() > end)
			return false;
		usleep(100);
	}
	return true;
}

bool ck_wait_flag(const volatile int *flag, int value, double timeout)
{
	uint64_t end = ck_ns() + (uint64_t)(timeout * 1e9);

	while (CMM_LOAD_SHARED(*flag) != value) {
		if (ck_ns() > end)
			return false;
		usleep(100);
	}
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void ck_stats(uint64_t *v, unsigned n, uint64_t *median, uint64_t *worst)
{
	*median = *worst = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*worst = v[n - 1];
}

/* ----------------------------------------------------------- processes -- */

void *ck_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("crashkit: mmap");
		exit(99);
	}
	return p;
}

pid_t ck_fork(int (*fn)(void *), void *arg, const char *crash_at)
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
	alarm(CK_CHILD_LIMIT);
	if (crash_at)
		setenv("BAKERY_CRASH_AT", crash_at, 1);
	else
		unsetenv("BAKERY_CRASH_AT");
	_exit(fn(arg));
}

int ck_reap(pid_t pid, double timeout)
{
	int r = child_reap(pid, timeout);

	return r == CHILD_LOST ? -1 : r;
}

char ck_proc_state(pid_t pid)
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

/* --------------------------------------------------------------- slots -- */

int ck_slot_of(bakery_t *b, pid_t pid)
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
	int s = ck_slot_of(w->b, w->pid);

	return s >= 0 && bakery_slot_info(w->b, (unsigned)s, &si) == 0 &&
	       si.state == BAKERY_SLOT_ACTIVE && si.pass == w->pass;
}

bool ck_wait_pass(bakery_t *b, pid_t pid, enum bakery_pass_state pass, double timeout)
{
	struct pass_wait w = { b, pid, pass };

	return ck_poll(in_pass, &w, timeout);
}

unsigned ck_slots_used(bakery_t *b)
{
	struct bakery_region_info ri;

	if (bakery_region_info(b, &ri)) {
		fprintf(stderr, "crashkit: bakery_region_info failed\n");
		exit(99);
	}
	return ri.slots_used;
}

struct bakery_lock_info ck_lock_info(bakery_t *b, bakery_lock_t *l)
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

int ck_recover_in_child(const char *name, unsigned *reclaimed)
{
	struct recover_job *j = ck_shared(sizeof(*j));
	int st, err;

	j->name = name;
	st = ck_reap(ck_fork(recover_child, j, NULL), 30);
	err = st == 0 ? 0 : j->err ? j->err : -1;
	if (reclaimed)
		*reclaimed = j->reclaimed;
	munmap(j, sizeof(*j));
	return err;
}

/* ----------------------------------------------------------- occupancy -- */

#define CK_OCC_PAUSE 50

void ck_occ_in(struct ck_occ *o, unsigned serial)
{
	uint64_t prev = uatomic_xchg(&o->inside, (uint64_t)serial);
	uint64_t c;

	if (prev) {
		/* the doom mark was stored before the kill that let us in */
		if (prev < CK_SERIALS && uatomic_read(&o->doomed[prev]))
			uatomic_inc(&o->stale);
		else
			uatomic_inc(&o->violations);
	}
	c = CMM_LOAD_SHARED(o->counter);
	for (int i = 0; i < CK_OCC_PAUSE; i++)
		caa_cpu_relax();
	CMM_STORE_SHARED(o->counter, c + 1);
	uatomic_inc(&o->entries);
}

void ck_occ_out(struct ck_occ *o, unsigned serial)
{
	if (uatomic_xchg(&o->inside, 0) != serial)
		uatomic_inc(&o->violations);
}

void ck_occ_enter(struct ck_occ *o, unsigned serial)
{
	ck_occ_in(o, serial);
	ck_occ_out(o, serial);
}

void ck_occ_doom(struct ck_occ *o, unsigned serial)
{
	if (serial < CK_SERIALS)
		uatomic_set(&o->doomed[serial], 1);
	cmm_smp_mb();   /* the mark before the kill() that follows */
}

/* --------------------------------------------------------- participant -- */

static int acquire(bakery_lock_t *l, struct ck_part *p)
{
	struct timespec at;

	p->t_call = ck_ns();
	switch (p->mode) {
	case CK_MODE_TRY:
		return bakery_trylock(l);
	case CK_MODE_TIMED_RT:
		at = ck_in(CLOCK_REALTIME, p->timeout);
		return bakery_timedlock(l, &at);
	case CK_MODE_CLOCK_MONO:
		at = ck_in(CLOCK_MONOTONIC, p->timeout);
		return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
	case CK_MODE_CLOCK_RT:
		at = ck_in(CLOCK_REALTIME, p->timeout);
		return bakery_clocklock(l, CLOCK_REALTIME, &at);
	default:
		return bakery_lock(l);
	}
}

static int find_own_slot(bakery_t *b)
{
	struct bakery_region_info ri;
	struct bakery_slot_info si;

	if (bakery_region_info(b, &ri))
		return -1;
	for (unsigned i = 0; i < ri.slots; i++)
		if (bakery_slot_info(b, i, &si) == 0 && si.state == BAKERY_SLOT_ACTIVE &&
		    si.pid == getpid() && si.tid == ck_gettid())
			return (int)i;
	return -1;
}

/* Inside: repair after EOWNERDEAD, check occupancy, hold if asked, leave. */
static int passage_body(bakery_lock_t *l, struct ck_part *p, int rc)
{
	p->t_acq = ck_ns();
	p->order = uatomic_add_return(&p->occ->order, 1);
	if (rc == EOWNERDEAD && bakery_consistent(l))
		return 10;
	ck_occ_in(p->occ, p->serial);
	CMM_STORE_SHARED(p->holding, 1);
	while (p->hold && !CMM_LOAD_SHARED(p->release))
		usleep(100);
	ck_occ_out(p->occ, p->serial);
	p->t_release = ck_ns();
	if (bakery_unlock(l))
		return 11;
	CMM_STORE_SHARED(p->holding, 0);
	return 0;
}

int ck_part_run(void *arg)
{
	struct ck_part *p = arg;
	bakery_t *b;
	bakery_lock_t *l;
	int rc;

	p->slot = -1;
	if (bakery_open(p->region, BAKERY_NORECOVER, NULL, &b))
		return 1;
	if (bakery_lock_open(b, CK_LOCK, p->algo, &l))
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
	p->slot = find_own_slot(b);
	if (rc == EBUSY || rc == ETIMEDOUT) {
		p->t_gave_up = ck_ns();
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
