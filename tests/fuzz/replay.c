/* SPDX-License-Identifier: MIT */
/*
 * replay.c - feeds every file of a fuzz corpus through fuzz_region_case(),
 * the entry the libFuzzer harness uses, in a normal (gcc) build, so that
 * `make check` re-checks every input the fuzzer ever kept.
 *
 *   bakery-fuzz-replay [DIR|FILE]...
 *
 * Without arguments it replays $top_srcdir/REPLAY_DIR.  Each input runs in
 * its own child with a time limit: a crash, an abort from the oracle (an
 * undocumented error code) or a hang is reported with the file's name, and
 * the exit status is 1 if any input failed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz-region.h"

#ifndef REPLAY_DIR
#define REPLAY_DIR "tests/fuzz/corpus"
#endif

/* Per input; a normal one takes milliseconds. */
#ifndef CASE_SECONDS
#define CASE_SECONDS 10
#endif

static unsigned long replayed, failed;

static void run_child(const char *path)
{
	static uint8_t buf[FUZZ_MAX_INPUT];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		_exit(3);
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	alarm(CASE_SECONDS);
	fuzz_region_case(buf, n);
	_exit(0);
}

/* The shm objects fuzz_region_case() names after the child's pid: a child
 * that crashed or hung could not remove them itself. */
static void objects_remove(pid_t pid)
{
	char name[64];

	snprintf(name, sizeof(name), "/bakery-fuzz-%d", (int)pid);
	shm_unlink(name);
	snprintf(name, sizeof(name), "/bakery-fuzz-tpl-%d", (int)pid);
	shm_unlink(name);
}

static void replay_file(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0)
		run_child(path);
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		exit(1);
	}
	objects_remove(pid);
	replayed++;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	failed++;
	if (WIFSIGNALED(st))
		fprintf(stderr, "FAIL %s: killed by signal %d (%s)%s\n", path, WTERMSIG(st),
		        strsignal(WTERMSIG(st)), WTERMSIG(st) == SIGALRM ? ": hang" : "");
	else
		fprintf(stderr, "FAIL %s: exit status %d\n", path, WEXITSTATUS(st));
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int replay_dir(const char *dir)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, by_name);

	if (n < 0) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (list[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			replay_file(path);
		free(list[i]);
	}
	free(list);
	return 0;
}

static int replay_path(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return replay_dir(path);
	replay_file(path);
	return 0;
}

int main(int argc, char **argv)
{
	char def[4096];
	const char *top = getenv("top_srcdir");
	int err = 0;

	if (argc < 2) {
		snprintf(def, sizeof(def), "%s/%s", top ? top : ".", REPLAY_DIR);
		err = replay_path(def);
	}
	for (int i = 1; i < argc; i++)
		err |= replay_path(argv[i]);
	printf("replayed %lu inputs, %lu failed\n", replayed, failed);
	if (err || replayed == 0)
		return 1;               /* a missing corpus is a failure, not a pass */
	return failed ? 1 : 0;
}
