/* SPDX-License-Identifier: MIT */
/*
 * flock.c - `bakery flock`: flock(1)'s command line, on a bakery lock.
 *
 *   bakery flock [OPTIONS] FILE|DIR [--] COMMAND [ARG...]
 *   bakery flock [OPTIONS] FILE|DIR -c SHELL-COMMAND
 *
 * flock(1)'s letters mean what they mean there: -s, -x/-e, -n, -w (with
 * -n too: -n wins; -w 0 is -n), -o, -E, -F (--no-fork), -c ($SHELL -c),
 * --verbose, -V.  As flock(1), it says nothing when the lock is busy or
 * -w expires, and exits 1 (or -E's code); its other exit codes are
 * flock(1)'s too (cli.h).  The lock is the file's path lock (run_file.c);
 * the job is `bakery run`'s (run_job.c), so a job's lock is kept while
 * any process it started runs, unless -o, and the next holder is told
 * when a holder died inside (BAKERY_OWNER_DEAD=1).
 *
 * Refused, with a message: the descriptor form (`flock 9`) and -u: a
 * bakery lock belongs to a live process, not to an open file.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "run.h"

struct flock_args {
	const char *wait, *conflict, *shell;
	bool shared, exclusive, nonblock, close, no_fork, verbose, version, unlock, sigpipe_ok;
};

static int flock_values(struct cli *c, const struct flock_args *f, const struct cli_args *a,
                        struct run_opts *o)
{
	int err;

	if (f->unlock)
		return cli_usage_error(c, "--unlock: a bakery lock belongs to a live process, not "
		                       "to a descriptor; it is given up when the command and the "
		                       "processes it started have ended");
	if (run_descriptor_form(a, f->shell))
		return cli_usage_error(c, "'%s': " RUN_NO_DESCRIPTOR ": `bakery flock FILE "
		                       "COMMAND`", a->pos[0]);
	if (f->close && f->no_fork)
		return cli_usage_error(c, "--close and --no-fork exclude each other");
	if ((err = run_command_args(c, f->shell, a, o)))
		return err;
	o->file = a->pos[0];
	o->shared = f->shared;
	o->close = f->close;
	o->no_fork = f->no_fork;
	o->verbose = f->verbose;
	o->sigpipe_ok = f->sigpipe_ok;
	o->quiet = true;
	o->codes = (struct run_codes){ EXIT_FLOCK_CONFLICT, EXIT_FLOCK_NOFILE, EXIT_FLOCK_NOEXEC,
	                               EXIT_FLOCK_NOEXEC };
	return run_wait_values(c, f->wait, f->nonblock, f->conflict, o);
}

static int flock_parse(struct cli *c, int argc, char **argv, struct run_opts *o, bool *version)
{
	struct flock_args f = { NULL };
	const struct cli_opt opts[] = {
		{ "shared", 's', NULL, &f.shared, &f.exclusive },
		{ "exclusive", 'x', NULL, &f.exclusive, &f.shared },
		{ "", 'e', NULL, &f.exclusive, &f.shared },
		{ "nonblock", 'n', NULL, &f.nonblock, NULL },
		{ "nb", 0, NULL, &f.nonblock, NULL },
		{ "nonblocking", 0, NULL, &f.nonblock, NULL },
		{ "wait", 'w', &f.wait, NULL, NULL }, { "timeout", 0, &f.wait, NULL, NULL },
		{ "close", 'o', NULL, &f.close, NULL },
		{ "conflict-exit-code", 'E', &f.conflict, NULL, NULL },
		{ "no-fork", 'F', NULL, &f.no_fork, NULL },
		{ "command", 'c', &f.shell, NULL, NULL },
		{ "verbose", 0, NULL, &f.verbose, NULL },
		{ "version", 'V', NULL, &f.version, NULL },
		{ "unlock", 'u', NULL, &f.unlock, NULL },
		{ "sigpipe-ok", 0, NULL, &f.sigpipe_ok, NULL },
		{ NULL, 0, NULL, NULL, NULL }
	};
	struct cli_args a;
	int err;

	memset(o, 0, sizeof(*o));
	/* -V alone is enough; any other use needs FILE */
	if (argc == 2 && (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))) {
		*version = true;
		return 0;
	}
	if ((err = cli_parse(c, argc, argv, opts, NULL, 1, true, &a)))
		return err;
	if (f.version) {
		*version = true;
		return 0;
	}
	if ((err = flock_values(c, &f, &a, o)))
		return err;
	snprintf(c->what, sizeof(c->what), "%s", o->file);
	return 0;
}

int cmd_flock(struct cli *c, int argc, char **argv)
{
	bool version = false;
	struct run_opts o;
	int err;

	if ((err = flock_parse(c, argc, argv, &o, &version)))
		return err < 0 ? 0 : err;
	if (version) {
		cli_print_version("flock");
		return 0;
	}
	return run_job(c, &o);
}
