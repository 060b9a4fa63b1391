/* SPDX-License-Identifier: MIT */
/*
 * bakery.c - the `bakery` command-line tool: create, inspect, recover and
 * remove libbakery regions, and run a command under a named lock.
 * docs/bakery.1 is its manual.  This file holds the dispatcher and the
 * small subcommands; status.c and run.c the larger ones.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli.h"

static const char help_text[] =
	"usage: bakery COMMAND [ARGS]\n"
	"\n"
	"Create, inspect and repair libbakery regions (POSIX shared-memory objects\n"
	"holding fair, crash-proof locks), and run commands under their locks.\n"
	"\n"
	"  bakery create  REGION [-s|--slots N] [-l|--locks N] [-m|--mode MODE]\n"
	"        create a region; fails if it exists (--help: the memory it takes)\n"
	"  bakery status  REGION [-j|--json]\n"
	"        show the region, its slots in use and its locks\n"
	"  bakery list    [-j|--json]\n"
	"        every region in " CLI_SHM_DIR " the caller can read\n"
	"  bakery recover [--any-owner] REGION\n"
	"        reclaim the slots of dead participants now\n"
	"  bakery reset   [--any-owner] REGION LOCK\n"
	"        make a not-recoverable lock usable again (region owner only)\n"
	"  bakery rm      [--any-owner] REGION LOCK [-f|--force]\n"
	"        remove a lock nobody holds or waits for (region owner only); one\n"
	"        whose holder died unrepaired only with --force\n"
	"  bakery unlink  REGION [-f|--force]\n"
	"        remove the region's name (not a region, or one of another layout\n"
	"        version, only with --force)\n"
	"  bakery run     [OPTIONS] REGION LOCK [--] COMMAND [ARG...]\n"
	"  bakery run     [OPTIONS] REGION LOCK -c SHELL-COMMAND\n"
	"  bakery run     [OPTIONS] -F|--file PATH [--] COMMAND [ARG...]\n"
	"        hold LOCK while COMMAND, and every process it starts, runs (the\n"
	"        region is created if missing); `bakery run --help` lists OPTIONS\n"
	"  bakery flock   [OPTIONS] FILE|DIR [--] COMMAND [ARG...]\n"
	"  bakery flock   [OPTIONS] FILE|DIR -c SHELL-COMMAND\n"
	"        flock(1)'s command line, on the path lock of a file or directory;\n"
	"        `bakery flock --help` lists OPTIONS\n"
	"  bakery help | --help        this text\n"
	"  bakery help COMMAND         COMMAND's help, as `bakery COMMAND --help`\n"
	"  bakery --version            the version\n"
	"\n"
	"ALGO: lamport, boulangerie, black-white, jayanti (default: the lock's own,\n"
	"or the library default for a new lock).  See bakery(1) for exit codes.\n"
	"A region whose object belongs to another user (not you, not root) is\n"
	"joined only with --any-owner: its owner could break its exclusion.\n";

/* The options of `bakery run`, for `bakery run --help`. */
static const char run_help[] =
	"Hold LOCK of REGION (both created if missing) while COMMAND runs, and as\n"
	"long as any process it started runs (unless -o); exit with its status.\n"
	"  -n, --nonblock, --nb, --nonblocking\n"
	"                           do not wait: a busy lock is a conflict\n"
	"  -w, --wait, --timeout SEC\n"
	"                           give up after SEC seconds (0: as -n; -n wins)\n"
	"  -E, --conflict-exit-code N\n"
	"                           exit code of a conflict (default 75)\n"
	"  -c, --command CMD        run $SHELL -c CMD (/bin/sh if SHELL is unset)\n"
	"  -F, --file PATH          the path lock of the file or directory PATH (in\n"
	"                           /bakery-paths-UID; Python's bakery.PathLock's)\n"
	"  -s, --shared             take the lock as a reader, beside other readers\n"
	"  -x, -e, --exclusive      take it alone (the default)\n"
	"  -o, --close              processes the command starts do not keep the lock\n"
	"      --no-fork            exec COMMAND in the wrapper's place\n"
	"      --sigpipe-ok         a command killed by SIGPIPE ended normally\n"
	"  -a, --algo ALGO          lamport, boulangerie, black-white, jayanti\n"
	"      --holders K          a new lock admits K holders at once\n"
	"      --biased             a new lock is biased (see bakery(3))\n"
	"      --verbose            say how long the lock took, and what runs\n"
	"      --any-owner          join a region of another user (refused otherwise)\n"
	"  -h, --help               this text\n"
	"Exit: the command's status; 75 conflict, 125 bakery failed, 126 and 127\n"
	"the command could not be run.  See bakery(1).\n";

/* The options of `bakery flock`, for `bakery flock --help`. */
static const char flock_help[] =
	"As flock(1), on the path lock of FILE or DIR (a file is created if\n"
	"missing; in /bakery-paths-UID, the lock Python's bakery.PathLock takes):\n"
	"fair, and kept while any process the command started runs (unless -o).\n"
	"Silent on a conflict, which exits 1 (or -E's code), and on a holder's\n"
	"death (the next command gets BAKERY_OWNER_DEAD=1).  Per user: another\n"
	"user's jobs on FILE are not excluded.\n"
	"  -s, --shared             a shared (read) lock\n"
	"  -x, -e, --exclusive      an exclusive (write) lock (the default)\n"
	"  -n, --nb, --nonblock, --nonblocking\n"
	"                           do not wait: a busy lock is a conflict\n"
	"  -w, --wait, --timeout SEC\n"
	"                           give up after SEC seconds (0: as -n; -n wins)\n"
	"  -o, --close              processes the command starts do not keep the lock\n"
	"  -E, --conflict-exit-code N\n"
	"                           exit code of a conflict (default 1)\n"
	"  -F, --no-fork            exec COMMAND in bakery's place\n"
	"  -c, --command CMD        run $SHELL -c CMD (/bin/sh if SHELL is unset)\n"
	"      --sigpipe-ok         a command killed by SIGPIPE ended normally\n"
	"      --verbose            say how long the lock took, and what runs\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n"
	"Not taken: -u and a descriptor (`flock 9`): a bakery lock belongs to a\n"
	"process, not to a descriptor.  Exit: the command's status; 1 conflict,\n"
	"64 bad usage, 66 FILE cannot be opened, 69 COMMAND cannot be run, 71\n"
	"bakery failed.  See bakery(1).\n";

/* ---------------------------------------------------------------- create -- */

static int create_config(struct cli *c, const char *slots, const char *locks,
                         const char *mode, struct bakery_config *cfg)
{
	char *end;
	unsigned long m;

	memset(cfg, 0, sizeof(*cfg));
	if (slots && !cli_parse_count(slots, 1, BAKERY_MAX_SLOTS, &cfg->slots))
		return cli_usage_error(c, "--slots must be a number from 1 to %u", BAKERY_MAX_SLOTS);
	if (locks && !cli_parse_count(locks, 1, BAKERY_MAX_LOCKS, &cfg->locks))
		return cli_usage_error(c, "--locks must be a number from 1 to %u", BAKERY_MAX_LOCKS);
	if (mode) {
		/* read and write bits only: a region has nothing to execute, and
		 * setuid, setgid or sticky bits on it would only mislead */
		m = strtoul(mode, &end, 8);
		if (*mode < '0' || *mode > '7' || *end || (m & ~0666ul) || m == 0)
			return cli_usage_error(c, "--mode must be octal read/write permission bits "
			                       "within 0666, such as 0660");
		cfg->mode = (mode_t)m;
	}
	return 0;
}

/* BYTES as "N KiB" or "N.N MiB" into BUF. */
static void print_size(char *buf, size_t size, double bytes)
{
	if (bytes < 1024 * 1024)
		snprintf(buf, size, "%.0f KiB", bytes / 1024);
	else
		snprintf(buf, size, "%.1f MiB", bytes / (1024 * 1024));
}

/* After create's usage (--help): the shared memory the region would take,
 * with the options given before --help, and what /dev/shm has free (a
 * container's is small: Docker's default is 64 MB). */
static int create_size(struct cli *c, const char *slots, const char *locks)
{
	struct bakery_config cfg;
	struct statvfs vfs;
	char total[32], avail[32], all[32];
	unsigned ns, nl;
	uint64_t size;
	int err;

	if ((err = create_config(c, slots, locks, NULL, &cfg)))
		return err;
	if ((err = bakery_region_size(&cfg, &size)))
		return cli_fail(c, "%s", bakery_strerror(err));
	ns = cfg.slots ? cfg.slots : BAKERY_DEFAULT_SLOTS;
	nl = cfg.locks ? cfg.locks : BAKERY_DEFAULT_LOCKS;
	print_size(total, sizeof(total), (double)size);
	/* three lines, each under 80 columns whatever the numbers */
	printf("\nA region of %u slot%s and %u lock%s takes %llu bytes (%s)\n"
	       "of /dev/shm, all reserved when it is created", ns, ns == 1 ? "" : "s", nl,
	       nl == 1 ? "" : "s", (unsigned long long)size, total);
	if (statvfs(CLI_SHM_DIR, &vfs) == 0) {
		print_size(avail, sizeof(avail), (double)vfs.f_bavail * vfs.f_frsize);
		print_size(all, sizeof(all), (double)vfs.f_blocks * vfs.f_frsize);
		printf(";\n/dev/shm has %s free of %s", avail, all);
	}
	printf(".\n");
	return 0;
}

static int cmd_create(struct cli *c, int argc, char **argv)
{
	const char *slots = NULL, *locks = NULL, *mode = NULL;
	const struct cli_opt opts[] = {
		{ "slots", 's', &slots, NULL, NULL }, { "locks", 'l', &locks, NULL, NULL },
		{ "mode", 'm', &mode, NULL, NULL }, { NULL, 0, NULL, NULL, NULL }
	};
	struct bakery_config cfg;
	struct cli_args a;
	bakery_t *b;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, NULL, 1, false, &a)))
		return err < 0 ? create_size(c, slots, locks) : err;
	if ((err = cli_region_arg(c, a.pos[0])))
		return err;
	if ((err = create_config(c, slots, locks, mode, &cfg)))
		return err;
	if ((err = cli_open(c, a.pos[0], BAKERY_CREATE | BAKERY_EXCL, &cfg, &b)))
		return err;
	bakery_close(b);
	return 0;
}

/* --------------------------------------------------------------- recover -- */

static int cmd_recover(struct cli *c, int argc, char **argv)
{
	bool any_owner = false;
	const struct cli_opt opts[] = {
		{ "any-owner", 0, NULL, &any_owner, NULL }, { NULL, 0, NULL, NULL, NULL }
	};
	struct cli_args a;
	unsigned n = 0;
	bakery_t *b;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, NULL, 1, false, &a)))
		return err < 0 ? 0 : err;
	if ((err = cli_region_arg(c, a.pos[0])))
		return err;
	/* NORECOVER: the reaping is bakery_recover's, which counts it */
	if ((err = cli_open(c, a.pos[0], BAKERY_NORECOVER | (any_owner ? BAKERY_ANY_OWNER : 0),
	                    NULL, &b)))
		return err;
	err = bakery_recover(b, &n);
	bakery_close(b);
	if (err)
		return cli_fail(c, "%s", bakery_strerror(err));
	printf("%u slot%s reclaimed\n", n, n == 1 ? "" : "s");
	return 0;
}

/* ---------------------------------------------------------------- unlink -- */

/* Unless --force: refuse to remove a shm object that is not a valid region,
 * so that a typing error cannot delete some other program's memory; nor a
 * region of another layout version, whose holders this library cannot see
 * (programs of the library that made it may still use it).  Any owner's:
 * removing another user's region (root clearing a squat) is up to the
 * kernel (the sticky /dev/shm). */
static int unlink_check(struct cli *c, const char *region)
{
	unsigned version;
	bakery_t *b;
	int err = bakery_open(region, BAKERY_NORECOVER | BAKERY_ANY_OWNER, NULL, &b);

	if (err == BAKERY_EVERSION && (version = cli_region_layout(region)))
		return cli_fail(c, "a region of layout version %u, which this bakery cannot "
		                "read: whether its locks are in use cannot be known; not removed "
		                "(--force removes it anyway)", version);
	if (err == BAKERY_EBADREGION || err == BAKERY_EVERSION)
		return cli_fail(c, "%s; not removed (use --force to remove it anyway)",
		                bakery_strerror(err));
	if (err)
		return cli_open_fail(c, region, err);
	bakery_close(b);
	return 0;
}

static int cmd_unlink(struct cli *c, int argc, char **argv)
{
	bool force = false;
	const struct cli_opt opts[] = {
		{ "force", 'f', NULL, &force, NULL }, { NULL, 0, NULL, NULL, NULL }
	};
	struct cli_args a;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, NULL, 1, false, &a)))
		return err < 0 ? 0 : err;
	if ((err = cli_region_arg(c, a.pos[0])))
		return err;
	if (!force && (err = unlink_check(c, a.pos[0])))
		return err;
	err = bakery_unlink(a.pos[0]);
	return err ? cli_open_fail(c, a.pos[0], err) : 0;
}

/* ------------------------------------------------------------------ main -- */

struct subcommand {
	const char *name;
	const char *usage;
	const char *help;
	int (*fn)(struct cli *c, int argc, char **argv);
};

static const struct subcommand subcommands[] = {
	{ "create",  "create REGION [-s|--slots N] [-l|--locks N] [-m|--mode MODE]", NULL,
	  cmd_create },
	{ "status",  "status REGION [-j|--json]", NULL, cmd_status },
	{ "list",    "list [-j|--json]", NULL, cmd_list },
	{ "recover", "recover [--any-owner] REGION", NULL, cmd_recover },
	{ "reset",   "reset [--any-owner] REGION LOCK", NULL, cmd_reset },
	{ "rm",      "rm [--any-owner] REGION LOCK [-f|--force]", NULL, cmd_rm },
	{ "unlink",  "unlink REGION [-f|--force]", NULL, cmd_unlink },
	{ "run",     "run [OPTIONS] REGION LOCK [--] COMMAND [ARG...]\n"
	             "       bakery run [OPTIONS] REGION LOCK -c SHELL-COMMAND\n"
	             "       bakery run [OPTIONS] -F|--file PATH [--] COMMAND [ARG...]",
	  run_help, cmd_run },
	{ "flock",   "flock [OPTIONS] FILE|DIR [--] COMMAND [ARG...]\n"
	             "       bakery flock [OPTIONS] FILE|DIR -c SHELL-COMMAND", flock_help,
	  cmd_flock },
};

/* The exit codes of subcommand NAME: run keeps 1 and 2 free for the
 * command's own statuses; flock has flock(1)'s. */
static void exit_codes(const char *name, struct cli *c)
{
	c->fail_code = EXIT_FAIL;
	c->usage_code = EXIT_USAGE;
	if (!strcmp(name, "run"))
		c->fail_code = c->usage_code = EXIT_RUN_FAIL;
	if (!strcmp(name, "flock")) {
		c->fail_code = EXIT_FLOCK_FAIL;
		c->usage_code = EXIT_FLOCK_USAGE;
		c->pos_name = "FILE";
	}
}

/* A full disk or a closed pipe must not look like success: CODE, or, if
 * standard output could not be written, C's failure code (EXIT_FAIL
 * without C), said on stderr as C's failure. */
static int finish(const struct cli *c, int code)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return code;
	if (c)
		cli_fail(c, "error writing output");
	else
		fprintf(stderr, "bakery: error writing output\n");
	return code ? code : c ? c->fail_code : EXIT_FAIL;
}

static int dispatch(const char *name, int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		const struct subcommand *s = &subcommands[i];
		struct cli c = { .cmd = s->name, .usage = s->usage, .help = s->help };

		if (!strcmp(name, s->name)) {
			exit_codes(s->name, &c);
			return finish(&c, s->fn(&c, argc, argv));
		}
	}
	fprintf(stderr, "bakery: unknown command '%s' (try 'bakery --help')\n", name);
	return EXIT_USAGE;
}

/* `bakery help` or `bakery --version` given more than it takes: ARG. */
static int top_usage_error(const char *cmd, const char *arg)
{
	fprintf(stderr, "bakery: %s: unexpected argument '%s' (try 'bakery --help')\n", cmd, arg);
	return EXIT_USAGE;
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "help") || !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

/* `bakery help [COMMAND]` (ARGV[0] "help", "--help" or "-h"): this text,
 * or COMMAND's help as `bakery COMMAND --help` prints it. */
static int help(int argc, char **argv)
{
	char *command_help[] = { argc > 1 ? argv[1] : NULL, (char *)"--help", NULL };

	if (argc > 2)
		return top_usage_error(argv[0], argv[2]);
	if (argc == 2 && !is_help(argv[1]))
		return dispatch(argv[1], 2, command_help);
	fputs(help_text, stdout);
	return finish(NULL, 0);
}

static int version(int argc, char **argv)
{
	if (argc > 1)
		return top_usage_error(argv[0], argv[1]);
	cli_print_version(NULL);
	return finish(NULL, 0);
}

/* Descriptors 0, 1 and 2 open, onto /dev/null if they were closed
 * (`bakery run ... 2>&-`, as cron wrappers and daemons leave them): a
 * descriptor the tool or the library opens must never become a standard
 * stream, or a message meant for stderr would land in a region, and the
 * command would inherit it as one.  False if that cannot be done. */
static bool standard_streams_open(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int nul;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free descriptor: FD itself */
		nul = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (nul != fd) {
			if (nul >= 0)
				close(nul);
			return false;
		}
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!standard_streams_open())
		return EXIT_RUN_FAIL;   /* nowhere safe to say it */
	if (!name) {
		fprintf(stderr, "bakery: no command given (try 'bakery --help')\n");
		return EXIT_USAGE;
	}
	if (is_help(name))
		return help(argc - 1, argv + 1);
	if (!strcmp(name, "--version") || !strcmp(name, "version"))
		return version(argc - 1, argv + 1);
	/* the subcommand sees its name as ARGV[0], as getopt_long wants */
	return dispatch(name, argc - 1, argv + 1);
}
