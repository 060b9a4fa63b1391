/* SPDX-License-Identifier: MIT */
/*
 * chaos-dlopen.c - dlopen/dlclose cycles of the library while its threads
 * come and go, a process hammering the same locks meanwhile.
 *
 * The library is linked NODELETE: dlclose leaves it loaded, because a
 * thread that used it keeps a thread-exit handler pointing into it.  This
 * program does not link it: it dlopen()s lib/.libs/libbakery.so.0 of the
 * build (top_builddir), so that without NODELETE dlclose would unmap it.
 *
 * Region R has one lock per algorithm.  A child process passes through
 * them in turn for the whole run.  Each cycle:
 *   1. dlopen the library and look its calls up;
 *   2. DL_THREADS threads open R, pass DL_PASSES times through the lock of
 *      the cycle's algorithm, then wait with their slot (and one of them
 *      holding the lock);
 *   3. dlclose;
 *   4. the threads exit without another call: their slots' thread-exit
 *      handlers run after the dlclose, and the holder dies holding;
 *   5. (next cycle, after the re-dlopen) the handles of the previous cycle
 *      are closed through the new lookups, and the locks keep working.
 * Then:
 *   - the process survived (the cycles run in a child: a SIGSEGV there is a
 *     failure, reported as such);
 *   - exclusion: no overlap seen by the occupancy objects, no lost update;
 *   - exactly one EOWNERDEAD per thread that exited holding (a last
 *     passage through every lock takes those still pending);
 *   - no slot left in use, and as many descriptors and mappings as after
 *     the first cycle.
 *
 *   chaos-dlopen [CYCLES]       (default 200)
 *   BAKERY_CHAOS_SECONDS=N chaos-dlopen
 *                               soak: cycles for N seconds
 *
 * Exit status: 0 pass, 1 fail, 77 skip (no shared library), 99 hard error.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bakery.h"
#include "../common/occupancy.h"

/* AddressSanitizer's allocator maps memory as the program goes: there,
 * mapping counts say nothing */
#if defined(__SANITIZE_ADDRESS__)
#define MAPS_COMPARABLE 0
#else
#define MAPS_COMPARABLE 1
#endif

#define DL_THREADS 3
#define DL_PASSES 200
#define DEFAULT_CYCLES 200
#define NLOCKS 4
#define STACK_SIZE (256 * 1024)
/* occupancy IDs of the hammering process and of the last passages (the
 * cycles' threads count from 1) */
#define HAMMER_ID ((uint64_t)1 << 40)
#define FINAL_ID (HAMMER_ID + 1)

static const enum bakery_algo algos[NLOCKS] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE,
	BAKERY_ALGO_BLACK_WHITE, BAKERY_ALGO_JAYANTI,
};

/* The calls, looked up after each dlopen. */
struct api {
	int (*open)(const char *, unsigned, const struct bakery_config *, bakery_t **);
	int (*close)(bakery_t *);
	int (*lock_open)(bakery_t *, const char *, enum bakery_algo, bakery_lock_t **);
	int (*lock_close)(bakery_lock_t *);
	int (*lock)(bakery_lock_t *);
	int (*unlock)(bakery_lock_t *);
	int (*consistent)(bakery_lock_t *);
	int (*recover)(bakery_t *, unsigned *);
	int (*region_info)(bakery_t *, struct bakery_region_info *);
	int (*unlink)(const char *);
};

/* Shared with the hammering child. */
struct shared {
	struct occupancy occ[NLOCKS];
	uint64_t owner_dead;
	volatile int stop;
	int err;
};

struct thread {
	pthread_t th;
	void *stack;
	const struct api *api;
	unsigned lock;             /* index in algos */
	uint64_t id;
	int hold;                  /* wait holding the lock */
	int pipe_ready[2], pipe_leave[2];
	bakery_t *b;               /* left open for the next cycle to close */
	bakery_lock_t *l;
	int rc;
};

static char region[64];
static char lib_path[4096];
static struct shared *sh;
/* this cycle's threads and the previous cycle's, whose handles it closes */
static struct thread th[2][DL_THREADS];

static void lock_name(unsigned k, char *buf, size_t size)
{
	snprintf(buf, size, "L%u", k);
}

static int resolve(void *h, struct api *a)
{
	*(void **)&a->open = dlsym(h, "bakery_open");
	*(void **)&a->close = dlsym(h, "bakery_close");
	*(void **)&a->lock_open = dlsym(h, "bakery_lock_open");
	*(void **)&a->lock_close = dlsym(h, "bakery_lock_close");
	*(void **)&a->lock = dlsym(h, "bakery_lock");
	*(void **)&a->unlock = dlsym(h, "bakery_unlock");
	*(void **)&a->consistent = dlsym(h, "bakery_consistent");
	*(void **)&a->recover = dlsym(h, "bakery_recover");
	*(void **)&a->region_info = dlsym(h, "bakery_region_info");
	*(void **)&a->unlink = dlsym(h, "bakery_unlink");
	return a->open && a->close && a->lock_open && a->lock_close && a->lock && a->unlock &&
	       a->consistent && a->recover && a->region_info && a->unlink ? 0 : -1;
}

/* Acquire L, repairing an owner death: 0 or the error. */
static int acquire(const struct api *a, bakery_lock_t *l)
{
	int rc;

	while ((rc = a->lock(l)) == BAKERY_ESLOTS || rc == EAGAIN)
		usleep(200);    /* dead slots are being recovered */
	if (rc == EOWNERDEAD) {
		uatomic_inc(&sh->owner_dead);
		return a->consistent(l);
	}
	return rc;
}

static int passage(const struct api *a, bakery_lock_t *l, unsigned k, uint64_t id)
{
	int rc = acquire(a, l);

	if (rc)
		return rc;
	occupancy_pass(&sh->occ[k], id, OCCUPANCY_PAUSE);
	return a->unlock(l);
}

/* ------------------------------------------------------ cycle threads -- */

static void *thread_main(void *arg)
{
	struct thread *t = arg;
	const struct api *a = t->api;
	char name[8], c = 0;
	int rc;

	lock_name(t->lock, name, sizeof(name));
	rc = a->open(region, 0, NULL, &t->b);
	if (!rc)
		rc = a->lock_open(t->b, name, BAKERY_ALGO_DEFAULT, &t->l);
	for (unsigned i = 0; i < DL_PASSES && !rc; i++)
		rc = passage(a, t->l, t->lock, t->id);
	t->rc = rc;
	if (write(t->pipe_ready[1], &c, 1) != 1)
		t->rc = -1;
	if (t->hold) {  /* once the others are done (they would wait for us) */
		if (read(t->pipe_leave[0], &c, 1) != 1 || (!t->rc && (t->rc = acquire(a, t->l))) ||
		    write(t->pipe_ready[1], &c, 1) != 1)
			t->rc = -1;
	}
	if (read(t->pipe_leave[0], &c, 1) != 1)
		t->rc = -1;
	/* the library may be dlclose()d by now: no call, just exit (its
	 * thread-exit handler gives the slot back, or the holder dies) */
	return NULL;
}

static int start(struct thread *t, const struct api *a, unsigned k, uint64_t id, int hold)
{
	pthread_attr_t at;
	int rc;

	t->api = a;
	t->lock = k;
	t->id = id;
	t->hold = hold;
	t->rc = 0;
	t->b = NULL;
	t->l = NULL;
	if (pipe(t->pipe_ready) || pipe(t->pipe_leave))
		return -1;
	pthread_attr_init(&at);
	pthread_attr_setstack(&at, t->stack, STACK_SIZE);
	rc = pthread_create(&t->th, &at, thread_main, t);
	pthread_attr_destroy(&at);
	return rc;
}

static int wait_ready(struct thread *t)
{
	char c;

	return read(t->pipe_ready[0], &c, 1) == 1 && t->rc == 0 ? 0 : -1;
}

static int finish(struct thread *t)
{
	char c = 0;

	if (write(t->pipe_leave[1], &c, 1) != 1 || pthread_join(t->th, NULL))
		return -1;
	close(t->pipe_ready[0]);
	close(t->pipe_ready[1]);
	close(t->pipe_leave[0]);
	close(t->pipe_leave[1]);
	return 0;
}

/* A previous cycle's handles, closed through the calls of this one. */
static int close_previous(const struct api *a, struct thread *prev)
{
	int rc = 0;

	for (int k = 0; k < DL_THREADS; k++) {
		if (prev[k].l && a->lock_close(prev[k].l))
			rc = -1;
		if (prev[k].b && a->close(prev[k].b))
			rc = -1;
		prev[k].l = NULL;
		prev[k].b = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------- cycles -- */

static unsigned exited_holding;

static int fail(const char *what, unsigned cycle)
{
	fprintf(stderr, "FAIL cycle %u: %s\n", cycle, what);
	return 1;
}

static int cycle(unsigned c)
{
	struct thread *cur = th[c % 2], *prev = th[(c + 1) % 2];
	struct api a;
	void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	int hold = (int)(c % DL_THREADS);

	if (!h || resolve(h, &a))
		return fail("dlopen or dlsym failed", c);
	for (int k = 0; k < DL_THREADS; k++)
		if (start(&cur[k], &a, c % NLOCKS, 1 + (uint64_t)c * DL_THREADS + (uint64_t)k,
		          k == hold))
			return fail("cannot start a thread", c);
	for (int k = 0; k < DL_THREADS; k++)
		if (wait_ready(&cur[k]))
			return fail("a thread's calls failed", c);
	if (write(cur[hold].pipe_leave[1], "", 1) != 1 || wait_ready(&cur[hold]))
		return fail("the holder did not acquire", c);
	/* now that lock calls ran (they reap the records of threads that
	 * exited holding), the handles of the previous cycle */
	if (close_previous(&a, prev))
		return fail("a handle of the previous cycle did not close", c);
	if (dlclose(h))
		return fail("dlclose failed", c);
	for (int k = 0; k < DL_THREADS; k++)
		if (finish(&cur[k]))
			return fail("a thread did not exit", c);
	exited_holding++;
	return 0;
}

/* ----------------------------------------------------- the hammerer -- */

static int hammer(void)
{
	struct api a;
	void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	bakery_lock_t *l[NLOCKS];
	bakery_t *b;
	char name[8];
	int rc;

	prctl(PR_SET_PDEATHSIG, SIGKILL);      /* dies with the cycles' process */
	if (!h || resolve(h, &a) || a.open(region, 0, NULL, &b))
		return 1;
	for (unsigned k = 0; k < NLOCKS; k++) {
		lock_name(k, name, sizeof(name));
		if (a.lock_open(b, name, BAKERY_ALGO_DEFAULT, &l[k]))
			return 1;
	}
	for (unsigned i = 0; !CMM_LOAD_SHARED(sh->stop); i++)
		if ((rc = passage(&a, l[i % NLOCKS], i % NLOCKS, HAMMER_ID))) {
			sh->err = rc;
			return 1;
		}
	return 0;
}

/* ------------------------------------------------------------- checks -- */

static unsigned count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

static unsigned count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;   /* the directory stream's own */
}

/* The last passage through every lock, the recovery, and the region's
 * slots: 0 when none is left in use. */
static int final_checks(unsigned cycles)
{
	struct bakery_region_info ri;
	bakery_lock_t *l;
	bakery_t *b;
	struct api a;
	void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	char name[8];
	int bad = 0;

	if (!h || resolve(h, &a) || a.open(region, 0, NULL, &b))
		return fail("cannot reopen", cycles);
	for (unsigned k = 0; k < NLOCKS; k++) {
		lock_name(k, name, sizeof(name));
		if (a.lock_open(b, name, BAKERY_ALGO_DEFAULT, &l) || passage(&a, l, k, FINAL_ID) ||
		    a.lock_close(l))
			bad = fail("a lock does not work after the cycles", cycles);
	}
	if (close_previous(&a, th[0]) || close_previous(&a, th[1]))
		bad = fail("the last cycle's handles did not close", cycles);
	if (a.recover(b, NULL) || a.close(b))
		bad = fail("recover or close failed", cycles);
	if (a.open(region, BAKERY_RDONLY, NULL, &b) || a.region_info(b, &ri) || a.close(b))
		return fail("cannot inspect the region", cycles);
	if (ri.slots_used)
		bad = fail("slots left in use", ri.slots_used);
	dlclose(h);
	return bad;
}

static int run(unsigned cycles, double seconds)
{
	struct timespec t0, now;
	unsigned fds = 0, maps = 0, c;
	pid_t hammerer;
	int bad = 0, st;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	hammerer = fork();
	if (hammerer == 0)
		_exit(hammer());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (c = 0; !bad; c++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds > 0 ? (double)(now.tv_sec - t0.tv_sec) >= seconds : c >= cycles)
			break;
		bad = cycle(c);
		if (c == 1) {   /* the library's first-use state is there; the
		                 * handles of one cycle are left open, as at the end */
			fds = count_fds();
			maps = count_lines("/proc/self/maps");
		}
	}
	if (c >= 2 && (count_fds() != fds ||
	               (MAPS_COMPARABLE && count_lines("/proc/self/maps") != maps)))
		bad = fail("descriptors or mappings leaked", c);
	CMM_STORE_SHARED(sh->stop, 1);
	if (waitpid(hammerer, &st, 0) != hammerer || st != 0)
		bad = fail("the hammering process failed", (unsigned)sh->err);
	if (!bad)
		bad = final_checks(c);
	for (unsigned k = 0; k < NLOCKS; k++)
		if (sh->occ[k].violations || sh->occ[k].counter != sh->occ[k].entries)
			bad = fail("overlap or lost update", k);
	if (sh->owner_dead != exited_holding)
		bad = fail("EOWNERDEAD != threads that exited holding", (unsigned)sh->owner_dead);
	printf("chaos-dlopen: %u dlopen/dlclose cycles, %u thread exits after dlclose (%u "
	       "holding), %llu acquisitions, %llu EOWNERDEAD, %llu violations: %s\n", c,
	       c * DL_THREADS, exited_holding,
	       (unsigned long long)(sh->occ[0].entries + sh->occ[1].entries + sh->occ[2].entries +
	                            sh->occ[3].entries),
	       (unsigned long long)sh->owner_dead,
	       (unsigned long long)(sh->occ[0].violations + sh->occ[1].violations +
	                            sh->occ[2].violations + sh->occ[3].violations),
	       bad ? "FAIL" : "ok");
	return bad;
}

/* Create R with its locks through a first dlopen (closed again). */
static int setup(void)
{
	struct bakery_config cfg = { .slots = 16, .locks = NLOCKS };
	bakery_lock_t *l;
	bakery_t *b;
	struct api a;
	void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	char name[8];

	if (!h || resolve(h, &a) || a.open(region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b))
		return -1;
	for (unsigned k = 0; k < NLOCKS; k++) {
		lock_name(k, name, sizeof(name));
		if (a.lock_open(b, name, algos[k], &l) || a.lock_close(l))
			return -1;
	}
	return a.close(b) || dlclose(h) ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_builddir"), *soak = getenv("BAKERY_CHAOS_SECONDS");
	unsigned cycles = argc > 1 ? (unsigned)atoi(argv[1]) : DEFAULT_CYCLES;
	double seconds = soak ? atof(soak) : 0;
	pid_t pid;
	int st;

	snprintf(lib_path, sizeof(lib_path), "%s/lib/.libs/libbakery.so.0", top ? top : ".");
	if (access(lib_path, R_OK)) {
		printf("SKIP: no shared library at %s\n", lib_path);
		return 77;
	}
	if (cycles < 2) {
		fprintf(stderr, "usage: %s [CYCLES]\n", argv[0]);
		return 99;
	}
	snprintf(region, sizeof(region), "/bkchaos-dl-%d", (int)getpid());
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (int k = 0; k < 2 * DL_THREADS; k++)
		if (!(th[k / DL_THREADS][k % DL_THREADS].stack = aligned_alloc(4096, STACK_SIZE)))
			return 99;
	if (sh == MAP_FAILED)
		return 99;
	/* the cycles run in a child: a crash there is reported, not suffered */
	pid = fork();
	if (pid == 0) {
		st = setup() ? 99 : run(cycles, seconds);
		fflush(stdout);
		_exit(st);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 99;
	shm_unlink(region);
	if (WIFSIGNALED(st)) {
		printf("FAIL: the process died of signal %d\n", WTERMSIG(st));
		return 1;
	}
	return WEXITSTATUS(st);
}
