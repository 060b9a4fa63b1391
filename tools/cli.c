/* SPDX-License-Identifier: MIT */
/*
 * cli.c - error messages, option parsing and region opening for the
 * `bakery` tool.  Every error is one line on stderr that names the
 * subcommand and the region: "bakery: status /jobs: no such region".
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void vreport(const struct cli *c, const char *fmt, va_list ap)
{
	fprintf(stderr, "bakery: %s%s%s: ", c->cmd, *c->what ? " " : "", c->what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_fail(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, fmt, ap);
	va_end(ap);
	return c->fail_code;
}

/* Errors whose generic text would mislead when the object is a region. */
static const char *region_message(int err)
{
	switch (err) {
	case ENOENT:       return "no such region";
	case EEXIST:       return "region exists";
	case EINVAL:       return "invalid region name (printable characters, no '/' but a leading one)";
	case ENAMETOOLONG: return "region name too long";
	case EACCES:       return "permission denied";
	default:           return bakery_strerror(err);
	}
}

int cli_fail_err(const struct cli *c, int err)
{
	return cli_fail(c, "%s", region_message(err));
}

int cli_usage_error(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bakery: %s: ", c->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (usage: bakery %s)\n", c->usage);
	return c->usage_code;
}

void cli_set_what(struct cli *c, const char *region, const char *lock)
{
	snprintf(c->what, sizeof(c->what), "%s%s%s%s", *region == '/' ? "" : "/",
	         region, lock ? " " : "", lock ? lock : "");
}

bool cli_parse_count(const char *s, unsigned min, unsigned max, unsigned *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;           /* strtoul would take "-1" and " 1" */
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

int cli_open(const struct cli *c, const char *region, unsigned flags,
             const struct bakery_config *cfg, bakery_t **out)
{
	int err = bakery_open(region, flags, cfg, out);

	return err ? cli_fail_err(c, err) : 0;
}

/* ------------------------------------------------------------- options -- */

static const struct cli_opt *opt_find(const struct cli_opt *opts, const char *name, size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && !strncmp(opts->name, name, len))
			return opts;
	return NULL;
}

/* ARGV[*I] is "--something": apply it, advancing *I past its value. */
static int opt_take(struct cli *c, int argc, char **argv, int *i, const struct cli_opt *opts)
{
	const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const struct cli_opt *o = opt_find(opts, arg, len);

	if (!o)
		return cli_usage_error(c, "unknown option '%s'", argv[*i]);
	if (o->flag) {
		if (eq)
			return cli_usage_error(c, "option '--%s' takes no value", o->name);
		*o->flag = true;
		return 0;
	}
	if (eq) {
		*o->value = eq + 1;
		return 0;
	}
	if (*i + 1 >= argc)
		return cli_usage_error(c, "option '--%s' needs a value", o->name);
	*o->value = argv[++*i];
	return 0;
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

int cli_parse(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
              int maxpos, bool want_rest, struct cli_args *out)
{
	bool options = true;        /* until "--" */

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		int err;

		if (options && is_help(arg)) {
			printf("usage: bakery %s\n", c->usage);
			return -1;
		}
		if (options && !strcmp(arg, "--")) {
			options = false;
		} else if (options && !strncmp(arg, "--", 2)) {
			if ((err = opt_take(c, argc, argv, &i, opts)))
				return err;
		} else if (options && arg[0] == '-' && arg[1]) {
			return cli_usage_error(c, "unknown option '%s'", arg);
		} else if (out->npos < maxpos) {
			out->pos[out->npos++] = arg;
		} else if (want_rest) {
			/* the command starts here; its own options are its own */
			out->rest = argv + i;
			out->nrest = argc - i;
			break;
		} else {
			return cli_usage_error(c, "unexpected argument '%s'", arg);
		}
	}
	if (out->npos < maxpos)
		return cli_usage_error(c, "missing %s", out->npos == 0 ? "REGION" : "LOCK");
	return 0;
}
