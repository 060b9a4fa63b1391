/* SPDX-License-Identifier: MIT */
/*
 * rw.c - bakery-rwbench: the shared mode and locks of k holders against
 * what people use instead.
 *
 * Readers-mostly: P processes (2 and 8) loop for a fixed time; each
 * passage is a read with probability R % (95 and 50), else a write; a
 * critical section of CS_SPINS relaxations, then OUT_SPINS outside.
 *   lamport, boulangerie, black-white  libbakery rdlock / lock
 *   pthread-rwlock   a process-shared pthread_rwlock_t in shm, glibc's
 *                    default kind (prefers readers).  NOT robust: a reader
 *                    or writer that dies holding it blocks it for ever
 *   pthread-rwlock-w the same, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
 *   flock            flock(LOCK_SH / LOCK_EX) on a file in /dev/shm, each
 *                    process with its own open file description
 * k holders: every passage takes one of k units (k = 2, 4):
 *   lamport, boulangerie  libbakery, a lock of k holders
 *   posix-sem        a named POSIX semaphore of value k (sem_open); NOT
 *                    robust: a unit taken by a process that dies is lost
 * Reported: passages per second (all processes), the ratio to the pthread
 * rwlock (to the semaphore for k holders) in the same run, and the worst
 * and mean wait of a writer (of any taker for k holders): the time from
 * its call to its entry, every write timed.  Every critical section goes
 * through the occupancy check of the tests (tests/common/rw_occupancy.h):
 * a run that saw a writer beside anyone, or more than k holders, says so.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "bakery.h"
#include "rw_occupancy.h"

#define MAX_PROCS 8
/* relaxations inside the critical section and outside (-c, -o) */
static unsigned cs_spins = 100, out_spins = 100;

enum kind { K_BAKERY, K_RWLOCK, K_RWLOCK_W, K_FLOCK, K_SEM };

struct mech {
	const char *name;
	enum kind kind;
	enum bakery_algo algo;
};

static const struct mech rw_mechs[] = {
	{ "pthread-rwlock", K_RWLOCK, 0 },
	{ "pthread-rwlock-w", K_RWLOCK_W, 0 },
	{ "flock", K_FLOCK, 0 },
	{ "lamport", K_BAKERY, BAKERY_ALGO_LAMPORT },
	{ "boulangerie", K_BAKERY, BAKERY_ALGO_BOULANGERIE },
	{ "black-white", K_BAKERY, BAKERY_ALGO_BLACK_WHITE },
};
static const struct mech k_mechs[] = {
	{ "posix-sem", K_SEM, 0 },
	{ "lamport", K_BAKERY, BAKERY_ALGO_LAMPORT },
	{ "boulangerie", K_BAKERY, BAKERY_ALGO_BOULANGERIE },
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct child_res {
	uint64_t passages, writes, reads;
	uint64_t wwait_max, wwait_sum;  /* ns, writes (k holders: every passage) */
	uint64_t rwait_max;
	int err;
} __attribute__((aligned(64)));

struct shared {
	pthread_rwlock_t rwlock;
	struct rw_occupancy occ;
	uint32_t ready, go, stop;
	struct child_res res[MAX_PROCS];
};

struct run {
	const struct mech *m;
	unsigned procs, read_pct, holders;   /* holders > 0: a k-holder run */
	double seconds;
	char name[64];                       /* region, file or semaphore */
	struct shared *sh;
};

struct handle {
	bakery_t *b;
	bakery_lock_t *l;
	int fd;
	sem_t *sem;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		caa_cpu_relax();
}

/* ---------------------------------------------------------- mechanisms -- */

static int create(struct run *r)
{
	static unsigned seq;
	pthread_rwlockattr_t a;
	char path[96];
	int fd;

	snprintf(r->name, sizeof(r->name), "/bakery-rwbench-%ld-%u", (long)getpid(), seq++);
	switch (r->m->kind) {
	case K_BAKERY: {
		struct bakery_config cfg = { .slots = 64, .locks = 4 };
		struct bakery_lock_config lc = { .algo = r->m->algo, .holders = r->holders };
		bakery_lock_t *l;
		bakery_t *b;
		int err = bakery_open(r->name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b);

		if (!err)
			err = bakery_lock_open_config(b, "L", &lc, &l);
		if (!err) {
			bakery_lock_close(l);
			bakery_close(b);
		}
		return err;
	}
	case K_RWLOCK:
	case K_RWLOCK_W:
		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		if (r->m->kind == K_RWLOCK_W)
			pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&r->sh->rwlock, &a);
		pthread_rwlockattr_destroy(&a);
		return 0;
	case K_FLOCK:
		snprintf(path, sizeof(path), "/dev/shm%s", r->name);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	case K_SEM: {
		sem_t *s = sem_open(r->name, O_CREAT | O_EXCL, 0600, r->holders);

		if (s == SEM_FAILED)
			return errno;
		sem_close(s);
		return 0;
	}
	}
	return EINVAL;
}

static void destroy(struct run *r)
{
	char path[96];

	switch (r->m->kind) {
	case K_BAKERY:
		bakery_unlink(r->name);
		break;
	case K_RWLOCK:
	case K_RWLOCK_W:
		pthread_rwlock_destroy(&r->sh->rwlock);
		break;
	case K_FLOCK:
		snprintf(path, sizeof(path), "/dev/shm%s", r->name);
		unlink(path);
		break;
	case K_SEM:
		sem_unlink(r->name);
		break;
	}
}

static int attach(struct run *r, struct handle *h)
{
	char path[96];

	switch (r->m->kind) {
	case K_BAKERY: {
		struct bakery_lock_config lc = { .algo = r->m->algo };
		int err = bakery_open(r->name, 0, NULL, &h->b);

		return err ? err : bakery_lock_open_config(h->b, "L", &lc, &h->l);
	}
	case K_FLOCK:
		snprintf(path, sizeof(path), "/dev/shm%s", r->name);
		h->fd = open(path, O_RDWR);
		return h->fd < 0 ? errno : 0;
	case K_SEM:
		h->sem = sem_open(r->name, 0);
		return h->sem == SEM_FAILED ? errno : 0;
	default:
		return 0;
	}
}

/* 0, or an error (EOWNERDEAD is not one here: nobody dies) */
static int acquire(struct run *r, struct handle *h, bool shared)
{
	switch (r->m->kind) {
	case K_BAKERY:
		return shared ? bakery_rdlock(h->l) : bakery_lock(h->l);
	case K_RWLOCK:
	case K_RWLOCK_W:
		return shared ? pthread_rwlock_rdlock(&r->sh->rwlock)
		              : pthread_rwlock_wrlock(&r->sh->rwlock);
	case K_FLOCK:
		return flock(h->fd, shared ? LOCK_SH : LOCK_EX) ? errno : 0;
	case K_SEM:
		while (sem_wait(h->sem))
			if (errno != EINTR)
				return errno;
		return 0;
	}
	return EINVAL;
}

static int release(struct run *r, struct handle *h)
{
	switch (r->m->kind) {
	case K_BAKERY:
		return bakery_unlock(h->l);
	case K_RWLOCK:
	case K_RWLOCK_W:
		return pthread_rwlock_unlock(&r->sh->rwlock);
	case K_FLOCK:
		return flock(h->fd, LOCK_UN) ? errno : 0;
	case K_SEM:
		return sem_post(h->sem) ? errno : 0;
	}
	return EINVAL;
}

static void detach(struct run *r, struct handle *h)
{
	if (r->m->kind == K_BAKERY) {
		bakery_lock_close(h->l);
		bakery_close(h->b);
	} else if (r->m->kind == K_FLOCK) {
		close(h->fd);
	} else if (r->m->kind == K_SEM) {
		sem_close(h->sem);
	}
}

/* --------------------------------------------------------------- a run -- */

static void child(struct run *r, unsigned id)
{
	struct child_res *res = &r->sh->res[id];
	struct handle h = { .fd = -1 };
	uint64_t x = 0x9e3779b97f4a7c15ull * (id + 1);
	unsigned capacity = r->holders ? r->holders : 1;

	res->err = attach(r, &h);
	uatomic_inc(&r->sh->ready);
	while (!CMM_LOAD_SHARED(r->sh->go))
		usleep(100);
	while (!res->err && !CMM_LOAD_SHARED(r->sh->stop)) {
		bool shared;
		uint64_t t0, w;
		int err;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;       /* xorshift64 */
		shared = !r->holders && x % 100 < r->read_pct;
		t0 = now_ns();
		err = acquire(r, &h, shared);
		if (err) {
			res->err = err;
			break;
		}
		w = now_ns() - t0;
		rw_occupancy_in(&r->sh->occ, shared, capacity);
		spin(cs_spins);
		rw_occupancy_out(&r->sh->occ, shared);
		res->err = release(r, &h);
		if (shared) {
			res->reads++;
			if (w > res->rwait_max)
				res->rwait_max = w;
		} else {
			res->writes++;
			res->wwait_sum += w;
			if (w > res->wwait_max)
				res->wwait_max = w;
		}
		res->passages++;
		spin(out_spins);
	}
	detach(r, &h);
	_exit(res->err ? 1 : 0);
}

struct outcome {
	double per_s;
	double wwait_max_ms, wwait_mean_us, rwait_max_ms;
	uint64_t writes;
	uint64_t violations;
	int err;
};

static struct outcome run_once(struct run *r)
{
	struct outcome o = { 0 };
	pid_t pid[MAX_PROCS];
	uint64_t t0, t1, wsum = 0;
	int st;

	memset(r->sh, 0, sizeof(*r->sh));
	if ((o.err = create(r)))
		return o;
	for (unsigned i = 0; i < r->procs; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			child(r, i);
	}
	while (uatomic_read(&r->sh->ready) < r->procs)
		usleep(1000);
	t0 = now_ns();
	CMM_STORE_SHARED(r->sh->go, 1);
	usleep((useconds_t)(r->seconds * 1e6));
	CMM_STORE_SHARED(r->sh->stop, 1);
	t1 = now_ns();
	for (unsigned i = 0; i < r->procs; i++) {
		struct child_res *c = &r->sh->res[i];

		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			o.err = c->err ? c->err : EIO;
		o.per_s += (double)c->passages;
		o.writes += c->writes;
		wsum += c->wwait_sum;
		if (c->wwait_max / 1e6 > o.wwait_max_ms)
			o.wwait_max_ms = c->wwait_max / 1e6;
		if (c->rwait_max / 1e6 > o.rwait_max_ms)
			o.rwait_max_ms = c->rwait_max / 1e6;
	}
	/* passages done after the stop are counted too, over the time to the
	 * stop: a few per process against hundreds of thousands */
	o.per_s /= (t1 - t0) / 1e9;
	o.wwait_mean_us = o.writes ? wsum / 1e3 / o.writes : 0;
	o.violations = r->sh->occ.violations;
	destroy(r);
	return o;
}

/* ------------------------------------------------------------- the table -- */

#define MAX_ROUNDS 9

static int by_throughput(const void *a, const void *b)
{
	const struct outcome *x = a, *y = b;

	return (x->per_s > y->per_s) - (x->per_s < y->per_s);
}

/*
 * Run the N mechanisms of a group in turn, ROUNDS times (so that a burst
 * of other load hits one run of each), and keep for each the run of median
 * throughput.  A run that failed or saw an overlap is kept whatever its
 * throughput: it must show.
 */
static void run_group(struct run *r, struct outcome *o, unsigned n, unsigned rounds)
{
	struct outcome all[NELEM(rw_mechs)][MAX_ROUNDS];
	bool bad[NELEM(rw_mechs)] = { false };

	for (unsigned i = 0; i < rounds; i++) {
		for (unsigned m = 0; m < n; m++) {
			if (bad[m])
				continue;
			all[m][i] = run_once(&r[m]);
			if (all[m][i].err || all[m][i].violations) {
				o[m] = all[m][i];
				bad[m] = true;
			}
		}
	}
	for (unsigned m = 0; m < n; m++) {
		if (bad[m])
			continue;
		qsort(all[m], rounds, sizeof(all[m][0]), by_throughput);
		o[m] = all[m][rounds / 2];
	}
}

static void print_row(const struct run *r, const struct outcome *o, double base)
{
	if (o->err) {
		printf("%-17s %4u%% %5u  error: %s\n", r->m->name, r->read_pct, r->procs,
		       bakery_strerror(o->err));
		return;
	}
	printf("%-17s %4u%% %5u %12.0f %6.2fx %10.2f %10.1f %10.2f%s\n", r->m->name,
	       r->holders ? 0 : r->read_pct, r->procs, o->per_s, base > 0 ? o->per_s / base : 0,
	       o->wwait_max_ms, o->wwait_mean_us, o->rwait_max_ms,
	       o->violations ? "  EXCLUSION VIOLATED" : "");
}

static void rw_table(struct shared *sh, double seconds, unsigned rounds)
{
	static const unsigned pcts[] = { 95, 50 }, procs[] = { 2, 8 };

	printf("\n## readers-mostly: rdlock/lock against pthread_rwlock_t and flock\n");
	printf("%-17s %5s %5s %12s %7s %10s %10s %10s\n", "mechanism", "reads", "procs",
	       "passages/s", "ratio", "w-max ms", "w-mean us", "r-max ms");
	for (unsigned pi = 0; pi < NELEM(pcts); pi++) {
		for (unsigned ni = 0; ni < NELEM(procs); ni++) {
			struct run r[NELEM(rw_mechs)];
			struct outcome o[NELEM(rw_mechs)];

			for (unsigned m = 0; m < NELEM(rw_mechs); m++)
				r[m] = (struct run){ .m = &rw_mechs[m], .procs = procs[ni],
				                     .read_pct = pcts[pi], .seconds = seconds, .sh = sh };
			run_group(r, o, NELEM(rw_mechs), rounds);
			for (unsigned m = 0; m < NELEM(rw_mechs); m++)
				print_row(&r[m], &o[m], o[0].per_s);
			fflush(stdout);
		}
	}
}

static void k_table(struct shared *sh, double seconds, unsigned rounds)
{
	static const unsigned ks[] = { 2, 4 }, procs[] = { 2, 8 };

	printf("\n## k holders: a lock of k holders against a POSIX semaphore of value k\n");
	printf("%-17s %5s %5s %12s %7s %10s %10s %10s\n", "mechanism", "k", "procs",
	       "passages/s", "ratio", "w-max ms", "w-mean us", "-");
	for (unsigned ki = 0; ki < NELEM(ks); ki++) {
		for (unsigned ni = 0; ni < NELEM(procs); ni++) {
			struct run r[NELEM(k_mechs)];
			struct outcome o[NELEM(k_mechs)];
			double base;

			for (unsigned m = 0; m < NELEM(k_mechs); m++)
				r[m] = (struct run){ .m = &k_mechs[m], .procs = procs[ni],
				                     .holders = ks[ki], .seconds = seconds, .sh = sh };
			run_group(r, o, NELEM(k_mechs), rounds);
			base = o[0].per_s;
			for (unsigned m = 0; m < NELEM(k_mechs); m++) {
				if (o[m].err)
					printf("%-17s %5u %5u  error: %s\n", r[m].m->name, ks[ki], procs[ni],
					       bakery_strerror(o[m].err));
				else
					printf("%-17s %5u %5u %12.0f %6.2fx %10.2f %10.1f %10s%s\n",
					       r[m].m->name, ks[ki], procs[ni], o[m].per_s,
					       base > 0 ? o[m].per_s / base : 0, o[m].wwait_max_ms,
					       o[m].wwait_mean_us, "-",
					       o[m].violations ? "  EXCLUSION VIOLATED" : "");
			}
			fflush(stdout);
		}
	}
}

static void header(double seconds, unsigned rounds)
{
	char load[128] = "?";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (!fgets(load, sizeof(load), f))
			strcpy(load, "?\n");
		fclose(f);
	}
	printf("# bakery-rwbench: %.1f s per run, the median of %u runs (each mechanism of a group\n"
	       "# in turn), critical section %u relaxations, %u outside\n",
	       seconds, rounds, cs_spins, out_spins);
	printf("# %ld CPUs online; load average at start: %s", sysconf(_SC_NPROCESSORS_ONLN), load);
	printf("# ratio: to the first row of each group (pthread-rwlock; posix-sem for k holders),\n"
	       "# same invocation.  w-max / w-mean: a writer's wait from its call to its entry (every\n"
	       "# write timed; k holders: every passage); r-max: a reader's worst wait.\n"
	       "# pthread-rwlock and posix-sem are NOT robust: a holder that dies blocks the\n"
	       "# rwlock for ever, or loses its unit of the semaphore.\n");
}

int main(int argc, char **argv)
{
	double seconds = 1.0;
	unsigned rounds = 3;
	struct shared *sh;
	int opt;

	while ((opt = getopt(argc, argv, "s:r:c:o:")) != -1) {
		if (opt == 's' && (seconds = atof(optarg)) > 0)
			continue;
		if (opt == 'c' && atoi(optarg) >= 0) {
			cs_spins = (unsigned)atoi(optarg);
			continue;
		}
		if (opt == 'o' && atoi(optarg) >= 0) {
			out_spins = (unsigned)atoi(optarg);
			continue;
		}
		if (opt == 'r' && (rounds = (unsigned)atoi(optarg)) >= 1 && rounds <= MAX_ROUNDS)
			continue;
		fprintf(stderr, "usage: %s [-s seconds-per-run] [-r rounds, 1-%d]\n"
		        "       [-c relaxations-inside] [-o relaxations-outside]\n", argv[0],
		        MAX_ROUNDS);
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	header(seconds, rounds);
	rw_table(sh, seconds, rounds);
	k_table(sh, seconds, rounds);
	return 0;
}
