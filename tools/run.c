/* SPDX-License-Identifier: MIT */
/*
 * run.c - `bakery run`: like flock(1), hold a named lock while a command
 * runs; its options, and what `bakery flock` shares with it.
 *
 *   bakery run [OPTIONS] REGION LOCK [--] COMMAND [ARG...]
 *   bakery run [OPTIONS] REGION LOCK -c SHELL-COMMAND
 *   bakery run [OPTIONS] --file PATH [--] COMMAND [ARG...]
 *
 * The region is created if it does not exist; with --file, the lock is the
 * path lock of PATH (run_file.c), which has one holder, the library's
 * algorithm, and the caller's own region.  The lock is taken, COMMAND
 * runs as a child, and the wrapper exits with the command's status.  How
 * the job goes: run_job.c; how the wrapper, its command and the command's
 * children hold the lock: run.h.
 *
 * Shared mode (-s, --shared): the command runs as a reader, beside other
 * readers, with BAKERY_SHARED=1 in its environment.  A reader changes
 * nothing, so it never marks the lock owner-died: a reader that dies gives
 * its share back, and a reader told that a writer died (BAKERY_OWNER_DEAD=1)
 * may look but cannot repair; the mark stays for the next writer.
 *
 * Capacity (--holders K): a lock created by this run admits K holders at
 * once; joining an existing lock, K must be its capacity.
 *
 * Bias (--biased): a lock created by this run is biased (bakery.h,
 * BAKERY_LOCK_BIASED): Lamport's or Boulangerie's, of one holder, so
 * --holders K > 1 and --algo black-white or jayanti are refused here, as
 * usage errors.  Joining, the lock must be biased; without --biased a run
 * joins a lock biased or not.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* ---------------------------------------------------- shared parts -- */

bool run_descriptor_form(const struct cli_args *a, const char *shell)
{
	const char *s = a->npos == 1 ? a->pos[0] : "";

	return *s && strspn(s, "0123456789") == strlen(s) && !a->nrest && !shell;
}

/* -c COMMAND: the command becomes $SHELL -c COMMAND ("/bin/sh" when SHELL
 * is unset or empty), as flock(1) runs it. */
static void run_shell_command(struct run_opts *o, const char *command)
{
	const char *shell = getenv("SHELL");

	o->shell_argv[0] = (char *)(shell && *shell ? shell : "/bin/sh");
	o->shell_argv[1] = (char *)"-c";
	o->shell_argv[2] = (char *)command;
	o->shell_argv[3] = NULL;
	o->argv = o->shell_argv;
}

void run_start_clock(struct run_opts *o)
{
	time_t whole = (time_t)o->timeout;

	clock_gettime(CLOCK_MONOTONIC, &o->started);
	o->deadline = o->started;
	o->deadline.tv_nsec += (long)((o->timeout - (double)whole) * 1e9);
	o->deadline.tv_sec += whole + o->deadline.tv_nsec / 1000000000L;
	o->deadline.tv_nsec %= 1000000000L;
}

/* ------------------------------------------------------------ options -- */

/* The lock name the library would refuse (bakery_lock_open's rule), checked
 * before the region is created, so that a refused run creates nothing. */
static int lock_name_check(struct cli *c, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < len; i++)
		if (name[i] == '/' || name[i] < 0x20 || name[i] > 0x7e)
			len = 0;
	if (len == 0)
		return cli_usage_error(c, "invalid lock name (1 to %d printable ASCII "
		                       "characters, no '/')", BAKERY_LOCK_NAME_MAX);
	if (len > BAKERY_LOCK_NAME_MAX)
		return cli_usage_error(c, "lock name longer than %d characters",
		                       BAKERY_LOCK_NAME_MAX);
	return 0;
}

/* `bakery run FILE COMMAND`, meant as flock(1)'s `flock FILE COMMAND`,
 * would create a region named after the file: a REGION that looks like a
 * path (a '/' past the first character, or the name of an existing file
 * or directory) and is no region yet is refused with a hint, whatever
 * follows it (a command of one word, -c, nothing), before anything else
 * is said of the command line.  Named as the user gave it, and as what it
 * is: a directory ("/" too, which is no region's name either) is said to
 * be one. */
static int path_check(struct cli *c, const char *region)
{
	struct stat st;
	bool exists = stat(region, &st) == 0;
	bakery_t *b;

	if (!*region || (!strchr(region + 1, '/') && !exists))
		return 0;
	if (bakery_open(region, BAKERY_RDONLY, NULL, &b) == 0) {
		bakery_close(b);
		return 0;
	}
	snprintf(c->what, sizeof(c->what), "%s", region);
	if (exists && S_ISDIR(st.st_mode))
		return cli_fail(c, "a directory, not a region: the lock of a directory is "
		                "`bakery run --file %s COMMAND` or `bakery flock %s COMMAND`",
		                region, region);
	return cli_fail(c, "looks like a file, not a region: the lock of a file is `bakery run "
	                "--file %s COMMAND` or `bakery flock %s COMMAND`", region, region);
}

/* Would execvp(3) find NAME: a path that can be run, or a program of that
 * name in a directory of $PATH (its default when unset). */
static bool command_found(const char *name)
{
	const char *path = getenv("PATH");
	size_t n = strlen(name);

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	if (!n)
		return false;
	if (!path)
		path = "/bin:/usr/bin";
	for (;;) {
		const char *end = strchrnul(path, ':');
		size_t len = (size_t)(end - path);
		char file[PATH_MAX];
		struct stat st;

		/* an empty entry is the current directory, as for execvp */
		if (len + 1 + n < sizeof(file)) {
			snprintf(file, sizeof(file), "%.*s%s%s", (int)len, len ? path : ".",
			         len ? "/" : "", name);
			if (access(file, X_OK) == 0 && stat(file, &st) == 0 && S_ISREG(st.st_mode))
				return true;
		}
		if (!*end)
			return false;
		path = end + 1;
	}
}

/*
 * `bakery run app.lock make all`: flock(1)'s order (FILE COMMAND ARG...)
 * read as REGION LOCK COMMAND, where REGION names no region yet, LOCK is
 * a command and COMMAND none.  Said before the region is made, with the
 * form that does what was meant, and with the exit code the run would have
 * had (it could only fail to start COMMAND).  A REGION that exists, or a
 * COMMAND that can be found, is taken as written.
 */
static int flock_order_check(struct cli *c, const struct run_opts *o)
{
	bakery_t *b = NULL;

	if (o->argv == o->shell_argv || command_found(o->argv[0]) || !command_found(o->lock))
		return 0;
	if (bakery_open(o->region, BAKERY_RDONLY, NULL, &b) != ENOENT) {
		if (b)
			bakery_close(b);
		return 0;
	}
	cli_say(c, "%s: command not found; REGION LOCK COMMAND took '%s' for a region and '%s' "
	        "for its lock: the lock of a file around a command is `bakery flock %s %s ...` or "
	        "`bakery run --file %s %s ...`", o->argv[0], o->region, o->lock, o->region, o->lock,
	        o->region, o->lock);
	return o->codes.not_found;
}

/* `bakery run 9`, meant as flock(1)'s descriptor form (`flock 9`): LOCK is
 * missing, and the form that does what was meant is named. */
static int descriptor_form_hint(struct cli *c, const char *arg)
{
	return cli_usage_error(c, "missing LOCK; if '%s' is a descriptor, as in flock(1)'s "
	                       "`flock %s`: " RUN_NO_DESCRIPTOR ": `bakery run --file FILE "
	                       "COMMAND` or `bakery flock FILE COMMAND`", arg, arg);
}

struct run_args {
	const char *algo, *wait, *conflict, *shell, *file, *holders;
	bool nonblock, shared, exclusive, close, no_fork, sigpipe_ok, verbose, unlock;
	bool any_owner, biased;
};

/* A -w longer than this (about 31.7 years) is waited as no -w is, as long
 * as it takes: a deadline that far is none, and the clock plus it stays
 * within a time_t. */
#define WAIT_FOREVER_AFTER 1e9
/* From 2^63 seconds on (inf too), flock(1) cannot set its timer: it fails
 * with EX_OSERR (71), and so does this. */
#define WAIT_TOO_LONG 0x1p63

/* -w SECONDS into O (O->wait is RUN_WAIT_FOREVER until then), read as
 * flock(1) reads it (strtold: blanks before it, a sign, a fraction, an
 * exponent, hex, inf; nothing after it): 0, or the exit code of a
 * refusal. */
static int wait_seconds(struct cli *c, const char *s, struct run_opts *o)
{
	char *end;
	double v;

	errno = 0;
	v = (double)strtold(s, &end);
	if (errno || end == s || *end || !(v >= 0))
		return cli_usage_error(c, "--wait must be a number of seconds, 0 or more, "
		                       "such as 2.5");
	if (v >= WAIT_TOO_LONG)
		return cli_fail(c, "--wait %s: too long for a timer (2^63 seconds or more); "
		                "without --wait, the lock is waited for as long as it takes", s);
	if (v > WAIT_FOREVER_AFTER)
		return 0;
	o->timeout = v;
	/* as flock(1): -w 0 is -n (its message too) */
	o->wait = v == 0 ? RUN_WAIT_NONE : RUN_WAIT_FOR;
	return 0;
}

/* -E CODE, read as flock(1) reads it (strtol, base 10: blanks before it
 * and a sign, nothing after it; "-0" is 0), within 0 to 255. */
static bool exit_code_value(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 255)
		return false;
	*out = (int)v;
	return true;
}

int run_wait_values(struct cli *c, const char *wait, bool nonblock, const char *conflict,
                    struct run_opts *o)
{
	int err;

	/* flock(1) reads -E as it parses; it sets -w's timer later */
	if (conflict && !exit_code_value(conflict, &o->codes.conflict))
		return cli_usage_error(c, "--conflict-exit-code must be a number from 0 to 255");
	o->wait = RUN_WAIT_FOREVER;
	if (wait && (err = wait_seconds(c, wait, o)))
		return err;
	/* as flock(1): -n wins over -w */
	if (nonblock)
		o->wait = RUN_WAIT_NONE;
	return 0;
}

/* The names of the algorithms that have FEATURE (a BAKERY_ALGO_HAS_ bit),
 * as "lamport and boulangerie", in BUF: the library says which they are. */
static const char *algos_with(unsigned feature, char *buf, size_t len)
{
	const char *names[BAKERY_ALGO_COUNT];
	size_t n = 0, at = 0;

	for (int a = BAKERY_ALGO_DEFAULT + 1; a < BAKERY_ALGO_COUNT; a++)
		if (bakery_algo_features((enum bakery_algo)a) & feature)
			names[n++] = bakery_algo_name((enum bakery_algo)a);
	buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", names[i],
		                       i + 2 < n ? ", " : i + 2 == n ? " and " : "");
	return buf;
}

/* What the library would refuse only after the region was made, for want of
 * FEATURE in the algorithm asked for: said here, before anything is
 * created.  0, or the usage error's exit status. */
static int algo_lacks(struct cli *c, const struct run_opts *o, unsigned feature)
{
	char have[128];

	/* the default names no algorithm: a new lock gets one that has it */
	if (o->algo == BAKERY_ALGO_DEFAULT || (bakery_algo_features(o->algo) & feature))
		return 0;
	algos_with(feature, have, sizeof(have));
	switch (feature) {
	case BAKERY_ALGO_HAS_SHARED:
		return cli_usage_error(c, "--shared: the %s algorithm has no shared mode (%s have)",
		                       bakery_algo_name(o->algo), have);
	case BAKERY_ALGO_HAS_HOLDERS:
		return cli_usage_error(c, "--holders %u: the %s algorithm cannot count several "
		                       "holders (%s can)", o->holders, bakery_algo_name(o->algo),
		                       have);
	default:
		return cli_usage_error(c, "--biased is for %s locks, not --algo %s", have,
		                       bakery_algo_name(o->algo));
	}
}

static int run_values(struct cli *c, const struct run_args *r, struct run_opts *o)
{
	int err;

	if (r->unlock)
		return cli_usage_error(c, "--unlock: a job's lock is given up when its command "
		                       "and the processes it started have ended");
	if (r->algo && bakery_algo_parse(r->algo, &o->algo))
		return cli_usage_error(c, "unknown algorithm '%s' (lamport, boulangerie, "
		                       "black-white, jayanti)", r->algo);
	if (r->holders && !cli_parse_count(r->holders, 1, BAKERY_MAX_HOLDERS, &o->holders))
		return cli_usage_error(c, "--holders must be a number from 1 to %u",
		                       (unsigned)BAKERY_MAX_HOLDERS);
	if (r->shared && o->holders > 1)
		return cli_usage_error(c, "--shared is for locks of one holder, not --holders %u",
		                       o->holders);
	if (r->shared && (err = algo_lacks(c, o, BAKERY_ALGO_HAS_SHARED)))
		return err;
	if (o->holders > 1 && (err = algo_lacks(c, o, BAKERY_ALGO_HAS_HOLDERS)))
		return err;
	if (r->biased && o->holders > 1)
		return cli_usage_error(c, "--biased is for locks of one holder, not --holders %u",
		                       o->holders);
	if (r->biased && (err = algo_lacks(c, o, BAKERY_ALGO_HAS_BIAS)))
		return err;
	if (r->close && r->no_fork)
		return cli_usage_error(c, "--close and --no-fork exclude each other");
	o->shared = r->shared;
	o->close = r->close;
	o->no_fork = r->no_fork;
	o->sigpipe_ok = r->sigpipe_ok;
	o->verbose = r->verbose;
	o->any_owner = r->any_owner;
	o->biased = r->biased;
	o->codes = (struct run_codes){ EXIT_RUN_TIMEOUT, EXIT_RUN_FAIL, EXIT_RUN_NOTFOUND,
	                               EXIT_RUN_NOEXEC };
	return run_wait_values(c, r->wait, r->nonblock, r->conflict, o);
}

int run_command_args(struct cli *c, const char *shell, const struct cli_args *a,
                     struct run_opts *o)
{
	if (shell && a->nrest)
		return cli_usage_error(c, "-c takes the whole command; unexpected argument '%s'",
		                       a->rest[0]);
	if (!shell && !a->nrest)
		return cli_usage_error(c, "missing COMMAND");
	if (shell)
		run_shell_command(o, shell);
	else
		o->argv = a->rest;
	return 0;
}

/* --file PATH: the path lock of PATH, which has one holder and the
 * library's algorithm, in the caller's own region of path locks (no
 * REGION LOCK: run_parse). */
static int file_args(struct cli *c, const struct run_args *r, const struct cli_args *a,
                     struct run_opts *o)
{
	if (r->algo)
		return cli_usage_error(c, "--algo: the lock of a file (--file) is a path lock, "
		                       "of the library's algorithm");
	if (o->holders > 1)
		return cli_usage_error(c, "--holders: the lock of a file (--file) is a path lock, "
		                       "of one holder");
	if (o->biased)
		return cli_usage_error(c, "--biased: the lock of a file (--file) is a path lock, "
		                       "which is not biased");
	if (r->any_owner)
		return cli_usage_error(c, "--any-owner: the lock of a file (--file) is a path "
		                       "lock, in the caller's own region of path locks");
	o->file = r->file;
	snprintf(c->what, sizeof(c->what), "%s", o->file);
	return 0;
}

static int run_parse(struct cli *c, int argc, char **argv, struct run_opts *o)
{
	struct run_args r = { NULL };
	const struct cli_opt opts[] = {
		{ "algo", 'a', &r.algo, NULL, NULL },
		{ "nonblock", 'n', NULL, &r.nonblock, NULL },
		{ "nb", 0, NULL, &r.nonblock, NULL },
		{ "nonblocking", 0, NULL, &r.nonblock, NULL },
		{ "wait", 'w', &r.wait, NULL, NULL }, { "timeout", 0, &r.wait, NULL, NULL },
		{ "conflict-exit-code", 'E', &r.conflict, NULL, NULL },
		{ "command", 'c', &r.shell, NULL, NULL }, { "file", 'F', &r.file, NULL, NULL },
		{ "shared", 's', NULL, &r.shared, &r.exclusive },
		{ "exclusive", 'x', NULL, &r.exclusive, &r.shared },
		{ "", 'e', NULL, &r.exclusive, &r.shared },
		{ "holders", 0, &r.holders, NULL, NULL }, { "close", 'o', NULL, &r.close, NULL },
		{ "no-fork", 0, NULL, &r.no_fork, NULL },
		{ "sigpipe-ok", 0, NULL, &r.sigpipe_ok, NULL },
		{ "verbose", 0, NULL, &r.verbose, NULL }, { "unlock", 'u', NULL, &r.unlock, NULL },
		{ "any-owner", 0, NULL, &r.any_owner, NULL },
		{ "biased", 0, NULL, &r.biased, NULL },
		{ NULL, 0, NULL, NULL, NULL }
	};
	struct cli_args a;
	int err;

	/* with --file, no REGION LOCK: the command follows the options, so
	 * only a REGION before --file is taken as one, and said before what
	 * else is wrong (such as a missing COMMAND) */
	if ((err = cli_parse_args(c, argc, argv, opts, &r.file, 2, true, &a)))
		return err;
	if (r.file && a.npos)
		return cli_usage_error(c, "--file names the lock: no REGION LOCK with it");
	if (!r.file && a.npos && (err = path_check(c, a.pos[0])))
		return err;
	if (!r.file && run_descriptor_form(&a, r.shell))
		return descriptor_form_hint(c, a.pos[0]);
	if ((err = cli_args_complete(c, &a, r.file ? 0 : 2)))
		return err;
	memset(o, 0, sizeof(*o));
	if ((err = run_values(c, &r, o)) || (err = run_command_args(c, r.shell, &a, o)))
		return err;
	if (r.file)
		return file_args(c, &r, &a, o);
	o->region = a.pos[0];
	o->lock = a.pos[1];
	if ((err = cli_region_arg(c, o->region)))
		return err;
	cli_set_what(c, o->region, o->lock);
	if ((err = lock_name_check(c, o->lock)))
		return err;
	return flock_order_check(c, o);
}

int cmd_run(struct cli *c, int argc, char **argv)
{
	struct run_opts o;
	int err;

	if ((err = run_parse(c, argc, argv, &o)))
		return err < 0 ? 0 : err;
	return run_job(c, &o);
}
