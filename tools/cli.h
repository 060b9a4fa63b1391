/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the parts of the `bakery` command-line tool share: exit
 * codes, error reporting, option parsing and opening a region.
 *
 * The tool reads regions only through the public API (bakery.h), like any
 * other program would.
 */
#ifndef BAKERY_CLI_H
#define BAKERY_CLI_H

#include <stdarg.h>
#include <stdbool.h>

#include <bakery.h>

/* Where glibc's shm_open keeps the objects (regions) it names. */
#define CLI_SHM_DIR "/dev/shm/"

/* Exit codes; docs/bakery.1 (EXIT STATUS) lists the same. */
#define EXIT_FAIL         1    /* an operation failed                           */
#define EXIT_USAGE        2    /* bad command line                              */
#define EXIT_RUN_TIMEOUT  75   /* run: --timeout expired (EX_TEMPFAIL)          */
#define EXIT_RUN_FAIL     125  /* run: bakery itself failed, command not run    */
#define EXIT_RUN_NOEXEC   126  /* run: the command could not be executed        */
#define EXIT_RUN_NOTFOUND 127  /* run: the command was not found                */

/* flock's exit codes (sysexits.h, as flock(1) uses them), and its conflict
 * code: the same in `bakery flock`. */
#define EXIT_FLOCK_CONFLICT 1   /* -n found the lock busy, or -w expired        */
#define EXIT_FLOCK_USAGE    64  /* EX_USAGE: bad command line                   */
#define EXIT_FLOCK_NOFILE   66  /* EX_NOINPUT: the file cannot be opened        */
#define EXIT_FLOCK_NOEXEC   69  /* EX_UNAVAILABLE: the command cannot be run    */
#define EXIT_FLOCK_FAIL     71  /* EX_OSERR: bakery itself failed               */

/* The subcommand being run, for messages: "bakery: CMD WHAT: message". */
struct cli {
	const char *cmd;           /* "status", "run", ...                        */
	const char *usage;         /* its synopsis, for --help: lines of under 80
	                              columns, each but the first starting
	                              "       bakery "                            */
	const char *help;          /* its options, for --help (or NULL)           */
	const char *pos_name;      /* its first argument, if not REGION           */
	char what[256];            /* the region (and lock) it works on, or ""    */
	int fail_code;             /* exit code for a failed operation            */
	int usage_code;            /* exit code for a bad command line            */
};

/* One option of a subcommand: "--NAME VALUE", "--NAME=VALUE", "--NAME",
 * and, with a SHORT letter, "-X VALUE", "-XVALUE" or "-X" (getopt_long).
 * NAME "" gives a short letter only (a second letter of an option).
 * Entries that set the same thing (VALUE, or FLAG and CLEARS) are names of
 * one option: a prefix they share is not ambiguous, and the last one given
 * wins. */
struct cli_opt {
	const char *name;
	char short_name;           /* 0: long form only                           */
	const char **value;        /* takes a value, stored here                  */
	bool *flag;                /* or takes none and sets this                 */
	bool *clears;              /* and clears this (or NULL): -s and -x, the
	                              last one given wins                         */
};
#define CLI_MAX_OPTS 24

/* The command line of a subcommand once parsed. */
struct cli_args {
	const char *pos[2];        /* positional arguments, in order              */
	int npos;
	char **rest;               /* run: the command and its arguments, or NULL */
	int nrest;
};

/* Print "bakery: CMD WHAT: message" on stderr (cli_vsay: from a va_list). */
void cli_say(const struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_vsay(const struct cli *c, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* The same, and return C->fail_code. */
int cli_fail(const struct cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same for an error of bakery_open() or bakery_unlink() on REGION, in
 * words about regions ("no such region"; for EPERM, the region's owner and
 * --any-owner); returns C->usage_code for a bad name, C->fail_code for the
 * rest. */
int cli_open_fail(const struct cli *c, const char *region, int err);
/* "user NAME (uid N)" for the owner of REGION's object, into BUF. */
void cli_region_owner(const char *region, char *buf, size_t size);
/* A bad command line: one line on stderr, the error and a pointer at
 * `bakery CMD --help` ("bakery: run: missing COMMAND (try 'bakery run
 * --help')"), and returns C->usage_code. */
int cli_usage_error(const struct cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Parse ARGV (ARGV[0] is the subcommand's name) into options OPTS (ended by
 * a {NULL} entry) and positional arguments, with getopt_long: options may
 * come before, between and after the positional ones.  MAXPOS is the most
 * positional arguments taken, or none once *NO_POS is set (NO_POS may be
 * NULL; it is an option's value, as `run --file`, read as parsing goes).
 * With WANT_REST, the first argument past them, or everything after "--"
 * once they are all there, is the command of `bakery run`; options after it
 * are the command's.  Returns 0, -1 if --help was asked (the usage is
 * printed), or an exit code after a usage error (fewer positional arguments
 * than the most is one: "missing REGION").
 */
int cli_parse(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
              const char *const *no_pos, int maxpos, bool want_rest, struct cli_args *out);
/* cli_parse in two steps, for a command that checks its first argument
 * before it says what is missing (`bakery run FILE COMMAND`): the parsing,
 * without the missing positional arguments, then those (fewer than
 * MAXPOS). */
int cli_parse_args(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
                   const char *const *no_pos, int maxpos, bool want_rest, struct cli_args *out);
int cli_args_complete(struct cli *c, const struct cli_args *a, int maxpos);

/* Print the tool's version ("bakery CMD (libbakery) 1.2.3", without CMD
 * if NULL), and the library's when a different one is loaded. */
void cli_print_version(const char *cmd);

/* A region name given on the command line: 0, or a usage error (empty). */
int cli_region_arg(struct cli *c, const char *region);

/* Parse a decimal count in [MIN, MAX]; false if it is not one. */
bool cli_parse_count(const char *s, unsigned min, unsigned max, unsigned *out);

/* Set C->what to the region as the library names it ("/name"; a name
 * with a '/' past its first character as given), plus " LOCK". */
void cli_set_what(struct cli *c, const char *region, const char *lock);

/* A region of another layout version, which bakery_open refuses
 * (BAKERY_EVERSION), as `list`, `status` and `unlink` name it: the layout
 * version its header names (bakery_region_layout), 0 if even that cannot
 * be read. */
unsigned cli_region_layout(const char *region);
/* LAYOUT as the text says it: "N", or "unknown" for 0, into BUF. */
const char *cli_layout_word(unsigned layout, char *buf, size_t size);
/* The JSON members "layout_version" (N, or null for 0) and "compatible",
 * as `list --json` and `status --json` print them, SEP between them and
 * none after. */
void cli_json_layout(unsigned layout, bool compatible, const char *sep);

/* bakery_open() with a message on failure: 0 or an exit code (the usage
 * code for a bad region name). */
int cli_open(const struct cli *c, const char *region, unsigned flags,
             const struct bakery_config *cfg, bakery_t **out);

/* A command of the form `bakery CMD [OPTIONS] [--any-owner] REGION LOCK`:
 * parse (OPTS, or none if NULL; ACT reads what they set), open the region,
 * ACT on the named lock, close.  ACT's exit code. */
typedef int (*cli_lock_act)(struct cli *c, bakery_t *b, const char *lock);
int cli_lock_command(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
                     cli_lock_act act);

int cmd_status(struct cli *c, int argc, char **argv);
int cmd_list(struct cli *c, int argc, char **argv);
int cmd_run(struct cli *c, int argc, char **argv);
int cmd_flock(struct cli *c, int argc, char **argv);
int cmd_reset(struct cli *c, int argc, char **argv);
int cmd_rm(struct cli *c, int argc, char **argv);

#endif /* BAKERY_CLI_H */
