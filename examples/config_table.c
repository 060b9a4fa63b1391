/* SPDX-License-Identifier: MIT */
/*
 * config_table.c - readers and a writer share a configuration table under
 * one bakery lock: readers take it shared (bakery_rdlock) and read the
 * table together, the writer takes it exclusive (bakery_lock) and updates
 * it.  The table lives in a file mapped by every process.
 *
 *   config_table REGION TABLE-FILE reader|writer [ROUNDS] [STOP-AT]
 *
 * A writer makes ROUNDS updates (default 50).  A reader reads until the
 * file TABLE-FILE.stop exists, then once more, and prints the last version
 * it saw.  With STOP-AT N, the Nth passage stops inside the lock (a writer
 * half-way through its update) and waits to be killed.
 *
 * Torn table: entry I of version V is V * (I + 1) (all 0 in a new table).  A writer
 * writes the version first, then the entries one by one, so a writer
 * killed half-way leaves a torn table; the next writer is told
 * (EOWNERDEAD), finishes that update and calls bakery_consistent().
 * Readers told EOWNERDEAD meanwhile may only look: they release the lock
 * and try again later.  A reader that sees a torn table without being
 * told has found a broken lock: it exits 1.  A reader killed inside
 * changed nothing: nobody is told.
 */
#include <bakery.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ENTRIES 64
#define TORN_SEEN (-1)                /* not an error code of the library */

struct table {
	uint64_t version;
	uint64_t entry[ENTRIES];       /* entry i of version V: V * (i + 1) */
};

static struct table *table_map(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	void *p;

	if (fd < 0 || ftruncate(fd, sizeof(struct table)) < 0)
		return NULL;
	p = mmap(NULL, sizeof(struct table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The first entry that does not belong to the table's version, or -1. */
static int torn_at(const struct table *t)
{
	for (int i = 0; i < ENTRIES; i++)
		if (t->entry[i] != t->version * (uint64_t)(i + 1))
			return i;
	return -1;
}

static void stop_here(const char *who)
{
	printf("%s %d: stopped inside the lock\n", who, (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

static int write_once(bakery_lock_t *l, struct table *t, int stop)
{
	int err = bakery_lock(l);

	if (err == EOWNERDEAD) {        /* a writer died half-way: finish its update */
		printf("writer %d: the previous writer died in version %llu (entry %d torn): "
		       "repaired\n", (int)getpid(), (unsigned long long)t->version, torn_at(t));
		for (int i = 0; i < ENTRIES; i++)
			t->entry[i] = t->version * (uint64_t)(i + 1);
		err = bakery_consistent(l);
	}
	if (err)
		return err;
	t->version++;
	for (int i = 0; i < ENTRIES; i++) {
		if (stop && i == ENTRIES / 2)
			stop_here("writer");
		t->entry[i] = t->version * (uint64_t)(i + 1);
		if (i % 8 == 0)
			usleep(100);            /* a reader let in now would see it torn */
	}
	return bakery_unlock(l);
}

struct reads {
	int count, told, torn;          /* reads, told of a dead writer, torn tables */
	uint64_t seen;                  /* the last version read */
};

/* One read; 0 or the lock's error. */
static int read_once(bakery_lock_t *l, struct table *t, int stop, struct reads *r)
{
	int err = bakery_rdlock(l), torn;

	if (err != 0 && err != EOWNERDEAD)
		return err;
	if (stop)
		stop_here("reader");
	r->count++;
	torn = torn_at(t);
	r->seen = t->version;
	if (err == EOWNERDEAD) {        /* may be torn: look only, a writer repairs */
		r->told++;
	} else if (torn >= 0) {
		r->torn++;
		printf("reader %d: TORN table: version %llu, entry %d\n", (int)getpid(),
		       (unsigned long long)t->version, torn);
	}
	bakery_unlock(l);
	if (err == EOWNERDEAD)
		usleep(10000);
	return 0;
}

static int reader(bakery_lock_t *l, struct table *t, const char *stop_file, int stop_at)
{
	struct reads r = { 0 };
	int err = 0;

	while (!err && access(stop_file, F_OK) != 0) {
		err = read_once(l, t, r.count + 1 == stop_at, &r);
		usleep(1000);
	}
	if (!err)                       /* the final read, after the last update */
		err = read_once(l, t, 0, &r);
	printf("reader %d: %d reads, %d torn, last version %llu, told of a dead writer "
	       "%d times\n", (int)getpid(), r.count, r.torn, (unsigned long long)r.seen, r.told);
	return err ? err : r.torn ? TORN_SEEN : 0;
}

int main(int argc, char **argv)
{
	char stop_file[4096];
	bakery_lock_t *l;
	struct table *t;
	bakery_t *b;
	int err, rounds, stop_at;

	if (argc < 4 || (strcmp(argv[3], "reader") && strcmp(argv[3], "writer"))) {
		fprintf(stderr, "usage: config_table REGION TABLE-FILE reader|writer "
		        "[ROUNDS] [STOP-AT]\n");
		return 2;
	}
	rounds = argc > 4 ? atoi(argv[4]) : 50;
	stop_at = argc > 5 ? atoi(argv[5]) : 0;
	snprintf(stop_file, sizeof(stop_file), "%s.stop", argv[2]);
	if (!(t = table_map(argv[2]))) {
		perror(argv[2]);
		return 1;
	}
	if ((err = bakery_open(argv[1], BAKERY_CREATE, NULL, &b)) ||
	    (err = bakery_lock_open(b, "config", BAKERY_ALGO_DEFAULT, &l)))
		goto fail;
	if (!strcmp(argv[3], "reader")) {
		err = reader(l, t, stop_file, stop_at);
	} else {
		for (int i = 1; i <= rounds && !err; i++)
			err = write_once(l, t, i == stop_at);
		printf("writer %d: done at version %llu\n", (int)getpid(),
		       (unsigned long long)t->version);
	}
	bakery_lock_close(l);
	bakery_close(b);
	if (err == TORN_SEEN)           /* the lock let a reader in too soon */
		return 1;
	if (!err)
		return 0;
fail:
	fprintf(stderr, "config_table: %s\n", bakery_strerror(err));
	return 1;
}
