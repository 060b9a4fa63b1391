/* SPDX-License-Identifier: MIT */
/*
 * test_guard.c - lib/guard.c: a SIGBUS from a shm object cut short under a
 * watched mapping becomes zero pages and BAKERY_EBADREGION in a `lost` word
 * (tests/unit/test_shm_full.c: ENOSPC for a page a full /dev/shm cannot
 * give while the object is whole); everything else keeps
 * the behaviour the process had without the library.
 *
 *   a truncated, watched range reads zeros, all of it, privately, and can
 *   be written; the flag is set
 *   an unwatched range (never watched, or removed) still kills the process
 *   the handler found before ours is called, with its signal mask
 *   a SIGBUS sent with kill() kills as before (SIG_DFL) or stays ignored
 *   (SIG_IGN), even one whose siginfo names a watched address; a fault with
 *   SIG_IGN still kills
 *   hundreds of ranges, removed and reused: a fault touches only its own
 *   range and flag
 *   ranges added and removed by other threads while faults are answered
 *   fork: the child keeps the watched ranges and can add more while the
 *   parent's threads were adding and removing at fork time
 *
 * bakery__guard_add and bakery__guard_remove are hidden symbols: the test links the
 * uninstalled test build, libbakery-test.la, a libtool convenience archive
 * whose objects are linked into the program, where hidden symbols resolve.
 *
 * Children that are meant to die of SIGBUS turn core dumps off and set
 * SIGBUS's action to the default first.
 *
 * Under valgrind, give --vex-iropt-register-updates=allregs-at-mem-access:
 * by default valgrind does not keep every register exact at a memory access,
 * so an access resumed after the handler may run with a stale address
 * register (it then faults at 0).  Tests that fork are left out of the
 * valgrind pass of tests/ci-hardening.sh anyway.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "unit.h"

/* ------------------------------------------------------------- helpers -- */

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* A shm object of PAGES pages, unlinked at once (the descriptor keeps it
 * alive, and nothing is left in /dev/shm whatever happens); -1 on error. */
static int object_make(const char *tag, size_t pages)
{
	char name[TK_NAME_SIZE];
	int fd;

	tk_name(name, sizeof(name), tag);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	shm_unlink(name);
	if (ftruncate(fd, (off_t)(pages * page_size())) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* PAGES pages of FD from page FIRST, shared; NULL on error. */
static unsigned char *object_map(int fd, size_t first, size_t pages)
{
	void *p = mmap(NULL, pages * page_size(), PROT_READ | PROT_WRITE,
	               MAP_SHARED, fd, (off_t)(first * page_size()));

	return p == MAP_FAILED ? NULL : p;
}

static int object_cut(int fd, size_t pages)
{
	return ftruncate(fd, (off_t)(pages * page_size()));
}

/* Accesses the compiler must perform (they are the point of the test). */
static unsigned char peek(const unsigned char *p)
{
	return *(const volatile unsigned char *)p;
}

/* A read whose value is kept: valgrind drops loads whose result is unused,
 * volatile or not, and with them the fault. */
static volatile unsigned char touched;

static void touch(const unsigned char *p)
{
	touched = peek(p);
}

static void poke(unsigned char *p, unsigned char v)
{
	*(volatile unsigned char *)p = v;
}

static bool all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (peek(p + i))
			return false;
	return true;
}

static int lost_of(const int *lost)
{
	return CMM_LOAD_SHARED(*lost);
}

/*
 * For a child meant to die of SIGBUS: no core dump, and SIGBUS's action the
 * default one whatever the Check runner inherited or a sanitizer installed
 * (AddressSanitizer catches SIGBUS itself and aborts: guard.c rightly chains
 * to it, but the child would then die of SIGABRT).
 */
static void sigbus_default_no_core(void)
{
	struct rlimit none = { 0, 0 };

	setrlimit(RLIMIT_CORE, &none);
	signal(SIGBUS, SIG_DFL);
}

/* Install the SIGBUS handler (the first bakery__guard_add does) on a range of its
 * own, without touching anything the test watches.  0 or the step failed. */
static int handler_installed(void)
{
	static unsigned char dummy[64];
	static int dummy_lost;
	struct guard *g;

	return bakery__guard_add(dummy, sizeof(dummy), -1, 0, &dummy_lost, &g);
}

static void sigbus_set(void (*handler)(int), void (*action)(int, siginfo_t *, void *),
                       int mask_signal)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (mask_signal)
		sigaddset(&sa.sa_mask, mask_signal);
	if (action) {
		sa.sa_sigaction = action;
		sa.sa_flags = SA_SIGINFO;
	} else {
		sa.sa_handler = handler;
	}
	sigaction(SIGBUS, &sa, NULL);
}

/* ----------------------------------------------- truncation is survived -- */

static int cut_to_one_page(void *arg)
{
	return object_cut(*(int *)arg, 1) == 0 ? 0 : 1;
}

START_TEST(truncated_range_reads_zeros)
{
	size_t pg = page_size(), len = 4 * pg;
	int fd = object_make("guard-trunc", 4), lost = 0;
	unsigned char *m, byte = 0;
	struct guard *g = NULL;
	struct stat st;

	ck_assert_int_ge(fd, 0);
	m = object_map(fd, 0, 4);
	ck_assert_ptr_nonnull(m);
	memset(m, 0xa5, len);
	ck_assert_int_eq(bakery__guard_add(m, len, fd, len, &lost, &g), 0);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(peek(m + 3 * pg), 0xa5);   /* still the object */
	ck_assert_int_eq(lost_of(&lost), 0);

	/* another process cuts the object to one page */
	ck_assert_int_eq(tk_reap(tk_fork(cut_to_one_page, &fd), 10), 0);

	ck_assert_uint_eq(peek(m + 3 * pg), 0);      /* not SIGBUS */
	ck_assert_int_eq(lost_of(&lost), BAKERY_EBADREGION);   /* cut short */
	ck_assert(all_zero(m, len));                 /* page 0 too: the whole range */
	poke(m + 3 * pg + 5, 7);
	poke(m, 9);
	ck_assert_uint_eq(peek(m + 3 * pg + 5), 7);
	ck_assert_uint_eq(peek(m), 9);

	/* the pages are private: the object is as the other process left it */
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)pg);
	ck_assert_int_eq(pread(fd, &byte, 1, 0), 1);
	ck_assert_uint_eq(byte, 0xa5);

	bakery__guard_remove(g);
	bakery__guard_remove(NULL);                          /* a no-op */
	ck_assert_int_eq(munmap(m, len), 0);
	close(fd);
}
END_TEST

/* ------------------------------------------- unwatched ranges still die -- */

enum unwatched { NO_HANDLER, OTHER_RANGE_WATCHED, ADDED_THEN_REMOVED };

/* Fault on page 3 of a cut object; returns only if the fault was survived. */
static int unwatched_child(void *arg)
{
	enum unwatched how = *(enum unwatched *)arg;
	int fd = object_make("guard-unw", 4), lost = 0;
	unsigned char *m = fd < 0 ? NULL : object_map(fd, 0, 4);
	struct guard *g;

	sigbus_default_no_core();
	if (!m)
		return 1;
	if (how != NO_HANDLER && handler_installed() != 0)
		return 2;
	if (how == ADDED_THEN_REMOVED) {
		if (bakery__guard_add(m, 4 * page_size(), fd, 4 * page_size(), &lost, &g) != 0)
			return 3;
		bakery__guard_remove(g);
	}
	if (object_cut(fd, 1) != 0)
		return 4;
	touch(m + 3 * page_size());
	return 5 + (lost != 0);                      /* survived: wrong */
}

START_TEST(unwatched_range_still_dies)
{
	enum unwatched how = (enum unwatched)_i;

	ck_assert_int_eq(tk_reap(tk_fork(unwatched_child, &how), 10), 128 + SIGBUS);
}
END_TEST

/* --------------------------------------------- the previous handler runs -- */

static sigjmp_buf chained_env;
static volatile sig_atomic_t chained_calls, chained_masked;
static void *volatile chained_addr;

static void chained_note(void)
{
	sigset_t now;

	chained_calls++;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	chained_masked = sigismember(&now, SIGUSR1);
}

static void chained_action(int sig, siginfo_t *info, void *ctx)
{
	chained_addr = info->si_addr;
	chained_note();
	siglongjmp(chained_env, 1);
}

static void chained_handler(int sig)
{
	chained_note();
	siglongjmp(chained_env, 1);
}

/*
 * The application's handler (SA_SIGINFO or not, asking for SIGUSR1 blocked)
 * is installed before the library's; a fault outside the watched range must
 * reach it, and a fault inside must not.
 */
static int chain_child(void *arg)
{
	bool siginfo = *(bool *)arg;
	size_t pg = page_size();
	int fd_w = object_make("guard-chw", 4), fd_u = object_make("guard-chu", 4);
	unsigned char *watched, *unwatched;
	struct sigaction now;
	struct guard *g;
	sigset_t mask;
	int lost = 0;

	sigbus_default_no_core();
	if (fd_w < 0 || fd_u < 0)
		return 1;
	watched = object_map(fd_w, 0, 4);
	unwatched = object_map(fd_u, 0, 4);
	if (!watched || !unwatched)
		return 2;
	sigbus_set(chained_handler, siginfo ? chained_action : NULL, SIGUSR1);
	if (bakery__guard_add(watched, 4 * pg, fd_w, 4 * pg, &lost, &g) != 0)
		return 3;
	sigaction(SIGBUS, NULL, &now);
	if (now.sa_sigaction == chained_action || now.sa_handler == chained_handler)
		return 4;                            /* ours was not installed */
	if (object_cut(fd_u, 1) != 0 || object_cut(fd_w, 1) != 0)
		return 5;

	if (sigsetjmp(chained_env, 1) == 0) {
		touch(unwatched + 3 * pg);
		return 6;                            /* no SIGBUS at all */
	}
	if (chained_calls != 1)
		return 7;
	if (siginfo && chained_addr != unwatched + 3 * pg)
		return 8;
	if (!chained_masked)
		return 9;                            /* its sa_mask was not applied */
	if (lost_of(&lost) != 0)
		return 10;
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	if (sigismember(&mask, SIGUSR1) || sigismember(&mask, SIGBUS))
		return 11;                           /* siglongjmp restored the mask */

	if (peek(watched + 3 * pg) != 0 || lost_of(&lost) != BAKERY_EBADREGION)
		return 12;                           /* ours still answers its ranges */
	if (chained_calls != 1)
		return 13;
	return 0;
}

START_TEST(previous_handler_is_chained)
{
	bool siginfo = _i == 0;

	ck_assert_int_eq(tk_reap(tk_fork(chain_child, &siginfo), 10), 0);
}
END_TEST

/* -------------------------------------------------- a SIGBUS sent to us -- */

enum sent { SENT_DEFAULT, SENT_IGNORED, SENT_WITH_ADDRESS, FAULT_IGNORED };

/* A SIGBUS the process sends itself that names ADDR as si_addr, the way a
 * fault would (rt_sigqueueinfo lets a process forge its own siginfo, as long
 * as si_code says it was sent). */
static void queue_sigbus_at(void *addr)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	info.si_signo = SIGBUS;
	info.si_code = SI_QUEUE;
	info.si_addr = addr;
	syscall(SYS_rt_sigqueueinfo, getpid(), SIGBUS, &info);
}

static int sent_child(void *arg)
{
	enum sent how = *(enum sent *)arg;
	int fd = object_make("guard-sent", 4), lost = 0;
	unsigned char *m = fd < 0 ? NULL : object_map(fd, 0, 4);
	struct guard *g;

	sigbus_default_no_core();
	if (!m)
		return 1;
	if (how != SENT_DEFAULT)
		signal(SIGBUS, SIG_IGN);
	if (bakery__guard_add(m, 4 * page_size(), fd, 4 * page_size(), &lost, &g) != 0)
		return 2;
	if (how == FAULT_IGNORED) {
		bakery__guard_remove(g);
		if (object_cut(fd, 1) != 0)
			return 3;
		touch(m + 3 * page_size());
		return 4;                            /* a fault cannot be ignored */
	}
	if (how == SENT_WITH_ADDRESS)
		queue_sigbus_at(m + page_size());
	else
		kill(getpid(), SIGBUS);
	if (lost_of(&lost) != 0)
		return 5;                            /* a sent signal is no fault */
	if (pwrite(fd, "x", 1, 0) != 1 || peek(m) != 'x')
		return 6;                            /* still the object's pages */
	return how == SENT_DEFAULT ? 7 : 0;
}

START_TEST(sent_sigbus_keeps_its_action)
{
	enum sent how = (enum sent)_i;
	bool ignored = how == SENT_IGNORED || how == SENT_WITH_ADDRESS;
	int expect = ignored ? 0 : 128 + SIGBUS;

	ck_assert_int_eq(tk_reap(tk_fork(sent_child, &how), 10), expect);
}
END_TEST

/* ----------------------------------------------------- many, and reused -- */

#define MANY 200
#define MORE (MANY / 2)

struct many {
	int fd;
	unsigned char *map[MANY + MORE];
	int lost[MANY + MORE];
	struct guard *g[MANY + MORE];
};

static void many_check_lost(const struct many *t, int hit1, int hit2)
{
	for (int i = 0; i < MANY + MORE; i++)
		ck_assert_msg(lost_of(&t->lost[i]) ==
		                      (i == hit1 || i == hit2 ? BAKERY_EBADREGION : 0),
		              "range %d: lost %d", i, lost_of(&t->lost[i]));
}

static bool was_removed(const struct many *t, const struct guard *g)
{
	for (int i = 1; i < MANY; i += 2)
		if (t->g[i] == g)
			return true;
	return false;
}

/* Page I of the object through its own mapping after the object is grown
 * back and page I written behind the mappings' backs. */
static unsigned char many_probe(struct many *t, int i)
{
	unsigned char v = 0x5a;

	ck_assert_int_eq(pwrite(t->fd, &v, 1, (off_t)((size_t)i * page_size())), 1);
	return peek(t->map[i]);
}

START_TEST(many_ranges_removed_and_reused)
{
	static struct many t;
	size_t pg = page_size();
	int old = 2, reused = MANY + 51;

	t.fd = object_make("guard-many", MANY + MORE);
	ck_assert_int_ge(t.fd, 0);
	for (int i = 0; i < MANY + MORE; i++) {
		t.map[i] = object_map(t.fd, (size_t)i, 1);
		ck_assert_ptr_nonnull(t.map[i]);
	}
	for (int i = 0; i < MANY; i++)
		ck_assert_int_eq(bakery__guard_add(t.map[i], pg, t.fd, (uint64_t)(i + 1) * pg, &t.lost[i],
		                                   &t.g[i]), 0);
	for (int i = 1; i < MANY; i += 2)
		bakery__guard_remove(t.g[i]);
	for (int i = MANY; i < MANY + MORE; i++) {
		ck_assert_int_eq(bakery__guard_add(t.map[i], pg, t.fd, (uint64_t)(i + 1) * pg, &t.lost[i],
		                                   &t.g[i]), 0);
		ck_assert_msg(was_removed(&t, t.g[i]), "guard %d is not a reused node", i);
	}

	ck_assert_int_eq(object_cut(t.fd, 0), 0);
	ck_assert_uint_eq(peek(t.map[old]), 0);
	many_check_lost(&t, old, -1);
	ck_assert_uint_eq(peek(t.map[reused]), 0);
	many_check_lost(&t, old, reused);

	/* Only the two faulted pages were replaced: their neighbours (one of
	 * them a removed range) still show the object. */
	ck_assert_int_eq(object_cut(t.fd, MANY + MORE), 0);
	ck_assert_uint_eq(many_probe(&t, old), 0);
	ck_assert_uint_eq(many_probe(&t, reused), 0);
	ck_assert_uint_eq(many_probe(&t, old - 1), 0x5a);
	ck_assert_uint_eq(many_probe(&t, old + 1), 0x5a);
	ck_assert_uint_eq(many_probe(&t, reused - 1), 0x5a);
	ck_assert_uint_eq(many_probe(&t, reused + 1), 0x5a);

	for (int i = 0; i < MANY + MORE; i++) {
		if (i < MANY && i % 2)
			continue;
		bakery__guard_remove(t.g[i]);
	}
	for (int i = 0; i < MANY + MORE; i++)
		munmap(t.map[i], pg);
	close(t.fd);
}
END_TEST

/* ------------------------------------------------------- other threads -- */

#define CHURN_THREADS 4
#define CHURN_HELD 8

struct churn {
	pthread_t thread;
	int stop;                  /* CMM_LOAD_SHARED */
	int errors;
	unsigned long rounds;
	unsigned char *pages;      /* CHURN_HELD anonymous pages, never faulted */
	int lost[CHURN_HELD];
};

/* Keep up to CHURN_HELD ranges watched, adding and removing in a loop. */
static void *churn_main(void *arg)
{
	struct churn *c = arg;
	struct guard *held[CHURN_HELD] = { NULL };
	size_t pg = page_size();

	while (!CMM_LOAD_SHARED(c->stop)) {
		unsigned k = (unsigned)(c->rounds++ % CHURN_HELD);

		bakery__guard_remove(held[k]);
		held[k] = NULL;
		if (bakery__guard_add(c->pages + k * pg, pg, -1, 0, &c->lost[k], &held[k]) != 0)
			c->errors++;
	}
	for (unsigned k = 0; k < CHURN_HELD; k++)
		bakery__guard_remove(held[k]);
	return NULL;
}

static void churn_start(struct churn *c)
{
	c->pages = mmap(NULL, CHURN_HELD * page_size(), PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(c->pages != MAP_FAILED);
	ck_assert_int_eq(pthread_create(&c->thread, NULL, churn_main, c), 0);
}

static void churn_stop(struct churn *c)
{
	CMM_STORE_SHARED(c->stop, 1);
	ck_assert_int_eq(pthread_join(c->thread, NULL), 0);
	ck_assert_int_eq(c->errors, 0);
	ck_assert_uint_gt(c->rounds, 0);
	for (unsigned k = 0; k < CHURN_HELD; k++)
		ck_assert_msg(lost_of(&c->lost[k]) == 0, "a churned range was flagged");
	munmap(c->pages, CHURN_HELD * page_size());
}

/* One watched mapping of FD's 4 pages, the object cut, the fault answered.
 * 0, or the step that failed. */
static int fault_once(int fd)
{
	size_t pg = page_size();
	unsigned char *m;
	struct guard *g = NULL;
	int lost = 0, rc = 0;

	if (object_cut(fd, 4) != 0 || !(m = object_map(fd, 0, 4)))
		return 1;
	if (bakery__guard_add(m, 4 * pg, fd, 4 * pg, &lost, &g) != 0)
		rc = 2;
	else if (object_cut(fd, 1) != 0)
		rc = 3;
	else if (peek(m + 3 * pg) != 0 || lost_of(&lost) != BAKERY_EBADREGION || peek(m) != 0)
		rc = 4;
	bakery__guard_remove(g);
	munmap(m, 4 * pg);
	return rc;
}

START_TEST(faults_while_threads_add_and_remove)
{
	static struct churn c[CHURN_THREADS];
	int fd = object_make("guard-churn", 4);
	double end = tk_now(CLOCK_MONOTONIC) + 0.3;
	unsigned faults = 0;

	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < CHURN_THREADS; i++)
		churn_start(&c[i]);
	do {
		ck_assert_int_eq(fault_once(fd), 0);
		faults++;
	} while (tk_now(CLOCK_MONOTONIC) < end);
	for (int i = 0; i < CHURN_THREADS; i++)
		churn_stop(&c[i]);
	ck_assert_uint_gt(faults, 0);
	close(fd);
}
END_TEST

/* ----------------------------------------------------------------- fork -- */

struct fork_case {
	int fd;                    /* the parent's watched object */
	unsigned char *m;
	int *lost;
	int fd2;                   /* a fresh object for the child's own guard */
};

/* The child: the parent's range is still watched, and it can add its own. */
static int fork_child(void *arg)
{
	struct fork_case *f = arg;

	if (object_cut(f->fd, 1) != 0)
		return 1;
	if (peek(f->m + 3 * page_size()) != 0 || lost_of(f->lost) != BAKERY_EBADREGION)
		return 2;
	return fault_once(f->fd2) ? 3 : 0;       /* hangs if the mutex stayed held */
}

START_TEST(fork_child_keeps_and_adds)
{
	static struct churn c;
	size_t pg = page_size();
	struct fork_case f;
	struct guard *g;
	int lost = 0;

	f.fd2 = object_make("guard-fork2", 4);
	ck_assert_int_ge(f.fd2, 0);
	churn_start(&c);
	for (int round = 0; round < 20; round++) {
		lost = 0;
		f.fd = object_make("guard-fork", 4);
		ck_assert_int_ge(f.fd, 0);
		f.m = object_map(f.fd, 0, 4);
		ck_assert_ptr_nonnull(f.m);
		f.lost = &lost;
		ck_assert_int_eq(bakery__guard_add(f.m, 4 * pg, f.fd, 4 * pg, &lost, &g), 0);
		ck_assert_int_eq(tk_reap(tk_fork(fork_child, &f), 10), 0);
		ck_assert_int_eq(lost_of(&lost), 0);     /* the child's copy was set */
		ck_assert_uint_eq(peek(f.m + 3 * pg), 0);  /* the child cut it: ours too */
		ck_assert_int_eq(lost_of(&lost), BAKERY_EBADREGION);
		bakery__guard_remove(g);
		munmap(f.m, 4 * pg);
		close(f.fd);
	}
	churn_stop(&c);
	close(f.fd2);
}
END_TEST

/* ---------------------------------------------------------------- main -- */

static Suite *guard_suite(void)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("guard");

	tcase_set_timeout(tc, 30);
	/* First the tests whose children need a process that never installed
	 * the handler: with CK_FORK=no the tests share one process. */
	tcase_add_loop_test(tc, unwatched_range_still_dies, NO_HANDLER, ADDED_THEN_REMOVED + 1);
	tcase_add_loop_test(tc, previous_handler_is_chained, 0, 2);
	tcase_add_loop_test(tc, sent_sigbus_keeps_its_action, SENT_DEFAULT, FAULT_IGNORED + 1);
	tcase_add_test(tc, truncated_range_reads_zeros);
	tcase_add_test(tc, many_ranges_removed_and_reused);
	tcase_add_test(tc, faults_while_threads_add_and_remove);
	tcase_add_test(tc, fork_child_keeps_and_adds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(guard_suite());
}
