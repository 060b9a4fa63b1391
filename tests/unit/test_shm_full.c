/* SPDX-License-Identifier: MIT */
/*
 * test_shm_full.c - a full /dev/shm is ENOSPC, never a SIGBUS and never
 * BAKERY_EBADREGION.  Each test runs (Check forks it) in a mount namespace
 * of its own with a small tmpfs on /dev/shm, where glibc's shm_open and the
 * library look: as root a private mount namespace (unshare -m), otherwise
 * an unprivileged user and mount namespace (unshare -Urm) if the kernel
 * allows one; if neither, the suite exits 77 (skipped) and says why.
 *
 *   creation with no page free, or fewer than the region needs
 *                          ENOSPC, the creator alive, no temporary left
 *   creation with room     every page of the object reserved at once
 *   a region whose later pages were never allocated (as an older version,
 *   or a file system that cannot reserve, leaves them), in a /dev/shm that
 *   then fills up:
 *     bakery_open          ENOSPC (its pages are reserved at open)
 *     a handle opened before: bakery_lock
 *                          ENOSPC (the SIGBUS guard sees the object whole)
 *     a read-only handle: introspection
 *                          0 or ENOSPC, never BAKERY_EBADREGION
 *     `bakery recover`     fails with a message about /dev/shm
 *     `bakery status`      shows the region with a note about /dev/shm, or
 *                          fails saying the same
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define SHM_KB 2048u            /* the private /dev/shm */
#define FILLER "/dev/shm/filler"

/* ------------------------------------------------------------ namespace -- */

static bool write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Enter a mount namespace with a tmpfs of SHM_KB on /dev/shm.  NULL, or
 * what could not be done. */
static const char *shm_private(void)
{
	char map[64], opts[32];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid == 0) {
		if (unshare(CLONE_NEWNS) != 0)
			return "unshare(CLONE_NEWNS) refused";
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
			return "unshare(CLONE_NEWUSER | CLONE_NEWNS) refused (no unprivileged "
			       "user namespaces)";
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		if (!write_file("/proc/self/uid_map", map))
			return "cannot write uid_map";
		write_file("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		if (!write_file("/proc/self/gid_map", map))
			return "cannot write gid_map";
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return "cannot make the mounts private";
	snprintf(opts, sizeof(opts), "size=%uk,mode=1777", SHM_KB);
	if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		return "cannot mount a tmpfs on /dev/shm";
	return NULL;
}

static void setup(void)
{
	const char *why = shm_private();

	ck_assert_msg(why == NULL, "private /dev/shm: %s", why);
}

/* ------------------------------------------------------------- helpers -- */

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Fill /dev/shm up, then give back FREE_PAGES pages. */
static void shm_fill(size_t free_pages)
{
	static char chunk[1 << 16];
	int fd = open(FILLER, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	off_t size = 0;
	struct stat st;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	size = st.st_size;
	memset(chunk, 0x5a, sizeof(chunk));
	for (;;) {
		ssize_t n = pwrite(fd, chunk, sizeof(chunk), size);

		if (n <= 0)
			break;
		size += n;
	}
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_int_eq(ftruncate(fd, size - (off_t)(free_pages * page_size())), 0);
	close(fd);
}

/* Names in /dev/shm with a DEL in them: creators' temporaries. */
static unsigned temporaries(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	unsigned n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strchr(e->d_name, 0x7f) != NULL;
	closedir(d);
	return n;
}

static off_t object_size(const char *name, blkcnt_t *blocks)
{
	char path[TK_NAME_SIZE + 16];
	struct stat st;

	unit_shm_path(path, sizeof(path), name);
	ck_assert_int_eq(stat(path, &st), 0);
	if (blocks)
		*blocks = st.st_blocks;
	return st.st_size;
}

/* Give the pages of NAME's object from its middle to its end back to the
 * file system, as a region whose pages nobody touched yet has them. */
static void object_unallocate_tail(const char *name)
{
	char path[TK_NAME_SIZE + 16];
	off_t size = object_size(name, NULL), from = size / 2 / 4096 * 4096;
	int fd;

	unit_shm_path(path, sizeof(path), name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from,
	                           size - from), 0);
	close(fd);
}

/* --------------------------------------------------------------- create -- */

START_TEST(create_in_full_shm)
{
	static const size_t free_pages[] = { 0, 8 };
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;

	setup();
	shm_fill(free_pages[_i]);
	tk_name(name, sizeof(name), "full");
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, NULL, &b), ENOSPC);
	ck_assert_ptr_null(b);
	ck_assert_uint_eq(temporaries(), 0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), ENOENT);
	ck_assert_ptr_nonnull(strstr(bakery_strerror(ENOSPC), "/dev/shm"));
}
END_TEST

START_TEST(create_reserves_every_page)
{
	char name[TK_NAME_SIZE];
	blkcnt_t blocks;
	off_t size;
	bakery_t *b;

	setup();
	b = unit_region(name, "reserved", 0, 0);
	size = object_size(name, &blocks);
	ck_assert_int_ge((off_t)blocks * 512, size);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* ----------------------------------------- a region with pages missing -- */

START_TEST(open_reserves_missing_pages)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;

	setup();
	ck_assert_int_eq(bakery_close(unit_region(name, "holes", 0, 0)), 0);
	object_unallocate_tail(name);
	shm_fill(0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), ENOSPC);
	ck_assert_ptr_null(b);
}
END_TEST

START_TEST(open_handle_faults_enospc)
{
	char name[TK_NAME_SIZE];
	bakery_t *b;
	bakery_lock_t *l = NULL;
	int err;

	setup();
	b = unit_region(name, "holes", 0, 0);
	object_unallocate_tail(name);
	shm_fill(0);
	err = bakery_lock_open(b, "late", BAKERY_ALGO_DEFAULT, &l);
	if (!err) {
		err = bakery_lock(l);
		if (err == 0)
			bakery_unlock(l);
	}
	ck_assert_msg(err == ENOSPC, "lock on a full /dev/shm: %s", bakery_errname(err));
	/* the region is gone for this handle, but not as damage */
	ck_assert_int_eq(bakery_recover(b, NULL), ENOSPC);
	if (l)
		bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(read_only_handle_never_ebadregion)
{
	char name[TK_NAME_SIZE];
	struct bakery_region_info ri;
	struct bakery_slot_info si;
	bakery_t *b;
	bakery_lock_t *l;
	int err = 0;

	setup();
	b = unit_region(name, "holes", 0, 0);
	l = unit_lock(b, "seen", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	object_unallocate_tail(name);
	shm_fill(0);
	ck_assert_int_eq(bakery_open(name, BAKERY_RDONLY, NULL, &b), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	for (unsigned i = 0; i < ri.slots && !err; i++)
		err = bakery_slot_info(b, i, &si);
	for (unsigned i = 0; i < ri.locks && (!err || err == ENOENT); i++) {
		struct bakery_lock_info li;

		err = bakery_lock_info(b, i, &li);
	}
	ck_assert_msg(err == 0 || err == ENOENT || err == ENOSPC, "introspection: %s",
	              bakery_errname(err));
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* Run `bakery CMD NAME`; its exit status, its output (both streams) into
 * OUT. */
static int tool(const char *cmd, const char *name, char *out, size_t size)
{
	const char *top = getenv("top_builddir");
	char bin[4096];
	size_t len = 0;
	int pipefd[2], st;
	ssize_t n;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/tools/bakery", top);
	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		execl(bin, bin, cmd, name, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (len < size - 1 && (n = read(pipefd[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The tool on such a region: `bakery recover` (a writable handle) fails
 * with a message about /dev/shm; `bakery status` (read-only) shows the
 * region with a note about /dev/shm, or fails saying the same, never that
 * it is damaged. */
START_TEST(tool_says_shm_is_full)
{
	char name[TK_NAME_SIZE], out[8192];
	int rc;

	if (!getenv("top_builddir"))
		return;         /* run outside `make check`: no tool to find */
	setup();
	ck_assert_int_eq(bakery_close(unit_region(name, "holes", 0, 0)), 0);
	object_unallocate_tail(name);
	shm_fill(0);
	rc = tool("recover", name, out, sizeof(out));
	ck_assert_msg(rc == 1 && strstr(out, "/dev/shm"), "recover: %d: %s", rc, out);
	rc = tool("status", name, out, sizeof(out));
	ck_assert_msg((rc == 0 || rc == 1) && strstr(out, "/dev/shm"), "status: %d: %s", rc, out);
	ck_assert_msg(!strstr(out, "corrupt") && !strstr(out, "not a valid"), "status: %s", out);
}
END_TEST

static Suite *shm_full_suite(void)
{
	Suite *s = suite_create("shm-full");
	TCase *tc = tcase_create("tmpfs");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, create_in_full_shm, 0, 2);
	tcase_add_test(tc, create_reserves_every_page);
	tcase_add_test(tc, open_reserves_missing_pages);
	tcase_add_test(tc, open_handle_faults_enospc);
	tcase_add_test(tc, read_only_handle_never_ebadregion);
	tcase_add_test(tc, tool_says_shm_is_full);
	suite_add_tcase(s, tc);
	return s;
}

/* Can a child get a private /dev/shm?  NULL, or why not (printed). */
static int namespace_probe(void)
{
	int fds[2], st;
	char why[256] = "";
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		const char *w = shm_private();

		if (w && write(fds[1], w, strlen(w)) < 0)
			_exit(2);
		_exit(w ? 1 : 0);
	}
	close(fds[1]);
	if (read(fds[0], why, sizeof(why) - 1) < 0)
		why[0] = '\0';
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("test_shm_full: not checked: no private /dev/shm: %s\n", why);
		return -1;
	}
	return 0;
}

int main(void)
{
	if (namespace_probe() != 0)
		return 77;
	return unit_run(shm_full_suite());
}
