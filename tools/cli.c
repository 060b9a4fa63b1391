/* SPDX-License-Identifier: MIT */
/*
 * cli.c - error messages, option parsing and region opening for the
 * `bakery` tool.  Every error is one line on stderr that names the
 * subcommand and the region: "bakery: status /jobs: no such region".
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* S on stderr with its control characters (a name given on the command
 * line may hold any byte) written as \xNN: one line, nothing the
 * terminal would act on.  Other bytes pass, so that UTF-8 paths read as
 * they are. */
static void put_name(const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f)
			fprintf(stderr, "\\x%02x", ch);
		else
			fputc(ch, stderr);
	}
}

void cli_vsay(const struct cli *c, const char *fmt, va_list ap)
{
	fprintf(stderr, "bakery: %s%s", c->cmd, *c->what ? " " : "");
	put_name(c->what);
	fputs(": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_say(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vsay(c, fmt, ap);
	va_end(ap);
}

int cli_fail(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vsay(c, fmt, ap);
	va_end(ap);
	return c->fail_code;
}

_Static_assert(BAKERY_REGION_NAME_MAX == 200, "region_message says 200 characters");

/* Errors whose generic text would mislead when the object is a region. */
static const char *region_message(int err)
{
	switch (err) {
	case ENOENT:       return "no such region";
	case EEXIST:       return "region exists";
	case EINVAL:       return "invalid region name (printable ASCII characters, no '/' but a "
	                          "leading one)";
	case ENAMETOOLONG: return "region name too long (at most 200 characters after the "
	                          "leading '/')";
	case EACCES:       return "permission denied";
	default:           return bakery_strerror(err);
	}
}


/* Is the region's name in the shm directory a directory?  shm_open says
 * EINVAL for one (O_RDWR), which would read as a bad name, or opens it
 * (O_RDONLY) and the library finds no region in it. */
static bool region_is_directory(const char *region)
{
	char path[sizeof(CLI_SHM_DIR) + BAKERY_REGION_NAME_MAX + 2];
	struct stat st;

	snprintf(path, sizeof(path), CLI_SHM_DIR "%s", region + (*region == '/'));
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "user NAME (uid N)" for the owner of REGION's object, into BUF. */
void cli_region_owner(const char *region, char *buf, size_t size)
{
	char path[sizeof(CLI_SHM_DIR) + BAKERY_REGION_NAME_MAX + 2];
	struct passwd *pw;
	struct stat st;

	snprintf(path, sizeof(path), CLI_SHM_DIR "%s", region + (*region == '/'));
	if (stat(path, &st) != 0) {
		snprintf(buf, size, "another user");
		return;
	}
	pw = getpwuid(st.st_uid);
	if (pw)
		snprintf(buf, size, "user %s (uid %u)", pw->pw_name, (unsigned)st.st_uid);
	else
		snprintf(buf, size, "uid %u", (unsigned)st.st_uid);
}

int cli_open_fail(const struct cli *c, const char *region, int err)
{
	char owner[128];

	if ((err == EINVAL || err == BAKERY_EBADREGION) && region_is_directory(region))
		return cli_fail(c, "a directory in " CLI_SHM_DIR ", not a region");
	if (err == EPERM) {
		cli_region_owner(region, owner, sizeof(owner));
		return cli_fail(c, "the region belongs to %s, not to you: not joined, since its "
		                "owner could break its exclusion (--any-owner to share it)", owner);
	}
	if (err == EINVAL || err == ENAMETOOLONG) {
		/* a bad name: a bad command line, said as one (bakery.1) */
		cli_fail(c, "%s (try 'bakery %s --help')", region_message(err), c->cmd);
		return c->usage_code;
	}
	return cli_fail(c, "%s", region_message(err));
}

int cli_region_arg(struct cli *c, const char *region)
{
	if (!*region || !strcmp(region, "/"))
		return cli_usage_error(c, "empty region name");
	cli_set_what(c, region, NULL);
	return 0;
}

int cli_usage_error(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bakery: %s: ", c->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'bakery %s --help')\n", c->cmd);
	return c->usage_code;
}

/* A name with a '/' past its first character is no region's: said as
 * given, not made into "/./f". */
void cli_set_what(struct cli *c, const char *region, const char *lock)
{
	bool bare = *region != '/' && !strchr(region, '/');

	snprintf(c->what, sizeof(c->what), "%s%s%s%s", bare ? "/" : "", region,
	         lock ? " " : "", lock ? lock : "");
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

	return err ? cli_open_fail(c, region, err) : 0;
}

unsigned cli_region_layout(const char *region)
{
	unsigned version;

	return bakery_region_layout(region, &version) == 0 ? version : 0;
}

const char *cli_layout_word(unsigned layout, char *buf, size_t size)
{
	if (layout)
		snprintf(buf, size, "%u", layout);
	else
		snprintf(buf, size, "unknown");
	return buf;
}

void cli_json_layout(unsigned layout, bool compatible, const char *sep)
{
	if (layout)
		printf("\"layout_version\": %u%s", layout, sep);
	else
		printf("\"layout_version\": null%s", sep);
	printf("\"compatible\": %s", compatible ? "true" : "false");
}

/* The synopsis and the options of the subcommand: its --help. */
static void print_usage(const struct cli *c)
{
	printf("usage: bakery %s\n%s", c->usage, c->help ? c->help : "");
}

void cli_print_version(const char *cmd)
{
	printf("bakery%s%s (%s) %s\n", cmd ? " " : "", cmd ? cmd : "", PACKAGE_NAME,
	       PACKAGE_VERSION);
	if (strcmp(bakery_version(), PACKAGE_VERSION) != 0)
		printf("running with libbakery %s\n", bakery_version());
}

int cli_lock_command(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
                     cli_lock_act act)
{
	bool any_owner = false;
	struct cli_opt all[CLI_MAX_OPTS + 1];
	size_t n = 0;
	struct cli_args a;
	bakery_t *b;
	int err;

	/* the command's own options, then --any-owner, which all of them take */
	for (; opts && opts[n].name && n < CLI_MAX_OPTS - 1; n++)
		all[n] = opts[n];
	all[n++] = (struct cli_opt){ "any-owner", 0, NULL, &any_owner, NULL };
	all[n] = (struct cli_opt){ NULL, 0, NULL, NULL, NULL };
	if ((err = cli_parse(c, argc, argv, all, NULL, 2, false, &a)))
		return err < 0 ? 0 : err;
	if ((err = cli_region_arg(c, a.pos[0])))
		return err;
	cli_set_what(c, a.pos[0], a.pos[1]);
	if ((err = cli_open(c, a.pos[0], any_owner ? BAKERY_ANY_OWNER : 0, NULL, &b)))
		return err;
	err = act(c, b, a.pos[1]);
	bakery_close(b);
	return err;
}

/* ------------------------------------------------------------- options -- */

/* The first entry of OPTS that sets what entry N sets (itself, or an
 * earlier name of the same option: --nb and --nonblocking are --nonblock).
 * Its index is getopt_long's value for all of them, so that a prefix of
 * several (--nonb) is not ambiguous: glibc says so only of candidates
 * that differ. */
static size_t opt_first_alias(const struct cli_opt *opts, size_t n)
{
	size_t i = 0;

	while (opts[i].value != opts[n].value || opts[i].flag != opts[n].flag ||
	       opts[i].clears != opts[n].clears)
		i++;
	return i;
}

/* getopt_long's tables for OPTS: long options in LONGOPTS (not for an
 * entry whose name is "", a second short letter of an option), and
 * "+:" then each short letter (with ':' if it takes a value) in SHORTS. */
static void opt_tables(const struct cli_opt *opts, struct option *longopts, char *shorts)
{
	size_t n = 0, k = 0, nlong = 0;

	shorts[k++] = '+';      /* stop at the first positional argument */
	shorts[k++] = ':';      /* a missing value is ':', not '?' */
	shorts[k++] = 'h';
	for (; opts[n].name && n < CLI_MAX_OPTS; n++) {
		if (*opts[n].name)
			longopts[nlong++] = (struct option){ opts[n].name,
			                                     opts[n].value ? required_argument
			                                                   : no_argument,
			                                     NULL,
			                                     0x100 + (int)opt_first_alias(opts, n) };
		if (opts[n].short_name) {
			shorts[k++] = opts[n].short_name;
			if (opts[n].value)
				shorts[k++] = ':';
		}
	}
	longopts[nlong++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[nlong] = (struct option){ NULL, 0, NULL, 0 };
	shorts[k] = '\0';
}

/* ARG ("--name" or "--name=value") abbreviates two or more options of OPTS
 * (aliases count once, as getopt_long counts them): the usage error that
 * names them, as getopt_long itself would; else 0 (ARG is unknown). */
static int opt_ambiguous(struct cli *c, const char *arg, const struct cli_opt *opts)
{
	const char *name = arg + 2;
	size_t len = strcspn(name, "="), first = SIZE_MAX;
	char list[256] = "";
	bool two = false;

	if (strncmp(arg, "--", 2) != 0 || len == 0)
		return 0;
	for (size_t n = 0; opts[n].name; n++) {
		size_t len_now = strlen(list);

		if (!opts[n].name[0] || strncmp(opts[n].name, name, len) != 0)
			continue;
		if (first == SIZE_MAX)
			first = opt_first_alias(opts, n);
		else if (opt_first_alias(opts, n) != first)
			two = true;
		snprintf(list + len_now, sizeof(list) - len_now, "%s'--%s'", len_now ? " " : "",
		         opts[n].name);
	}
	if (!two)
		return 0;
	return cli_usage_error(c, "option '--%.*s' is ambiguous; possibilities: %s", (int)len,
	                       name, list);
}

/* getopt_long returned CH: apply the option, or report a usage error. */
static int opt_apply(struct cli *c, char **argv, const struct cli_opt *opts, int ch)
{
	const struct cli_opt *o = NULL;

	if (ch >= 0x100)
		o = &opts[ch - 0x100];
	for (size_t n = 0; !o && ch > 0 && opts[n].name; n++)
		if (opts[n].short_name == ch)
			o = &opts[n];
	if (ch == ':')
		return cli_usage_error(c, "option '%s' needs a value", argv[optind - 1]);
	if (!o && optopt && optopt < 0x100)
		return cli_usage_error(c, "unknown option '-%c'", optopt);
	if (!o) {
		int err = opt_ambiguous(c, argv[optind - 1], opts);

		return err ? err : cli_usage_error(c, "unknown option '%s'", argv[optind - 1]);
	}
	if (o->clears)
		*o->clears = false;
	if (o->flag)
		*o->flag = true;
	else
		*o->value = optarg;
	return 0;
}

/* Was the argument getopt_long just stepped over (from BEFORE) a "--"? */
static bool stepped_over_dashdash(char **argv, int before)
{
	return optind == before + 1 && !strcmp(argv[before], "--");
}

int cli_parse_args(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
                   const char *const *no_pos, int maxpos, bool want_rest, struct cli_args *out)
{
	struct option longopts[CLI_MAX_OPTS + 2];
	char shorts[3 + 2 * CLI_MAX_OPTS + 1];
	bool dashdash = false;      /* past "--": no more options */
	int max;

	memset(out, 0, sizeof(*out));
	opt_tables(opts, longopts, shorts);
	opterr = 0;
	optind = 0;                 /* glibc: start afresh */
	for (;;) {
		int before = optind ? optind : 1, ch = -1, err;

		if (!dashdash)
			ch = getopt_long(argc, argv, shorts, longopts, NULL);
		if (ch == 'h') {
			print_usage(c);
			return -1;
		}
		if (ch != -1) {
			if ((err = opt_apply(c, argv, opts, ch)))
				return err;
			continue;
		}
		if (!dashdash && stepped_over_dashdash(argv, before))
			dashdash = true;
		if (optind >= argc)
			break;
		max = no_pos && *no_pos ? 0 : maxpos;
		if (out->npos < max) {
			out->pos[out->npos++] = argv[optind++];
		} else if (want_rest) {
			/* the command starts here; its own options are its own */
			out->rest = argv + optind;
			out->nrest = argc - optind;
			break;
		} else {
			return cli_usage_error(c, "unexpected argument '%s'", argv[optind]);
		}
	}
	return 0;
}

int cli_args_complete(struct cli *c, const struct cli_args *a, int maxpos)
{
	if (a->npos < maxpos)
		return cli_usage_error(c, "missing %s", a->npos == 0 && c->pos_name ? c->pos_name
		                       : a->npos == 0 ? "REGION" : "LOCK");
	return 0;
}

int cli_parse(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
              const char *const *no_pos, int maxpos, bool want_rest, struct cli_args *out)
{
	int err = cli_parse_args(c, argc, argv, opts, no_pos, maxpos, want_rest, out);

	if (err)
		return err;
	return cli_args_complete(c, out, no_pos && *no_pos ? 0 : maxpos);
}
