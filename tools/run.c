/* SPDX-License-Identifier: MIT */
/*
 * run.c - `bakery run`: like flock(1), hold a named lock while a command
 * runs.
 *
 *   bakery run [OPTIONS] REGION LOCK [--] COMMAND [ARG...]
 *   bakery run [OPTIONS] REGION LOCK -c SHELL-COMMAND
 *   bakery run [OPTIONS] --file PATH [--] COMMAND [ARG...]
 *
 * The region is created if it does not exist.  The lock is taken, COMMAND
 * runs as a child, and the wrapper exits with the command's status.  How
 * the wrapper and the command live and die together: run.h.
 *
 * Owner died: when the previous holder died inside its critical section,
 * the command runs anyway, with BAKERY_OWNER_DEAD=1 in its environment so
 * that it can repair what it protects.  Its exit status 0 says "repaired":
 * only then is the lock marked consistent.  Any other ending passes the
 * owner-died state on to the next job, as does a command that dies of a
 * signal: the lock is never left unusable by the tool.
 *
 * Shared mode (-s, --shared): the command runs as a reader, beside other
 * readers, with BAKERY_SHARED=1 in its environment.  A reader changes
 * nothing, so it never marks the lock owner-died: a reader that dies gives
 * its share back, and a reader told that a writer died (BAKERY_OWNER_DEAD=1)
 * may look but cannot repair; the mark stays for the next writer.
 *
 * Capacity (--holders K): a lock created by this run admits K holders at
 * once; joining an existing lock, K must be its capacity.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

#define FILE_LOCK_NAME "file"

/* Slots of a region that `bakery run` creates: every job waiting for a lock
 * holds one, and 64 (the library default) is met by a loop of background
 * jobs.  The cost is memory (1.7 MiB of /dev/shm against 464 KiB, all
 * reserved when the region is created), not time: the algorithms scan only
 * the slots that joined a lock. */
#define RUN_REGION_SLOTS 256u

/* ------------------------------------------------------------- options -- */

static bool parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		return false;
	*out = v;
	return true;
}

/* The lock name the library would refuse (bakery_lock_open's rule), checked
 * before the region is created, so that a refused run creates nothing. */
static int lock_name_check(struct cli *c, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < len; i++)
		if (name[i] == '/' || name[i] < 0x20 || name[i] > 0x7e)
			len = 0;
	if (len == 0)
		return cli_usage_error(c, "invalid lock name (1 to %d printable characters, "
		                       "no '/')", BAKERY_LOCK_NAME_MAX);
	if (len > BAKERY_LOCK_NAME_MAX)
		return cli_usage_error(c, "lock name longer than %d characters",
		                       BAKERY_LOCK_NAME_MAX);
	return 0;
}

/* --file PATH: the region named after the file's device and inode, so that
 * every path to the same file (links, relative or absolute) names the same
 * lock.  The file is created if missing, as flock(1) does. */
static int file_region(struct cli *c, const char *path, struct run_opts *o)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);

	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return cli_fail(c, "%s: %s", path, strerror(e));
	}
	close(fd);
	snprintf(o->region_buf, sizeof(o->region_buf), "/bakery-file-%llx-%llx",
	         (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	o->region = o->region_buf;
	o->lock = FILE_LOCK_NAME;
	cli_set_what(c, o->region, o->lock);
	return 0;
}

struct run_args {
	const char *algo, *wait, *timeout, *conflict, *shell, *file, *holders;
	bool nonblock, shared, any_owner;
};

static int run_values(struct cli *c, const struct run_args *r, struct run_opts *o)
{
	const char *wait = r->wait ? r->wait : r->timeout;
	unsigned code;

	if (r->algo && bakery_algo_parse(r->algo, &o->algo))
		return cli_usage_error(c, "unknown algorithm '%s' (lamport, boulangerie, "
		                       "black-white, jayanti)", r->algo);
	if (wait && !parse_seconds(wait, &o->timeout))
		return cli_usage_error(c, "--wait must be a number of seconds, such as 2.5");
	if (wait && r->nonblock)
		return cli_usage_error(c, "--nonblock and --wait exclude each other");
	if (r->holders && !cli_parse_count(r->holders, 1, BAKERY_MAX_HOLDERS, &o->holders))
		return cli_usage_error(c, "--holders must be a number from 1 to %u",
		                       (unsigned)BAKERY_MAX_HOLDERS);
	if (r->shared && o->holders > 1)
		return cli_usage_error(c, "--shared is for locks of one holder, not --holders %u",
		                       o->holders);
	o->shared = r->shared;
	o->any_owner = r->any_owner;
	o->wait = r->nonblock ? RUN_WAIT_NONE : wait ? RUN_WAIT_FOR : RUN_WAIT_FOREVER;
	o->conflict_code = EXIT_RUN_TIMEOUT;
	if (r->conflict) {
		if (!cli_parse_count(r->conflict, 0, 255, &code))
			return cli_usage_error(c, "--conflict-exit-code must be a number from 0 to 255");
		o->conflict_code = (int)code;
	}
	return 0;
}

static int run_command(struct cli *c, const struct run_args *r, const struct cli_args *a,
                       struct run_opts *o)
{
	if (r->shell && a->nrest)
		return cli_usage_error(c, "-c takes the whole command; unexpected argument '%s'",
		                       a->rest[0]);
	if (!r->shell && !a->nrest)
		return cli_usage_error(c, "missing COMMAND");
	if (r->shell) {
		o->shell_argv[0] = (char *)"sh";
		o->shell_argv[1] = (char *)"-c";
		o->shell_argv[2] = (char *)r->shell;
		o->shell_argv[3] = NULL;
		o->argv = o->shell_argv;
	} else {
		o->argv = a->rest;
	}
	return 0;
}

static int run_parse(struct cli *c, int argc, char **argv, struct run_opts *o)
{
	struct run_args r = { NULL };
	const struct cli_opt opts[] = {
		{ "algo", 'a', &r.algo, NULL }, { "nonblock", 'n', NULL, &r.nonblock },
		{ "wait", 'w', &r.wait, NULL }, { "timeout", 0, &r.timeout, NULL },
		{ "conflict-exit-code", 'E', &r.conflict, NULL }, { "command", 'c', &r.shell, NULL },
		{ "file", 'F', &r.file, NULL }, { "shared", 's', NULL, &r.shared },
		{ "holders", 0, &r.holders, NULL }, { "any-owner", 0, NULL, &r.any_owner },
		{ NULL, 0, NULL, NULL }
	};
	struct cli_args a;
	int err;

	/* with --file, no REGION LOCK: the command follows the options */
	if ((err = cli_parse(c, argc, argv, opts, &r.file, 2, true, &a)))
		return err;
	memset(o, 0, sizeof(*o));
	if ((err = run_values(c, &r, o)) || (err = run_command(c, &r, &a, o)))
		return err;
	if (r.file && a.npos)
		return cli_usage_error(c, "--file names the lock: no REGION LOCK with it");
	if (r.file)
		return file_region(c, r.file, o);
	o->region = a.pos[0];
	o->lock = a.pos[1];
	if ((err = cli_region_arg(c, o->region)))
		return err;
	cli_set_what(c, o->region, o->lock);
	return lock_name_check(c, o->lock);
}

/* ------------------------------------------------------------- locking -- */

/* The lock call's error ERR as a message and an exit code. */
static int lock_fail(struct cli *c, const struct run_opts *o, int err)
{
	if (err == EBUSY && o->wait == RUN_WAIT_NONE) {
		fprintf(stderr, "bakery: run %s: lock is busy (--nonblock)\n", c->what);
		return o->conflict_code;
	}
	if (err == ETIMEDOUT || err == EBUSY) {
		fprintf(stderr, "bakery: run %s: lock not acquired: timed out after %g s "
		        "of waiting\n", c->what, o->timeout);
		return o->conflict_code;
	}
	if (err == ENOTSUP && o->shared)
		return cli_fail(c, "this lock has no shared mode (a lock of several holders, "
		                "or the jayanti algorithm)");
	if (err == ENOTRECOVERABLE)
		return cli_fail(c, "lock is not recoverable: a holder died and the repair "
		                "failed (`bakery reset` makes it usable again)");
	return cli_fail(c, "%s", bakery_strerror(err));
}

/* What becomes of the lock after the command: only a command that ended by
 * itself, and repaired if it had to, lets the lock go as consistent. */
static enum run_verdict verdict_of(struct cli *c, const struct run_opts *o, bool owner_dead,
                                   int code, bool signaled)
{
	if (signaled && o->shared) {
		/* a dead reader changed nothing: its share comes back and the
		 * lock is not marked owner-died (counted in reader_deaths) */
		fprintf(stderr, "bakery: run %s: the command died of signal %d: its reader's "
		        "share is given back\n", c->what, code - 128);
		return RUN_ABANDON;
	}
	if (o->shared)
		return RUN_RELEASE;    /* a reader repairs nothing: its status says nothing */
	if (signaled) {
		fprintf(stderr, "bakery: run %s: the command died of signal %d: lock left "
		        "owner-died for the next holder\n", c->what, code - 128);
		return RUN_ABANDON;
	}
	if (owner_dead && code != 0) {
		fprintf(stderr, "bakery: run %s: the previous holder had died and the command "
		        "exited with status %d: lock left owner-died for the next holder\n",
		        c->what, code);
		return RUN_ABANDON;
	}
	return RUN_RELEASE;
}

static int run_locked(struct cli *c, bakery_lock_t *l, const struct run_opts *o)
{
	struct run_holder h;
	bool owner_dead, signaled;
	int code, err = run_hold_start(&h, l, o);

	if (err != 0 && err != EOWNERDEAD)
		return lock_fail(c, o, err);
	owner_dead = err == EOWNERDEAD;
	if (owner_dead)
		fprintf(stderr, "bakery: run %s: the previous holder died holding the lock; "
		        "running the command with " OWNER_DEAD_ENV "=1%s\n", c->what,
		        o->shared ? " (a reader: it cannot repair)" : "");
	code = run_exec(c, o, owner_dead, &signaled);
	run_hold_finish(&h, verdict_of(c, o, owner_dead, code, signaled));
	return code;
}

/* The existing lock NAME's entry into *LI: true, or false if none. */
static bool lock_find(bakery_t *b, const char *name, struct bakery_lock_info *li)
{
	struct bakery_region_info r;

	if (bakery_region_info(b, &r))
		return false;
	for (unsigned i = 0; i < r.locks; i++)
		if (bakery_lock_info(b, i, li) == 0 && !strcmp(li->name, name))
			return true;
	return false;
}

static int lock_open_fail(struct cli *c, bakery_t *b, const struct run_opts *o, int err)
{
	struct bakery_lock_info li;

	if (err == BAKERY_EALGO && lock_find(b, o->lock, &li) && o->holders &&
	    li.capacity != o->holders)
		return cli_fail(c, "the lock admits %u holder%s; --holders %u cannot take part "
		                "in it", li.capacity, li.capacity == 1 ? "" : "s", o->holders);
	if (err == BAKERY_EALGO && lock_find(b, o->lock, &li))
		return cli_fail(c, "the lock uses %s; --algo %s cannot take part in it",
		                bakery_algo_name(li.algo), bakery_algo_name(o->algo));
	if (err == ENOTSUP && o->holders > 1)
		return cli_fail(c, "the %s algorithm cannot count several holders (lamport, "
		                "boulangerie can)", bakery_algo_name(o->algo));
	return cli_fail(c, "%s", bakery_strerror(err));
}

int cmd_run(struct cli *c, int argc, char **argv)
{
	const struct bakery_config cfg = { .slots = RUN_REGION_SLOTS };
	struct bakery_lock_config lock_cfg = { .holders = 0 };
	struct run_opts o;
	bakery_lock_t *l;
	bakery_t *b;
	int err;

	if ((err = run_parse(c, argc, argv, &o)))
		return err < 0 ? 0 : err;
	if ((err = cli_open(c, o.region, BAKERY_CREATE | (o.any_owner ? BAKERY_ANY_OWNER : 0),
	                    &cfg, &b)))
		return err;
	lock_cfg.algo = o.algo;
	lock_cfg.holders = o.holders;
	err = bakery_lock_open_config(b, o.lock, &lock_cfg, &l);
	if (err) {
		err = lock_open_fail(c, b, &o, err);
		bakery_close(b);
		return err;
	}
	err = run_locked(c, l, &o);
	bakery_lock_close(l);
	bakery_close(b);
	return err;
}
