/* SPDX-License-Identifier: MIT */
/*
 * bakery.c - the `bakery` command-line tool: create, inspect, recover and
 * remove libbakery regions, and run a command under a named lock.
 * docs/bakery.1 is its manual.  This file holds the dispatcher and the
 * small subcommands; status.c and run.c the larger ones.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char help_text[] =
	"usage: bakery COMMAND [ARGS]\n"
	"\n"
	"Create, inspect and repair libbakery regions (POSIX shared-memory objects\n"
	"holding fair, crash-proof locks), and run commands under their locks.\n"
	"\n"
	"  bakery create  REGION [--slots N] [--locks N] [--mode MODE]\n"
	"        create a region; fails if it exists\n"
	"  bakery status  REGION [--json]\n"
	"        show the region, its slots in use and its locks\n"
	"  bakery recover REGION\n"
	"        reclaim the slots of dead participants now\n"
	"  bakery unlink  REGION [--force]\n"
	"        remove the region's name\n"
	"  bakery run     REGION LOCK [--algo ALGO] [--timeout SEC] [--] COMMAND [ARG...]\n"
	"        hold LOCK while COMMAND runs (the region is created if missing)\n"
	"  bakery help | --help        this text\n"
	"  bakery --version            the version\n"
	"\n"
	"ALGO: lamport, boulangerie, black-white, jayanti (default: the lock's own,\n"
	"or the library default for a new lock).  See bakery(1) for exit codes.\n";

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
		m = strtoul(mode, &end, 8);
		if (*mode < '0' || *mode > '7' || *end || m > 07777 || m == 0)
			return cli_usage_error(c, "--mode must be octal permission bits, such as 0660");
		cfg->mode = (mode_t)m;
	}
	return 0;
}

static int cmd_create(struct cli *c, int argc, char **argv)
{
	const char *slots = NULL, *locks = NULL, *mode = NULL;
	const struct cli_opt opts[] = {
		{ "slots", &slots, NULL }, { "locks", &locks, NULL }, { "mode", &mode, NULL }, { NULL, NULL, NULL }
	};
	struct bakery_config cfg;
	struct cli_args a;
	bakery_t *b;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, 1, false, &a)))
		return err < 0 ? 0 : err;
	cli_set_what(c, a.pos[0], NULL);
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
	const struct cli_opt opts[] = { { NULL, NULL, NULL } };
	struct cli_args a;
	unsigned n = 0;
	bakery_t *b;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, 1, false, &a)))
		return err < 0 ? 0 : err;
	cli_set_what(c, a.pos[0], NULL);
	/* NORECOVER: the reaping is bakery_recover's, which counts it */
	if ((err = cli_open(c, a.pos[0], BAKERY_NORECOVER, NULL, &b)))
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
 * so that a typing error cannot delete some other program's memory. */
static int unlink_check(struct cli *c, const char *region)
{
	bakery_t *b;
	int err = bakery_open(region, BAKERY_NORECOVER, NULL, &b);

	if (err == BAKERY_EBADREGION || err == BAKERY_EVERSION)
		return cli_fail(c, "%s; not removed (use --force to remove it anyway)",
		                bakery_strerror(err));
	if (err)
		return cli_fail_err(c, err);
	bakery_close(b);
	return 0;
}

static int cmd_unlink(struct cli *c, int argc, char **argv)
{
	bool force = false;
	const struct cli_opt opts[] = { { "force", NULL, &force }, { NULL, NULL, NULL } };
	struct cli_args a;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, 1, false, &a)))
		return err < 0 ? 0 : err;
	cli_set_what(c, a.pos[0], NULL);
	if (!force && (err = unlink_check(c, a.pos[0])))
		return err;
	err = bakery_unlink(a.pos[0]);
	return err ? cli_fail_err(c, err) : 0;
}

/* ------------------------------------------------------------------ main -- */

struct subcommand {
	const char *name;
	const char *usage;
	int (*fn)(struct cli *c, int argc, char **argv);
};

static const struct subcommand subcommands[] = {
	{ "create",  "create REGION [--slots N] [--locks N] [--mode MODE]", cmd_create },
	{ "status",  "status REGION [--json]", cmd_status },
	{ "recover", "recover REGION", cmd_recover },
	{ "unlink",  "unlink REGION [--force]", cmd_unlink },
	{ "run",     "run REGION LOCK [--algo ALGO] [--timeout SEC] [--] COMMAND [ARG...]", cmd_run },
};

static int dispatch(const char *name, int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		const struct subcommand *s = &subcommands[i];
		bool run = !strcmp(s->name, "run");
		struct cli c = {
			.cmd = s->name, .usage = s->usage,
			/* run keeps 1 and 2 free for the command's own statuses */
			.fail_code = run ? EXIT_RUN_FAIL : EXIT_FAIL,
			.usage_code = run ? EXIT_RUN_FAIL : EXIT_USAGE,
		};

		if (!strcmp(name, s->name))
			return s->fn(&c, argc, argv);
	}
	fprintf(stderr, "bakery: unknown command '%s' (try 'bakery --help')\n", name);
	return EXIT_USAGE;
}

/* A full disk or a closed pipe must not look like success. */
static int finish(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "bakery: error writing output\n");
		return code ? code : EXIT_FAIL;
	}
	return code;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		fprintf(stderr, "bakery: no command given (try 'bakery --help')\n");
		return EXIT_USAGE;
	}
	if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
		fputs(help_text, stdout);
		return 0;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("bakery (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return 0;
	}
	return finish(dispatch(name, argc - 2, argv + 2));
}
