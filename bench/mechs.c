/* SPDX-License-Identifier: MIT */
/*
 * mechs.c - the mechanisms bakery-bench compares, one adapter each:
 *
 *   robust-mutex  a robust, process-shared pthread mutex in a POSIX shm object
 *                 (the baseline every ratio is taken against)
 *   lamport, boulangerie, black-white, jayanti
 *                 libbakery, one lock in a region of `slots` slots
 *   lamport-biased, boul-biased
 *                 the same, the lock made BAKERY_LOCK_BIASED
 *   ticket        a ticket lock in shm that polls, then calls sched_yield()
 *                 between polls (no futex: this is the "simple spinning FIFO
 *                 lock" people write by hand)
 *   ticket-park   a ticket lock in shm whose waiters sleep on a futex word
 *                 of their own ticket: only the next ticket in line polls,
 *                 and each release wakes exactly the new next ticket (the
 *                 O(1) FIFO lock, the yardstick of a FIFO hand-over)
 *   posix-sem     a named POSIX semaphore (sem_open) of value 1
 *   ofd-lock      fcntl F_OFD_SETLKW write lock on a file in /dev/shm
 *   flock         flock(2) LOCK_EX on a file in /dev/shm
 *
 * Each child opens its own file description for ofd-lock and flock: both
 * locks belong to the open file description, which fork() shares, so an
 * inherited descriptor would let every child in at once (the occupancy
 * check catches exactly that mistake).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <urcu/arch.h>

#include "bench.h"

/* Polls of a ticket-lock waiter before each sched_yield(). */
#define TICKET_SPINS 64
/* Polls of the next ticket in line of the parking ticket lock before it
 * sleeps (about a hand-over), and its futex words (more than the tickets
 * that can be out at once: one per process). */
#define PARK_SPINS 1000
#define PARK_WORDS (2 * BENCH_MAX_PROCS)

static unsigned instance_seq;

int mech_new(struct mech *m, const struct mech_ops *ops, unsigned slots)
{
	return mech_new_holders(m, ops, slots, 1);
}

int mech_new_holders(struct mech *m, const struct mech_ops *ops, unsigned slots,
                     unsigned holders)
{
	memset(m, 0, sizeof(*m));
	m->ops = ops;
	m->slots = slots;
	m->holders = holders;
	m->fd = -1;
	snprintf(m->name, sizeof(m->name), "bakery-bench-%ld-%u",
	         (long)getpid(), instance_seq++);
	return ops->create(m);
}

void mech_free(struct mech *m)
{
	m->ops->destroy(m);
}

/* --------------------------------------------------------- shm helpers -- */

static int shm_make(struct mech *m, size_t size)
{
	char path[100];
	int fd;
	void *p;

	snprintf(path, sizeof(path), "/%s", m->name);
	fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		int err = errno;
		close(fd);
		shm_unlink(path);
		return err;
	}
	/* MAP_SHARED and inherited across fork: children share it */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		shm_unlink(path);
		return errno;
	}
	m->shm = p;
	m->shm_size = size;
	return 0;
}

static void shm_destroy(struct mech *m)
{
	char path[100];

	snprintf(path, sizeof(path), "/%s", m->name);
	if (m->shm)
		munmap(m->shm, m->shm_size);
	shm_unlink(path);
}

static int attach_none(struct mech *m) { (void)m; return 0; }

/* MECH_ACQUIRED if ERR is 0, else MECH_FAILED with ERR kept. */
static int fail_if(struct mech *m, int err)
{
	m->err = err;
	return err ? MECH_FAILED : MECH_ACQUIRED;
}
static void detach_none(struct mech *m) { (void)m; }

/* --------------------------------------------------------- robust mutex -- */

static int rmutex_create(struct mech *m)
{
	pthread_mutexattr_t a;
	int err = shm_make(m, 4096);

	if (err)
		return err;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	err = pthread_mutex_init(m->shm, &a);
	pthread_mutexattr_destroy(&a);
	return err;
}

static int rmutex_lock(struct mech *m)
{
	int r = pthread_mutex_lock(m->shm);

	if (r == EOWNERDEAD) {
		pthread_mutex_consistent(m->shm);
		return MECH_OWNER_DIED;
	}
	return fail_if(m, r);
}

static void rmutex_unlock(struct mech *m)
{
	pthread_mutex_unlock(m->shm);
}

static const struct mech_ops mech_robust_mutex = {
	.name = "robust-mutex",
	.what = "robust process-shared pthread mutex in shm (baseline)",
	.recovers = true, .tells_owner_died = true,
	.create = rmutex_create, .attach = attach_none,
	.lock = rmutex_lock, .unlock = rmutex_unlock,
	.detach = detach_none, .destroy = shm_destroy,
};

/* ------------------------------------------------------------ libbakery -- */

static int bakery_create(struct mech *m)
{
	struct bakery_config cfg = { .slots = m->slots };
	struct bakery_lock_config lc = { .algo = m->ops->algo, .holders = m->holders,
	                                 .flags = m->ops->biased ? BAKERY_LOCK_BIASED : 0 };
	int err = bakery_open(m->name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &m->region);

	if (err)
		return err;
	/* the parent opens the lock but never locks: it takes no slot */
	err = bakery_lock_open_config(m->region, "bench", &lc, &m->lock);
	if (err) {
		bakery_close(m->region);
		bakery_unlink(m->name);
	}
	return err;
}

static int bakery_adapter_lock(struct mech *m)
{
	int r = bakery_lock(m->lock);

	if (r == EOWNERDEAD) {
		bakery_consistent(m->lock);
		return MECH_OWNER_DIED;
	}
	return fail_if(m, r);
}

static void bakery_adapter_unlock(struct mech *m)
{
	bakery_unlock(m->lock);
}

/* Give the child's slot back cleanly, as a well-behaved process would. */
static void bakery_detach(struct mech *m)
{
	bakery_lock_close(m->lock);
	bakery_close(m->region);
}

static void bakery_destroy(struct mech *m)
{
	bakery_lock_close(m->lock);
	bakery_close(m->region);
	bakery_unlink(m->name);
}

#define BAKERY_MECH_BIASED(var, algo_name, algo_id, holders, bias, text)   \
	static const struct mech_ops var = {                                 \
		.name = algo_name, .what = text,                             \
		.is_bakery = true, .recovers = true, .tells_owner_died = true, \
		.algo = algo_id, .counts_holders = holders, .biased = bias,  \
		.create = bakery_create, .attach = attach_none,              \
		.lock = bakery_adapter_lock, .unlock = bakery_adapter_unlock, \
		.detach = bakery_detach, .destroy = bakery_destroy,          \
	}

#define BAKERY_MECH(var, algo_name, algo_id, holders, text)                 \
	BAKERY_MECH_BIASED(var, algo_name, algo_id, holders, false, text)

BAKERY_MECH(mech_lamport, "lamport", BAKERY_ALGO_LAMPORT, true,
            "libbakery, Lamport's Bakery");
BAKERY_MECH(mech_boulangerie, "boulangerie", BAKERY_ALGO_BOULANGERIE, true,
            "libbakery, Boulangerie (Moses & Patkin)");
BAKERY_MECH(mech_black_white, "black-white", BAKERY_ALGO_BLACK_WHITE, false,
            "libbakery, Black-White Bakery (Taubenfeld), the default");
BAKERY_MECH(mech_jayanti, "jayanti", BAKERY_ALGO_JAYANTI, false,
            "libbakery, B-Bakery (Jayanti, Tan, Friedland, Katz)");
BAKERY_MECH_BIASED(mech_lamport_biased, "lamport-biased", BAKERY_ALGO_LAMPORT, false, true,
                   "libbakery, Lamport's Bakery, BAKERY_LOCK_BIASED");
BAKERY_MECH_BIASED(mech_boulangerie_biased, "boul-biased", BAKERY_ALGO_BOULANGERIE, false,
                   true, "libbakery, Boulangerie, BAKERY_LOCK_BIASED");

/* ---------------------------------------------------------- ticket lock -- */

/* The two counters on separate lines: lockers bump `next`, waiters poll
 * `serving`, and only the holder writes `serving`. */
struct ticket_lock {
	uint32_t next __attribute__((aligned(BENCH_CACHE_LINE)));
	uint32_t serving __attribute__((aligned(BENCH_CACHE_LINE)));
};

static int ticket_create(struct mech *m)
{
	return shm_make(m, sizeof(struct ticket_lock));
}

static int ticket_lock(struct mech *m)
{
	struct ticket_lock *t = m->shm;
	uint32_t mine = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED);
	unsigned spins = 0;

	while (__atomic_load_n(&t->serving, __ATOMIC_ACQUIRE) != mine) {
		if (++spins % TICKET_SPINS == 0)
			sched_yield();
		else
			caa_cpu_relax();
	}
	return MECH_ACQUIRED;
}

static void ticket_unlock(struct mech *m)
{
	struct ticket_lock *t = m->shm;

	uint32_t s = __atomic_load_n(&t->serving, __ATOMIC_RELAXED);  /* ours alone */

	__atomic_store_n(&t->serving, s + 1, __ATOMIC_RELEASE);
}

static const struct mech_ops mech_ticket = {
	.name = "ticket",
	.what = "ticket lock in shm: 64 polls, then sched_yield() between polls",
	.create = ticket_create, .attach = attach_none,
	.lock = ticket_lock, .unlock = ticket_unlock,
	.detach = detach_none, .destroy = shm_destroy,
};

/* -------------------------------------------------- parking ticket lock -- */

/* Ticket t waits on word t % PARK_WORDS: a release wakes only the tickets
 * whose turn it changes. */
struct park_word {
	uint32_t seq;              /* futex word, bumped to wake its sleepers */
	uint32_t sleepers;
} __attribute__((aligned(BENCH_CACHE_LINE)));

struct park_ticket_lock {
	uint32_t next __attribute__((aligned(BENCH_CACHE_LINE)));
	uint32_t serving __attribute__((aligned(BENCH_CACHE_LINE)));
	struct park_word word[PARK_WORDS];
};

static int park_ticket_create(struct mech *m)
{
	return shm_make(m, sizeof(struct park_ticket_lock));
}

/* Sleep on ticket MINE's word while it is neither served nor next. */
static void park_sleep(struct park_ticket_lock *t, uint32_t mine, bool next)
{
	struct park_word *w = &t->word[mine % PARK_WORDS];
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_SEQ_CST);
	uint32_t ahead;

	__atomic_fetch_add(&w->sleepers, 1, __ATOMIC_SEQ_CST);
	/* seq_cst: our count before the re-read of serving, pairing with
	 * the release's store of serving before its read of the count */
	ahead = mine - __atomic_load_n(&t->serving, __ATOMIC_SEQ_CST);
	if (ahead > 1 || (next && ahead == 1))
		syscall(SYS_futex, &w->seq, FUTEX_WAIT, seq, NULL, NULL, 0);
	__atomic_fetch_sub(&w->sleepers, 1, __ATOMIC_SEQ_CST);
}

static int park_ticket_lock(struct mech *m)
{
	struct park_ticket_lock *t = m->shm;
	uint32_t mine = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED);
	unsigned spins = 0;

	for (;;) {
		uint32_t ahead = mine - __atomic_load_n(&t->serving, __ATOMIC_ACQUIRE);

		if (ahead == 0)
			return MECH_ACQUIRED;
		if (ahead == 1 && ++spins < PARK_SPINS)
			caa_cpu_relax();
		else
			park_sleep(t, mine, ahead == 1);
	}
}

static void park_wake(struct park_ticket_lock *t, uint32_t ticket)
{
	struct park_word *w = &t->word[ticket % PARK_WORDS];

	if (__atomic_load_n(&w->sleepers, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&w->seq, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &w->seq, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
	}
}

static void park_ticket_unlock(struct mech *m)
{
	struct park_ticket_lock *t = m->shm;
	uint32_t s = __atomic_load_n(&t->serving, __ATOMIC_RELAXED) + 1;  /* ours alone */

	/* seq_cst: the critical section before it, and it before the
	 * sleeper counts (pairs with park_sleep) */
	__atomic_store_n(&t->serving, s, __ATOMIC_SEQ_CST);
	park_wake(t, s);           /* the new holder, if it gave up polling */
	park_wake(t, s + 1);       /* the new next in line: it polls from now */
}

static const struct mech_ops mech_park_ticket = {
	.name = "ticket-park",
	.what = "ticket lock in shm: only the next ticket polls, the others sleep on a futex word each",
	.create = park_ticket_create, .attach = attach_none,
	.lock = park_ticket_lock, .unlock = park_ticket_unlock,
	.detach = detach_none, .destroy = shm_destroy,
};

/* ------------------------------------------------------ POSIX semaphore -- */

static int sem_create(struct mech *m)
{
	char path[100];

	snprintf(path, sizeof(path), "/%s", m->name);
	/* the mapping sem_open makes is shared: forked children use it as is */
	m->sem = sem_open(path, O_CREAT | O_EXCL, 0600, 1);
	return m->sem == SEM_FAILED ? errno : 0;
}

static int sem_adapter_lock(struct mech *m)
{
	while (sem_wait(m->sem) < 0)
		if (errno != EINTR)
			return fail_if(m, errno);
	return MECH_ACQUIRED;
}

static void sem_adapter_unlock(struct mech *m)
{
	sem_post(m->sem);
}

static void sem_destroy_named(struct mech *m)
{
	char path[100];

	snprintf(path, sizeof(path), "/%s", m->name);
	sem_close(m->sem);
	sem_unlink(path);
}

static const struct mech_ops mech_sem = {
	.name = "posix-sem",
	.what = "named POSIX semaphore (sem_open), value 1",
	.create = sem_create, .attach = attach_none,
	.lock = sem_adapter_lock, .unlock = sem_adapter_unlock,
	.detach = detach_none, .destroy = sem_destroy_named,
};

/* ------------------------------------------------------ file-lock files -- */

static void file_path(const struct mech *m, char *path, size_t size)
{
	struct stat st;
	const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";

	snprintf(path, size, "%s/%s.lock", dir, m->name);
}

static int file_create(struct mech *m)
{
	char path[160];
	int fd;

	file_path(m, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* A file description of our own (see the top of the file). */
static int file_attach(struct mech *m)
{
	char path[160];

	file_path(m, path, sizeof(path));
	m->fd = open(path, O_RDWR | O_CLOEXEC);
	return m->fd < 0 ? errno : 0;
}

static void file_detach(struct mech *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

static void file_destroy(struct mech *m)
{
	char path[160];

	file_path(m, path, sizeof(path));
	unlink(path);
}

static int ofd_set(struct mech *m, short type, int cmd)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	while (fcntl(m->fd, cmd, &fl) < 0)
		if (errno != EINTR)
			return fail_if(m, errno);
	return MECH_ACQUIRED;
}

static int ofd_lock(struct mech *m) { return ofd_set(m, F_WRLCK, F_OFD_SETLKW); }
static void ofd_unlock(struct mech *m) { ofd_set(m, F_UNLCK, F_OFD_SETLK); }

static const struct mech_ops mech_ofd = {
	.name = "ofd-lock",
	.what = "fcntl(F_OFD_SETLKW) write lock on a file in /dev/shm",
	.recovers = true,
	.create = file_create, .attach = file_attach,
	.lock = ofd_lock, .unlock = ofd_unlock,
	.detach = file_detach, .destroy = file_destroy,
};

static int flock_lock(struct mech *m)
{
	while (flock(m->fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return fail_if(m, errno);
	return MECH_ACQUIRED;
}

static void flock_unlock(struct mech *m)
{
	flock(m->fd, LOCK_UN);
}

static const struct mech_ops mech_flock = {
	.name = "flock",
	.what = "flock(2) LOCK_EX on a file in /dev/shm",
	.recovers = true,
	.create = file_create, .attach = file_attach,
	.lock = flock_lock, .unlock = flock_unlock,
	.detach = file_detach, .destroy = file_destroy,
};

/* ---------------------------------------------------------------- table -- */

/* The baseline first: every ratio is taken against it. */
const struct mech_ops *const mech_table[] = {
	&mech_robust_mutex,
	&mech_lamport, &mech_boulangerie, &mech_black_white, &mech_jayanti,
	&mech_lamport_biased, &mech_boulangerie_biased,
	&mech_ticket, &mech_park_ticket, &mech_sem, &mech_ofd, &mech_flock,
};
const unsigned mech_count = sizeof(mech_table) / sizeof(mech_table[0]);
_Static_assert(sizeof(mech_table) / sizeof(mech_table[0]) <= BENCH_MAX_MECHS,
               "raise BENCH_MAX_MECHS");
