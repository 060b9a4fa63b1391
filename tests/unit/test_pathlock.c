/* SPDX-License-Identifier: MIT */
/*
 * test_pathlock.c - path locks (bakery_path_*): the lock of a file or a
 * directory, named by the file's identity, in one region per user.
 *
 *   - the calls and their errors; a directory is locked as a file is;
 *   - bakery_path_acquire's options: a try, a deadline, a cancel word and
 *     a signal end the wait with the lock not held;
 *   - a path lock's bakery_lock_info: its holder, how its owner-died mark
 *     came (a death, a failed repair), and of a lock taken back;
 *   - processes exclude each other through different paths to one file
 *     (occupancy check);
 *   - a renamed file keeps its lock, a replaced file gets a new one, a file
 *     that gets a deleted one's inode number inherits nothing of its lock
 *     (no holder, no owner-died mark);
 *   - a full table takes back the locks nobody uses, while one process
 *     holds an entry (kept), one has a stale handle (made again
 *     transparently) and one died holding another (kept, owner-died);
 *   - 10,000 distinct paths, one after another and from several processes
 *     at once, leave no descriptor, no memory and no shm object behind;
 *   - a reclaimer killed half-way (test build: BAKERY_CRASH_AT) leaves every
 *     entry either its lock or free.
 *
 * Every test sets BAKERY_PATH_REGION to a region of its own (tk_name), and
 * keeps its files in a directory of its own.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/occupancy.h"
#include "unit.h"

/* ------------------------------------------------------------- helpers -- */

/* The path region of this test: a name of the run, removed with it. */
static void paths_region(char *name, const char *tag)
{
	tk_name(name, TK_NAME_SIZE, tag);
	ck_assert_int_eq(setenv(BAKERY_PATH_REGION_ENV, name, 1), 0);
}

/* A directory of the test's own: under TMPDIR, or (ON_DISK) under the
 * build directory, whose file system reuses inode numbers as disks do. */
static void test_dir(char *dir, size_t size, bool on_disk)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, size, "%s/bakery-pathlock.XXXXXX", on_disk ? "." : tmp ? tmp : "/tmp");
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s: %s", dir, strerror(errno));
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void test_dir_remove(const char *dir)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void file_in(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);

	ck_assert(n > 0 && (size_t)n < size);
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_msg(fd >= 0, "creating %s: %s", path, strerror(errno));
	close(fd);
}

static bakery_path_t *path_open(const char *path, unsigned flags)
{
	bakery_path_t *p = NULL;
	int rc = bakery_path_open(path, flags, &p);

	ck_assert_msg(rc == 0, "opening the lock of %s: %s", path, bakery_strerror(rc));
	return p;
}

static void lock_name_of(const char *path, char *name)
{
	struct bakery_path_info info;
	bakery_path_t *p = path_open(path, 0);

	ck_assert_int_eq(bakery_path_info(p, &info), 0);
	memcpy(name, info.lock, sizeof(info.lock));
	ck_assert_int_eq(bakery_path_close(p), 0);
}

/* Can this process take PATH's lock at once?  0 or the trylock's error. */
static int try_path(const char *path)
{
	bakery_path_t *p = path_open(path, 0);
	int rc = bakery_path_trylock(p);

	if (rc == 0 || rc == EOWNERDEAD)
		ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	return rc;
}

static unsigned fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	ck_assert(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Objects in /dev/shm whose name begins as NAME's up to its last '-'
 * (the run's and this process's part of a tk_name). */
static unsigned shm_objects_like(const char *name)
{
	const char *base = name[0] == '/' ? name + 1 : name;
	size_t n = (size_t)(strrchr(base, '-') - base);
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	unsigned count = 0;

	ck_assert(d != NULL);
	while ((e = readdir(d)))
		count += strncmp(e->d_name, base, n) == 0;
	closedir(d);
	return count;
}

/* -------------------------------------------------------- a holder child -- */

/* A process that takes PATH's lock (shared if SHARED), says so, and keeps
 * it until RELEASE opens (or until it is killed). */
struct holder {
	const char *path;
	bool shared;
	struct tk_gate held, release;
};

static int holder_main(void *arg)
{
	struct holder *h = arg;
	bakery_path_t *p;
	int rc;

	if (bakery_path_open(h->path, 0, &p))
		return 1;
	rc = h->shared ? bakery_path_rdlock(p) : bakery_path_lock(p);
	if (rc != 0 && rc != EOWNERDEAD)
		return 2;
	tk_gate_open(&h->held);
	tk_gate_wait(&h->release, 60);
	if (bakery_path_unlock(p) || bakery_path_close(p))
		return 3;
	return 0;
}

static pid_t holder_start(struct holder *h, const char *path, bool shared)
{
	pid_t pid;

	h->path = path;
	h->shared = shared;
	tk_gate_init(&h->held);
	tk_gate_init(&h->release);
	pid = tk_fork(holder_main, h);
	ck_assert_msg(tk_gate_wait(&h->held, 20), "the holder never took the lock of %s", path);
	return pid;
}

static void holder_stop(struct holder *h, pid_t pid)
{
	tk_gate_open(&h->release);
	ck_assert_int_eq(tk_reap(pid, 20), 0);
	tk_gate_close(&h->held);
	tk_gate_close(&h->release);
}

/* A process that dies (SIGKILL) holding PATH's lock: owner-died. */
static int die_holding(void *arg)
{
	bakery_path_t *p;

	if (bakery_path_open(arg, 0, &p) || bakery_path_lock(p))
		return 1;
	kill(getpid(), SIGKILL);
	return 2;
}

static void kill_a_holder_of(const char *path)
{
	ck_assert_int_eq(tk_reap(tk_fork(die_holding, (void *)path), 20), 128 + SIGKILL);
}

/* --------------------------------------------------------------- calls -- */

START_TEST(calls_and_errors)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], file[PATH_MAX], missing[PATH_MAX];
	struct bakery_path_info info;
	bakery_path_t *p, *q;
	struct timespec past = { 0, 0 }, soon;
	struct stat st;

	paths_region(region, "pathcalls");
	test_dir(dir, sizeof(dir), false);
	file_in(file, sizeof(file), dir, "f");
	file_in(missing, sizeof(missing), dir, "nothing/here");

	ck_assert_int_eq(bakery_path_open(NULL, 0, &p), EINVAL);
	ck_assert_int_eq(bakery_path_open("", 0, &p), EINVAL);
	ck_assert_int_eq(bakery_path_open(file, 0, NULL), EINVAL);
	ck_assert_int_eq(bakery_path_open(file, BAKERY_EXCL, &p), EINVAL);
	ck_assert_int_eq(bakery_path_open(file, 0, &p), ENOENT);       /* not created */
	ck_assert_int_eq(access(file, F_OK), -1);
	ck_assert_int_eq(bakery_path_open(missing, BAKERY_CREATE, &p), ENOENT);
	ck_assert_int_eq(bakery_path_close(NULL), EINVAL);
	ck_assert_int_eq(bakery_path_lock(NULL), EINVAL);
	ck_assert_int_eq(bakery_path_unlock(NULL), EINVAL);
	ck_assert_int_eq(bakery_path_consistent(NULL), EINVAL);
	ck_assert_int_eq(bakery_path_info(NULL, &info), EINVAL);

	/* BAKERY_CREATE makes the file, as flock(1) does */
	p = path_open(file, BAKERY_CREATE);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(bakery_path_info(p, NULL), EINVAL);
	ck_assert_int_eq(bakery_path_info(p, &info), 0);
	ck_assert_str_eq(info.region, region);
	ck_assert_uint_eq(info.dev, st.st_dev);
	ck_assert_uint_eq(info.ino, st.st_ino);
	ck_assert_int_eq(strncmp(info.lock, BAKERY_PATH_LOCK_PREFIX,
	                         strlen(BAKERY_PATH_LOCK_PREFIX)), 0);
	ck_assert_msg(info.stamp != BAKERY_PATH_STAMP_NONE,
	              "%s: the file system tells no reused inode apart", dir);

	/* every mode of the lock */
	ck_assert_int_eq(bakery_path_unlock(p), EPERM);
	ck_assert_int_eq(bakery_path_lock(p), 0);
	ck_assert_int_eq(bakery_path_consistent(p), EINVAL);   /* nothing to repair */
	ck_assert_int_eq(bakery_path_close(p), EBUSY);         /* held: nothing closed */
	q = path_open(file, 0);                                 /* the same lock */
	ck_assert_int_eq(bakery_path_trylock(q), EDEADLK);
	ck_assert_int_eq(bakery_path_unlock(q), 0);
	ck_assert_int_eq(bakery_path_trylock(p), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_rdlock(p), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_tryrdlock(p), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_timedlock(p, NULL), EINVAL);
	ck_assert_int_eq(bakery_path_clocklock(p, CLOCK_MONOTONIC, NULL), EINVAL);
	ck_assert_int_eq(bakery_path_timedlock(p, &past), 0);  /* one attempt */
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	soon = tk_in(CLOCK_MONOTONIC, 1);
	ck_assert_int_eq(bakery_path_clockrdlock(p, CLOCK_MONOTONIC, &soon), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	soon = tk_in(CLOCK_REALTIME, 1);
	ck_assert_int_eq(bakery_path_timedrdlock(p, &soon), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_close(q), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	test_dir_remove(dir);
}
END_TEST

/* A directory has a lock as a file has, taken and contended across
 * processes; BAKERY_CREATE on it creates nothing. */
START_TEST(a_directory_is_locked)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], slash[PATH_MAX];
	struct holder h;
	bakery_path_t *p;
	pid_t pid;

	paths_region(region, "pathdir");
	test_dir(dir, sizeof(dir), false);
	file_in(slash, sizeof(slash), dir, "");
	pid = holder_start(&h, dir, false);
	ck_assert_int_eq(try_path(dir), EBUSY);
	p = path_open(slash, BAKERY_CREATE);            /* the same directory */
	ck_assert_int_eq(bakery_path_trylock(p), EBUSY);
	holder_stop(&h, pid);
	ck_assert_int_eq(bakery_path_trylock(p), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	test_dir_remove(dir);
}
END_TEST

/* ------------------------------------------------ acquiring with options -- */

static volatile sig_atomic_t usr1_caught;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_caught++;
}

/* A thread that calls bakery_path_acquire with OPTS (and lets go of what
 * it got). */
struct path_waiter {
	bakery_path_t *p;
	struct bakery_acquire_opts opts;
	pthread_t thread;
	int rc, done;
};

static void *path_waiter_main(void *arg)
{
	struct path_waiter *w = arg;
	int rc = bakery_path_acquire(w->p, &w->opts);

	if (rc == 0 || rc == EOWNERDEAD)
		bakery_path_unlock(w->p);
	w->rc = rc;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void path_waiter_start(struct path_waiter *w)
{
	w->done = 0;
	w->rc = -1;
	ck_assert_int_eq(pthread_create(&w->thread, NULL, path_waiter_main, w), 0);
}

static bool path_waiter_done(void *arg)
{
	const struct path_waiter *w = arg;

	return __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

static int path_waiter_join(struct path_waiter *w)
{
	ck_assert_int_eq(pthread_join(w->thread, NULL), 0);
	return w->rc;
}

/* bakery_path_acquire is bakery_acquire on the path's lock: behind another
 * process's hold, a try, a deadline, a cancel word (already set, or set
 * while the caller waits) and a signal (BAKERY_ACQUIRE_INTR) each end the
 * wait with the lock not held and the line left clean: once the holder
 * lets go, a try takes the lock at once. */
START_TEST(path_acquire_takes_the_options)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], file[PATH_MAX];
	struct bakery_acquire_opts o = { .flags = 0 };
	struct path_waiter w = { .p = NULL };
	static uint32_t word;
	struct sigaction sa;
	struct timespec past;
	struct holder h;
	bakery_path_t *p;
	pid_t pid;

	paths_region(region, "pathopts");
	test_dir(dir, sizeof(dir), false);
	file_in(file, sizeof(file), dir, "f");
	touch(file);
	p = path_open(file, 0);
	ck_assert_int_eq(bakery_path_acquire(NULL, &o), EINVAL);
	ck_assert_int_eq(bakery_path_acquire(p, NULL), EINVAL);
	o.flags = 0x80;
	ck_assert_int_eq(bakery_path_acquire(p, &o), EINVAL);
	o.flags = 0;
	ck_assert_int_eq(bakery_path_acquire(p, &o), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	o.flags = BAKERY_ACQUIRE_SHARED;
	ck_assert_int_eq(bakery_path_acquire(p, &o), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);

	pid = holder_start(&h, file, false);
	o.flags = BAKERY_ACQUIRE_TRY;
	ck_assert_int_eq(bakery_path_acquire(p, &o), EBUSY);
	o.flags = BAKERY_ACQUIRE_TRY | BAKERY_ACQUIRE_SHARED;
	ck_assert_int_eq(bakery_path_acquire(p, &o), EBUSY);
	past = tk_in(CLOCK_MONOTONIC, 0.05);
	o = (struct bakery_acquire_opts){ .clock = CLOCK_MONOTONIC, .deadline = &past };
	ck_assert_int_eq(bakery_path_acquire(p, &o), ETIMEDOUT);
	word = 1;
	o = (struct bakery_acquire_opts){ .cancel = &word };
	ck_assert_int_eq(bakery_path_acquire(p, &o), ECANCELED);

	/* a cancel word set while a thread waits */
	word = 0;
	w.p = p;
	w.opts = (struct bakery_acquire_opts){ .cancel = &word };
	path_waiter_start(&w);
	usleep(50000);
	ck_assert_int_eq(bakery_cancel(&word), 0);
	ck_assert_msg(path_waiter_join(&w) == ECANCELED, "waiter: %s", bakery_strerror(w.rc));

	/* a signal that interrupts the wait's sleep (sent again until it
	 * comes while the waiter sleeps) */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	w.opts = (struct bakery_acquire_opts){ .flags = BAKERY_ACQUIRE_INTR };
	path_waiter_start(&w);
	do
		ck_assert_int_eq(pthread_kill(w.thread, SIGUSR1), 0);
	while (!tk_wait_until(path_waiter_done, &w, 0.1));
	ck_assert_msg(path_waiter_join(&w) == EINTR, "waiter: %s", bakery_strerror(w.rc));
	ck_assert_int_ge(usr1_caught, 1);
	signal(SIGUSR1, SIG_DFL);

	holder_stop(&h, pid);
	ck_assert_int_eq(try_path(file), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	test_dir_remove(dir);
}
END_TEST

/* A process that takes PATH's lock, is told its holder died, and dies
 * too without repairing (a failed repair). */
static int die_told(void *arg)
{
	bakery_path_t *p;

	if (bakery_path_open(arg, 0, &p) || bakery_path_lock(p) != EOWNERDEAD)
		return 1;
	kill(getpid(), SIGKILL);
	return 2;
}

static struct bakery_lock_info path_lock_info(bakery_path_t *p)
{
	struct bakery_lock_info li;
	int rc = bakery_path_lock_info(p, &li);

	ck_assert_msg(rc == 0, "bakery_path_lock_info: %s", bakery_strerror(rc));
	return li;
}

/* bakery_path_lock_info: the lock's name, holder and owner-died mark, a
 * death told from a failed repair; a lock removed since the handle's last
 * call is made again, and its info is the new lock's. */
START_TEST(the_lock_info_of_a_path)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], f[PATH_MAX];
	struct bakery_path_info info;
	struct bakery_lock_info li;
	bakery_lock_t *l;
	bakery_path_t *p;
	bakery_t *b;

	paths_region(region, "pathinfo");
	test_dir(dir, sizeof(dir), false);
	file_in(f, sizeof(f), dir, "f");
	p = path_open(f, BAKERY_CREATE);
	ck_assert_int_eq(bakery_path_lock_info(NULL, &li), EINVAL);
	ck_assert_int_eq(bakery_path_lock_info(p, NULL), EINVAL);
	ck_assert_int_eq(bakery_path_info(p, &info), 0);
	li = path_lock_info(p);
	ck_assert_str_eq(li.name, info.lock);
	ck_assert_int_eq(li.holder, -1);
	ck_assert_int_eq(bakery_path_lock(p), 0);
	ck_assert_int_ge(path_lock_info(p).holder, 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);

	/* a death, then a failed repair, then a repair */
	kill_a_holder_of(f);
	ck_assert_int_eq(path_lock_info(p).state, BAKERY_LOCK_OWNER_DIED);
	ck_assert_int_eq(tk_reap(tk_fork(die_told, f), 20), 128 + SIGKILL);
	ck_assert_int_eq(bakery_path_lock(p), EOWNERDEAD);
	ck_assert_int_eq(path_lock_info(p).owner_dead, BAKERY_OWNER_DEAD_UNREPAIRED);
	ck_assert_int_eq(bakery_path_consistent(p), 0);
	ck_assert_int_eq(path_lock_info(p).owner_dead, 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);

	/* removed by hand: made again, and it is the new lock's info */
	ck_assert_int_eq(bakery_open(info.region, 0, NULL, &b), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, info.lock), 0);
	li = path_lock_info(p);
	ck_assert_str_eq(li.name, info.lock);
	ck_assert_uint_eq(li.acquisitions, 0);
	ck_assert_int_eq(bakery_lock_lookup(b, info.lock, BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	test_dir_remove(dir);
}
END_TEST

/* ------------------------------------------------------------ exclusion -- */

#define EXCL_PROCS 4
#define EXCL_ROUNDS 300

struct excl {
	struct occupancy occ;
	char paths[EXCL_PROCS][PATH_MAX];
	int errors;
};

/* Each process takes the lock through a path of its own to the one file
 * (the name, a hard link, a symbolic link, a relative path), opening it
 * anew every few rounds. */
static int excl_main(void *arg)
{
	struct excl *x = arg;
	unsigned me = (unsigned)(uatomic_add_return(&x->occ.arrived, 1) - 1);
	bakery_path_t *p = NULL;

	for (unsigned i = 0; i < EXCL_ROUNDS; i++) {
		if (!p && bakery_path_open(x->paths[me % EXCL_PROCS], 0, &p))
			return 1;
		if (bakery_path_lock(p))
			return 2;
		occupancy_pass(&x->occ, (uint64_t)getpid(), OCCUPANCY_PAUSE);
		if (bakery_path_unlock(p))
			return 3;
		if (i % 7 == 6) {
			if (bakery_path_close(p))
				return 4;
			p = NULL;
		}
	}
	return p && bakery_path_close(p) ? 5 : 0;
}

START_TEST(processes_exclude_each_other_through_any_path)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], cwd[PATH_MAX];
	struct excl *x = tk_shared(sizeof(*x));
	pid_t pids[EXCL_PROCS];

	paths_region(region, "pathexcl");
	test_dir(dir, sizeof(dir), false);
	ck_assert(getcwd(cwd, sizeof(cwd)) != NULL);
	file_in(x->paths[0], PATH_MAX, dir, "file");
	file_in(x->paths[1], PATH_MAX, dir, "hard");
	file_in(x->paths[2], PATH_MAX, dir, "soft");
	touch(x->paths[0]);
	ck_assert_int_eq(link(x->paths[0], x->paths[1]), 0);
	ck_assert_int_eq(symlink("file", x->paths[2]), 0);
	ck_assert_int_eq(chdir(dir), 0);
	snprintf(x->paths[3], PATH_MAX, "./file");
	for (unsigned i = 0; i < EXCL_PROCS; i++)
		pids[i] = tk_fork(excl_main, x);
	for (unsigned i = 0; i < EXCL_PROCS; i++)
		ck_assert_int_eq(tk_reap(pids[i], 120), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_uint_eq(x->occ.violations, 0);
	ck_assert_uint_eq(x->occ.entries, EXCL_PROCS * EXCL_ROUNDS);
	ck_assert_uint_eq(x->occ.counter, EXCL_PROCS * EXCL_ROUNDS);
	test_dir_remove(dir);
}
END_TEST

/* ------------------------------------------------------------- identity -- */

START_TEST(a_renamed_file_keeps_its_lock)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	char before[BAKERY_LOCK_NAME_MAX + 1], after[BAKERY_LOCK_NAME_MAX + 1];
	struct holder h;
	pid_t pid;

	paths_region(region, "pathrename");
	test_dir(dir, sizeof(dir), false);
	file_in(a, sizeof(a), dir, "a");
	file_in(b, sizeof(b), dir, "b");
	touch(a);
	lock_name_of(a, before);
	pid = holder_start(&h, a, false);
	ck_assert_int_eq(rename(a, b), 0);
	lock_name_of(b, after);
	ck_assert_str_eq(before, after);
	ck_assert_int_eq(try_path(b), EBUSY);           /* held under its old name */
	touch(a);                                       /* a new file at the old path */
	ck_assert_int_eq(try_path(a), 0);
	holder_stop(&h, pid);
	ck_assert_int_eq(try_path(b), 0);
	test_dir_remove(dir);
}
END_TEST

START_TEST(a_replaced_file_gets_a_new_lock)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], a[PATH_MAX], tmp[PATH_MAX];
	char before[BAKERY_LOCK_NAME_MAX + 1], after[BAKERY_LOCK_NAME_MAX + 1];
	struct holder h;
	pid_t pid;

	paths_region(region, "pathreplace");
	test_dir(dir, sizeof(dir), false);
	file_in(a, sizeof(a), dir, "a");
	file_in(tmp, sizeof(tmp), dir, "a.new");
	touch(a);
	lock_name_of(a, before);
	pid = holder_start(&h, a, false);
	ck_assert_int_eq(try_path(a), EBUSY);
	touch(tmp);
	ck_assert_int_eq(rename(tmp, a), 0);            /* replaced: a new inode */
	lock_name_of(a, after);
	ck_assert_str_ne(before, after);
	ck_assert_int_eq(try_path(a), 0);               /* not the old file's lock */
	holder_stop(&h, pid);
	test_dir_remove(dir);
}
END_TEST

static struct statx file_statx(const char *path)
{
	struct statx sx;

	ck_assert_int_eq(statx(AT_FDCWD, path, 0, STATX_INO | STATX_BTIME, &sx), 0);
	return sx;
}

static bool same_birth(const struct statx *a, const struct statx *b)
{
	return a->stx_btime.tv_sec == b->stx_btime.tv_sec &&
	       a->stx_btime.tv_nsec == b->stx_btime.tv_nsec;
}

/* Create files at PATH until one gets inode number INO (a born later than
 * OLD, where the file system keeps birth times); false if none did. */
static bool create_successor(const char *path, const struct statx *old)
{
	for (unsigned i = 0; i < 2000; i++) {
		struct statx sx;

		touch(path);
		sx = file_statx(path);
		if (sx.stx_ino == old->stx_ino &&
		    (!(sx.stx_mask & STATX_BTIME) || !same_birth(&sx, old)))
			return true;
		ck_assert_int_eq(unlink(path), 0);
		if (sx.stx_ino == old->stx_ino)
			tk_sleep_ms(1);         /* born in the same tick: later */
	}
	return false;
}

/*
 * A file that a holder died holding (owner-died) is deleted, and a new file
 * gets its inode number: the new file's lock is a lock of its own (no
 * EOWNERDEAD), while the old lock keeps its mark.  Where the inode number
 * is not reused within 2,000 files (tmpfs), only the names are compared.
 */
START_TEST(a_reused_inode_inherits_nothing)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	char old_name[BAKERY_LOCK_NAME_MAX + 1], new_name[BAKERY_LOCK_NAME_MAX + 1];
	struct statx old;
	bakery_path_t *stale, *p;

	paths_region(region, "pathreuse");
	test_dir(dir, sizeof(dir), true);
	file_in(a, sizeof(a), dir, "a");
	file_in(b, sizeof(b), dir, "b");
	touch(a);
	old = file_statx(a);
	stale = path_open(a, 0);
	lock_name_of(a, old_name);
	kill_a_holder_of(a);
	ck_assert_int_eq(unlink(a), 0);
	if (!create_successor(b, &old)) {
		fprintf(stderr, "%s: inode %llu was not reused: names compared only\n", dir,
		        (unsigned long long)old.stx_ino);
		touch(b);
	}
	/* the successor's lock starts afresh: no owner-died mark */
	p = path_open(b, 0);
	ck_assert_int_eq(bakery_path_lock(p), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	lock_name_of(b, new_name);
	ck_assert_str_ne(old_name, new_name);
	/* the old lock still has its mark: the test did leave one */
	ck_assert_int_eq(bakery_path_lock(stale), EOWNERDEAD);
	ck_assert_int_eq(bakery_path_consistent(stale), 0);
	ck_assert_int_eq(bakery_path_unlock(stale), 0);
	ck_assert_int_eq(bakery_path_close(stale), 0);
	test_dir_remove(dir);
}
END_TEST

/* ---------------------------------------------------------- reclaiming -- */

/* A process that takes PATH's lock once (its name into NAME), then waits
 * with its handle (stale once the lock is reclaimed), then takes it again
 * when told, says so, and keeps it until told again. */
struct stale {
	char path[PATH_MAX];
	char name[BAKERY_LOCK_NAME_MAX + 1];
	struct tk_gate ready, go, held, release;
};

static int stale_main(void *arg)
{
	struct stale *s = arg;
	struct bakery_path_info info;
	bakery_path_t *p;

	if (bakery_path_open(s->path, 0, &p) || bakery_path_lock(p) || bakery_path_unlock(p) ||
	    bakery_path_info(p, &info))
		return 1;
	memcpy(s->name, info.lock, sizeof(s->name));
	tk_gate_open(&s->ready);
	tk_gate_wait(&s->go, 60);
	if (bakery_path_lock(p))
		return 2;
	tk_gate_open(&s->held);
	tk_gate_wait(&s->release, 60);
	return bakery_path_unlock(p) || bakery_path_close(p) ? 3 : 0;
}

/* The index of lock NAME in region B, or -1. */
static int lock_index_of(bakery_t *b, const char *name)
{
	struct bakery_lock_info li;
	struct bakery_region_info ri;

	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	for (unsigned i = 0; i < ri.locks; i++)
		if (bakery_lock_info(b, i, &li) == 0 && !strcmp(li.name, name))
			return (int)i;
	return -1;
}

#define SMALL_TABLE 6

START_TEST(a_full_table_takes_back_what_nobody_uses)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], held[PATH_MAX], dead[PATH_MAX];
	char held_name[BAKERY_LOCK_NAME_MAX + 1], dead_name[BAKERY_LOCK_NAME_MAX + 1];
	const struct bakery_config cfg = { .slots = 8, .locks = SMALL_TABLE };
	struct stale *s = tk_shared(sizeof(*s));
	struct bakery_region_info ri;
	struct holder h;
	bakery_path_t *p;
	bakery_t *b;
	pid_t holder, staler;

	/* a small table, made before the first path lock uses it */
	paths_region(region, "pathfull");
	ck_assert_int_eq(bakery_open(region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	test_dir(dir, sizeof(dir), false);
	file_in(held, sizeof(held), dir, "held");
	file_in(dead, sizeof(dead), dir, "dead");
	file_in(s->path, sizeof(s->path), dir, "stale");
	touch(held);
	touch(dead);
	touch(s->path);
	lock_name_of(held, held_name);
	lock_name_of(dead, dead_name);
	holder = holder_start(&h, held, false);
	kill_a_holder_of(dead);
	/* the death proven and cleared now: an idle lock, with its mark */
	ck_assert_int_eq(bakery_recover(b, NULL), 0);
	tk_gate_init(&s->ready);
	tk_gate_init(&s->go);
	tk_gate_init(&s->held);
	tk_gate_init(&s->release);
	staler = tk_fork(stale_main, s);
	ck_assert(tk_gate_wait(&s->ready, 20));
	ck_assert_int_ge(lock_index_of(b, s->name), 0);

	/* four times as many new paths as the table has entries */
	for (unsigned i = 0; i < 4 * SMALL_TABLE; i++) {
		char f[PATH_MAX], leaf[16];

		snprintf(leaf, sizeof(leaf), "new%u", i);
		file_in(f, sizeof(f), dir, leaf);
		p = path_open(f, BAKERY_CREATE);
		ck_assert_int_eq(bakery_path_lock(p), 0);
		ck_assert_int_eq(bakery_path_unlock(p), 0);
		ck_assert_int_eq(bakery_path_close(p), 0);
		ck_assert_int_eq(bakery_region_info(b, &ri), 0);
		ck_assert_uint_le(ri.locks_used, SMALL_TABLE);
	}
	/* the held lock and the owner-died one were kept, the idle one not */
	ck_assert_int_ge(lock_index_of(b, held_name), 0);
	ck_assert_int_ge(lock_index_of(b, dead_name), 0);
	ck_assert_int_lt(lock_index_of(b, s->name), 0);
	ck_assert_int_eq(try_path(held), EBUSY);

	/* the stale handle takes the lock again, the one everyone else sees */
	tk_gate_open(&s->go);
	ck_assert(tk_gate_wait(&s->held, 20));
	ck_assert_int_ge(lock_index_of(b, s->name), 0);
	ck_assert_int_eq(try_path(s->path), EBUSY);
	tk_gate_open(&s->release);
	ck_assert_int_eq(tk_reap(staler, 20), 0);
	ck_assert_int_eq(try_path(s->path), 0);

	/* the owner-died mark is still there for the next holder */
	p = path_open(dead, 0);
	ck_assert_int_eq(bakery_path_lock(p), EOWNERDEAD);
	ck_assert_int_eq(bakery_path_consistent(p), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	holder_stop(&h, holder);
	ck_assert_int_eq(bakery_close(b), 0);
	test_dir_remove(dir);
}
END_TEST

/* A table full of locks in use: BAKERY_ELOCKS, and nothing taken from
 * the holders. */
START_TEST(a_table_full_of_held_locks_says_so)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], f[PATH_MAX];
	const struct bakery_config cfg = { .slots = 4, .locks = 2 };
	bakery_path_t *p[3];
	bakery_t *b;

	paths_region(region, "pathheld");
	ck_assert_int_eq(bakery_open(region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	test_dir(dir, sizeof(dir), false);
	for (unsigned i = 0; i < 2; i++) {
		char leaf[8];

		snprintf(leaf, sizeof(leaf), "f%u", i);
		file_in(f, sizeof(f), dir, leaf);
		p[i] = path_open(f, BAKERY_CREATE);
		ck_assert_int_eq(bakery_path_lock(p[i]), 0);
	}
	file_in(f, sizeof(f), dir, "third");
	ck_assert_int_eq(bakery_path_open(f, BAKERY_CREATE, &p[2]), BAKERY_ELOCKS);
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_int_eq(bakery_path_unlock(p[i]), 0);
		ck_assert_int_eq(bakery_path_close(p[i]), 0);
	}
	p[2] = path_open(f, 0);
	ck_assert_int_eq(bakery_path_close(p[2]), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	test_dir_remove(dir);
}
END_TEST

/* A handle whose lock was removed by hand (bakery_lock_unlink) takes the
 * lock made again, and other processes see it held. */
START_TEST(a_stale_handle_is_made_again)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], f[PATH_MAX];
	struct bakery_path_info info;
	bakery_lock_t *l;
	bakery_path_t *p;
	bakery_t *b;

	paths_region(region, "pathstale");
	test_dir(dir, sizeof(dir), false);
	file_in(f, sizeof(f), dir, "f");
	p = path_open(f, BAKERY_CREATE);
	ck_assert_int_eq(bakery_path_lock(p), 0);
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_path_info(p, &info), 0);
	ck_assert_int_eq(bakery_open(info.region, 0, NULL, &b), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, info.lock), 0);
	ck_assert_int_eq(bakery_lock_lookup(b, info.lock, BAKERY_ALGO_DEFAULT, &l), ENOENT);
	ck_assert_int_eq(bakery_path_lock(p), 0);
	ck_assert_int_eq(bakery_lock_lookup(b, info.lock, BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_trylock(l), EDEADLK);   /* held by us, made again */
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, info.lock), 0);
	ck_assert_int_eq(bakery_path_trylock(p), 0);    /* try: made again too */
	ck_assert_int_eq(bakery_path_unlock(p), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_path_close(p), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	test_dir_remove(dir);
}
END_TEST

/* A handle whose lock was taken back, and whose table entry went to the
 * lock the thread now holds, is not "held": it closes. */
START_TEST(a_stale_handle_closes_while_its_entry_is_held)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	const struct bakery_config cfg = { .slots = 4, .locks = 1 };
	bakery_path_t *pa, *pb;
	bakery_t *r;

	paths_region(region, "pathstaleclose");
	ck_assert_int_eq(bakery_open(region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &r), 0);
	test_dir(dir, sizeof(dir), false);
	file_in(a, sizeof(a), dir, "a");
	file_in(b, sizeof(b), dir, "b");
	pb = path_open(b, BAKERY_CREATE);
	ck_assert_int_eq(bakery_path_lock(pb), 0);
	ck_assert_int_eq(bakery_path_unlock(pb), 0);
	pa = path_open(a, BAKERY_CREATE);               /* takes b's entry */
	ck_assert_int_eq(bakery_path_lock(pa), 0);
	ck_assert_int_eq(bakery_path_close(pb), 0);
	ck_assert_int_eq(bakery_path_close(pa), EBUSY);
	ck_assert_int_eq(bakery_path_unlock(pa), 0);
	ck_assert_int_eq(bakery_path_close(pa), 0);
	ck_assert_int_eq(bakery_close(r), 0);
	test_dir_remove(dir);
}
END_TEST

/* ----------------------------------------------------------- no leaks -- */

#define MANY_PATHS 10000u
#define LEAK_PROCS 4u

/* Paths FIRST..LAST-1 of DIR, each created, locked and released once. */
static int many_paths(const char *dir, unsigned first, unsigned last)
{
	for (unsigned i = first; i < last; i++) {
		char f[PATH_MAX], leaf[16];
		bakery_path_t *p;
		int rc;

		snprintf(leaf, sizeof(leaf), "p%u", i);
		file_in(f, sizeof(f), dir, leaf);
		if ((rc = bakery_path_open(f, BAKERY_CREATE, &p)))
			return rc;
		rc = i % 2 ? bakery_path_lock(p) : bakery_path_rdlock(p);
		if (rc || (rc = bakery_path_unlock(p)) || (rc = bakery_path_close(p)))
			return rc;
	}
	return 0;
}

START_TEST(ten_thousand_paths_leave_nothing_behind)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX];
	unsigned fds;
	size_t heap;
	int rc;

	paths_region(region, "pathmany");
	test_dir(dir, sizeof(dir), false);
	/* the first thousand: the region is mapped, the table of handles
	 * grows to its size, the table of locks fills (1024) */
	rc = many_paths(dir, 0, 1000);
	ck_assert_msg(rc == 0, "%s", bakery_strerror(rc));
	fds = fds_open();
	heap = mallinfo2().uordblks;
	rc = many_paths(dir, 1000, MANY_PATHS);
	ck_assert_msg(rc == 0, "%s", bakery_strerror(rc));
	ck_assert_uint_eq(fds_open(), fds);
	/* 9,000 paths: a leak of a handle (or more) each would be 400 kB */
	ck_assert_msg(mallinfo2().uordblks <= heap + 64 * 1024, "heap %zu -> %zu",
	              heap, mallinfo2().uordblks);
	/* one shm object: the region */
	ck_assert_uint_eq(shm_objects_like(region), 1);
	test_dir_remove(dir);
}
END_TEST

struct many {
	char dir[PATH_MAX], hot[PATH_MAX];
	struct occupancy occ;
	int failed;
};

/* A share of the paths, and every tenth round the one path all share,
 * with the occupancy check. */
static int many_main(void *arg)
{
	struct many *m = arg;
	unsigned me = (unsigned)(uatomic_add_return(&m->occ.arrived, 1) - 1);
	unsigned share = MANY_PATHS / LEAK_PROCS;
	bakery_path_t *hot;

	if (bakery_path_open(m->hot, 0, &hot))
		return 1;
	for (unsigned i = me * share; i < (me + 1) * share; i += 10) {
		int rc = many_paths(m->dir, i, i + 10);

		if (rc) {
			fprintf(stderr, "process %u, path %u: %s\n", me, i, bakery_strerror(rc));
			return 2;
		}
		if (bakery_path_lock(hot))
			return 3;
		occupancy_pass(&m->occ, (uint64_t)getpid(), OCCUPANCY_PAUSE);
		if (bakery_path_unlock(hot))
			return 4;
	}
	return bakery_path_close(hot) ? 5 : 0;
}

START_TEST(ten_thousand_paths_from_several_processes)
{
	char region[TK_NAME_SIZE];
	struct many *m = tk_shared(sizeof(*m));
	pid_t pids[LEAK_PROCS];

	paths_region(region, "pathmanyprocs");
	test_dir(m->dir, sizeof(m->dir), false);
	file_in(m->hot, sizeof(m->hot), m->dir, "hot");
	touch(m->hot);
	for (unsigned i = 0; i < LEAK_PROCS; i++)
		pids[i] = tk_fork(many_main, m);
	for (unsigned i = 0; i < LEAK_PROCS; i++)
		ck_assert_int_eq(tk_reap(pids[i], 300), 0);
	ck_assert_uint_eq(m->occ.violations, 0);
	ck_assert_uint_eq(m->occ.entries, MANY_PATHS / 10);
	ck_assert_uint_eq(m->occ.counter, MANY_PATHS / 10);
	ck_assert_uint_eq(shm_objects_like(region), 1);
	test_dir_remove(m->dir);
}
END_TEST

/* ---------------------------------------------------------------- crash -- */

static const char *const crash_points[] = {
	"reclaim-marked", "unlink-freed", "unlink-freed:2", "unlink-clear",
};

struct doomed {
	const char *dir, *point;
};

/* Fill the small table with new paths until a reclamation kills us. */
static int doomed_reclaimer(void *arg)
{
	const struct doomed *d = arg;

	setenv("BAKERY_CRASH_AT", d->point, 1);
	return many_paths(d->dir, 100, 100 + 4 * SMALL_TABLE) ? 1 : 2;
}

START_TEST(a_killed_reclaimer_leaves_every_entry_whole)
{
	char region[TK_NAME_SIZE], dir[PATH_MAX], held[PATH_MAX];
	char held_name[BAKERY_LOCK_NAME_MAX + 1];
	const struct bakery_config cfg = { .slots = 8, .locks = SMALL_TABLE };
	struct doomed d = { dir, crash_points[_i] };
	struct bakery_region_info ri;
	struct holder h;
	bakery_t *b;
	pid_t holder;
	int rc;

	paths_region(region, "pathcrash");
	ck_assert_int_eq(bakery_open(region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	test_dir(dir, sizeof(dir), false);
	file_in(held, sizeof(held), dir, "held");
	touch(held);
	lock_name_of(held, held_name);
	holder = holder_start(&h, held, false);
	/* a full table of idle locks, then a reclaimer that dies in it */
	ck_assert_int_eq(many_paths(dir, 0, SMALL_TABLE - 1), 0);
	ck_assert_int_eq(tk_reap(tk_fork(doomed_reclaimer, &d), 30), 128 + SIGKILL);
	/* the next table operation settles what it left: every lock there
	 * is usable, the held one still held, and new paths fit */
	rc = many_paths(dir, 0, 3 * SMALL_TABLE);
	ck_assert_msg(rc == 0, "%s", bakery_strerror(rc));
	ck_assert_int_eq(try_path(held), EBUSY);
	for (unsigned i = 0; i < SMALL_TABLE; i++) {
		struct bakery_lock_info li;
		bakery_lock_t *l;

		if (bakery_lock_info(b, i, &li))
			continue;
		ck_assert_int_eq(bakery_lock_lookup(b, li.name, BAKERY_ALGO_DEFAULT, &l), 0);
		rc = bakery_trylock(l);
		ck_assert_msg(strcmp(li.name, held_name) ? rc == 0 : rc == EBUSY, "%s: %s",
		              li.name, bakery_strerror(rc));
		if (rc == 0)
			ck_assert_int_eq(bakery_unlock(l), 0);
		ck_assert_int_eq(bakery_lock_close(l), 0);
	}
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_le(ri.locks_used, SMALL_TABLE);
	holder_stop(&h, holder);
	ck_assert_int_eq(bakery_close(b), 0);
	test_dir_remove(dir);
}
END_TEST

static Suite *pathlock_suite(void)
{
	Suite *s = suite_create("pathlock");
	TCase *tc = tcase_create("calls");
	TCase *ti = tcase_create("identity");
	TCase *tr = tcase_create("reclaim");
	TCase *tl = tcase_create("leaks");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, calls_and_errors);
	tcase_add_test(tc, a_directory_is_locked);
	tcase_add_test(tc, path_acquire_takes_the_options);
	tcase_add_test(tc, the_lock_info_of_a_path);
	tcase_add_test(tc, processes_exclude_each_other_through_any_path);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ti, 60);
	tcase_add_test(ti, a_renamed_file_keeps_its_lock);
	tcase_add_test(ti, a_replaced_file_gets_a_new_lock);
	tcase_add_test(ti, a_reused_inode_inherits_nothing);
	suite_add_tcase(s, ti);
	tcase_set_timeout(tr, 60);
	tcase_add_test(tr, a_full_table_takes_back_what_nobody_uses);
	tcase_add_test(tr, a_table_full_of_held_locks_says_so);
	tcase_add_test(tr, a_stale_handle_is_made_again);
	tcase_add_test(tr, a_stale_handle_closes_while_its_entry_is_held);
	tcase_add_loop_test(tr, a_killed_reclaimer_leaves_every_entry_whole, 0,
	                    sizeof(crash_points) / sizeof(crash_points[0]));
	suite_add_tcase(s, tr);
	tcase_set_timeout(tl, 300);
	tcase_add_test(tl, ten_thousand_paths_leave_nothing_behind);
	tcase_add_test(tl, ten_thousand_paths_from_several_processes);
	suite_add_tcase(s, tl);
	return s;
}

int main(void)
{
	return unit_run(pathlock_suite());
}
