/* SPDX-License-Identifier: MIT */
/*
 * status.c - `bakery status REGION [--json]`: the region's header, the slots
 * in use and the locks, as a table or as JSON.
 *
 * Everything comes from the introspection calls of bakery.h.  The values
 * are a snapshot that may be stale as soon as it is printed: participants
 * keep running while we read.  Lock names come from shared memory, which
 * any participant can scribble on, and command names from /proc, which
 * any process sets as it likes (prctl(PR_SET_NAME)): both are escaped on
 * the way out and never trusted to be printable (a terminal escape
 * sequence in a command name must not reach the screen of whoever runs
 * `bakery status`).
 *
 * A lock may have several holders at once (readers in shared mode, or the
 * holders of a lock of capacity k): they are the slots whose furthest
 * stage is "critical" in that lock, each with its mode.
 *
 * A biased lock (BAKERY_LOCK_BIASED) says so after its state, in a BIAS
 * column that the table has only when a lock of the region is biased: the
 * slot it is biased to now, or none, and the biases revoked so far.  Other
 * locks' lines are those of a region without biased locks.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "cli.h"

/* The slots in one lock's line, first to enter first (bakery_lock_queue). */
struct line {
	unsigned *slots;
	unsigned n;
};

struct snapshot {
	struct bakery_region_info region;
	struct bakery_lock_info *locks;   /* the region's lock table, entries in use */
	struct line *lines;               /* the line of each of those locks */
	unsigned nlocks;
	struct bakery_slot_info *slots;   /* slots that are not free */
	unsigned nslots;
};

/* ------------------------------------------------------------ snapshot -- */

/* The line of the lock at table INDEX (none if it went meanwhile). */
static int snapshot_line(bakery_t *b, unsigned index, unsigned nslots, struct line *line)
{
	int err;

	line->slots = calloc(nslots ? nslots : 1, sizeof(*line->slots));
	if (!line->slots)
		return ENOMEM;
	err = bakery_lock_queue(b, index, line->slots, nslots, &line->n);
	if (err == ENOENT)
		line->n = 0;
	else if (err)
		return err;
	if (line->n > nslots)
		line->n = nslots;
	return 0;
}

static int snapshot_locks(bakery_t *b, struct snapshot *s)
{
	unsigned cap = s->region.locks ? s->region.locks : 1;

	s->locks = calloc(cap, sizeof(*s->locks));
	s->lines = calloc(cap, sizeof(*s->lines));
	if (!s->locks || !s->lines)
		return ENOMEM;
	for (unsigned i = 0; i < s->region.locks; i++) {
		int err = bakery_lock_info(b, i, &s->locks[s->nlocks]);

		if (err == ENOENT)
			continue;
		if (err || (err = snapshot_line(b, i, s->region.slots, &s->lines[s->nlocks])))
			return err;
		s->nlocks++;
	}
	return 0;
}

static int snapshot_slots(bakery_t *b, struct snapshot *s)
{
	s->slots = calloc(s->region.slots ? s->region.slots : 1, sizeof(*s->slots));
	if (!s->slots)
		return ENOMEM;
	for (unsigned i = 0; i < s->region.slots; i++) {
		struct bakery_slot_info *si = &s->slots[s->nslots];
		int err = bakery_slot_info(b, i, si);

		if (err)
			return err;
		if (si->state != BAKERY_SLOT_FREE)
			s->nslots++;
	}
	return 0;
}

static int snapshot_take(bakery_t *b, struct snapshot *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	if ((err = bakery_region_info(b, &s->region)))
		return err;
	if ((err = snapshot_locks(b, s)))
		return err;
	return snapshot_slots(b, s);
}

static void snapshot_free(struct snapshot *s)
{
	for (unsigned i = 0; s->lines && i < s->region.locks; i++)
		free(s->lines[i].slots);
	free(s->lines);
	free(s->locks);
	free(s->slots);
}

/* The lock at table index INDEX, or NULL. */
static const struct bakery_lock_info *lock_at(const struct snapshot *s, int index)
{
	for (unsigned i = 0; i < s->nlocks; i++)
		if ((int)s->locks[i].index == index)
			return &s->locks[i];
	return NULL;
}

/* ----------------------------------------------------------------- words -- */

static const char *pass_name(enum bakery_pass_state p)
{
	switch (p) {
	case BAKERY_PASS_IDLE:     return "idle";
	case BAKERY_PASS_DOORWAY:  return "doorway";
	case BAKERY_PASS_WAITING:  return "waiting";
	case BAKERY_PASS_CRITICAL: return "critical";
	}
	return "unknown";
}

/* Fields 3 (state) and 22 (start time) of a /proc stat file; false if it
 * cannot be read. */
static bool proc_stat(const char *path, char *state, unsigned long long *start)
{
	char buf[1024], *p;
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');          /* the command name may hold anything */
	return p && sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
	                   "%*d %*d %*d %*d %*d %*d %llu", state, start) == 2;
}

/* Is the live owner thread of SI stopped (SIGSTOP, a tracer)?  Read from
 * /proc as seen here; a process of that pid with another start time (the
 * owner in another PID namespace, or the pid reused) says nothing. */
static bool owner_stopped(const struct bakery_slot_info *si)
{
	char path[96], state, tstate;
	unsigned long long start, tstart;

	if (si->alive <= 0 || si->pid <= 0 || si->tid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)si->pid);
	if (!proc_stat(path, &state, &start) || start != si->start_time)
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/stat", (long)si->pid, (long)si->tid);
	return proc_stat(path, &tstate, &tstart) && (tstate == 'T' || tstate == 't');
}

static const char *owner_word(const struct bakery_slot_info *si)
{
	if (si->state == BAKERY_SLOT_RECOVERING)
		return "recovering";
	if (owner_stopped(si))
		return "stopped";
	return si->alive > 0 ? "alive" : si->alive == 0 ? "dead" : "unknown";
}

/* The slot at registry index INDEX, if it is in use, or NULL. */
static const struct bakery_slot_info *slot_at(const struct snapshot *s, int index)
{
	for (unsigned i = 0; i < s->nslots; i++)
		if ((int)s->slots[i].index == index)
			return &s->slots[i];
	return NULL;
}

/* The mode of the passage SI is in: NULL when idle. */
static const char *mode_word(const struct bakery_slot_info *si)
{
	if (si->pass == BAKERY_PASS_IDLE)
		return NULL;
	return si->shared ? "shared" : "exclusive";
}

/* Is SI one of the holders of lock LI? */
static bool holds(const struct bakery_slot_info *si, const struct bakery_lock_info *li)
{
	return si->pass == BAKERY_PASS_CRITICAL && si->lock == (int)li->index;
}

/* The widest state word ("not-recoverable"): the STATE column's width when
 * a BIAS column follows it. */
#define STATE_WIDTH 15

/* The lock's state as the library derives it (enum bakery_lock_state). */
static const char *lock_state_word(const struct bakery_lock_info *li)
{
	switch (li->state) {
	case BAKERY_LOCK_OK:              return "ok";
	case BAKERY_LOCK_NOT_RECOVERABLE: return "not-recoverable";
	case BAKERY_LOCK_OWNER_DIED:      return "owner-died";
	case BAKERY_LOCK_REMOVING:        return "removing";
	}
	return "unknown";
}

/* Owner died: the flag a recoverer set, or a holder's death proven before
 * anyone recovered it (the state says so) */
static bool owner_died(const struct bakery_lock_info *li)
{
	return li->owner_dead || li->state == BAKERY_LOCK_OWNER_DIED;
}

/* The command name of the process that owns slot SI ("?" if it cannot be
 * read: gone, or the PID is another process's, as when the owner runs in
 * another PID namespace: the start times differ), into BUF. */
static const char *command_name(const struct bakery_slot_info *si, char *buf, size_t size)
{
	unsigned long long start;
	char path[64], state;
	FILE *f;

	snprintf(buf, size, "?");
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)si->pid);
	if (si->pid <= 0 || !proc_stat(path, &state, &start) || start != si->start_time)
		return buf;
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)si->pid);
	if (!(f = fopen(path, "r")))
		return buf;
	if (!fgets(buf, (int)size, f))
		snprintf(buf, size, "?");
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static const char *algo_word(enum bakery_algo a)
{
	const char *n = bakery_algo_name(a);

	return n && a != BAKERY_ALGO_DEFAULT ? n : "unknown";
}

/* The name with anything unprintable shown as '?', into BUF. */
static const char *printable(const char *name, char *buf, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++)
		buf[i] = (name[i] >= 0x20 && name[i] <= 0x7e) ? name[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* The command name of SI's owner, shown printable, into BUF. */
static const char *shown_command(const struct bakery_slot_info *si, char *buf, size_t size)
{
	char raw[32];

	return printable(command_name(si, raw, sizeof(raw)), buf, size);
}

/* ----------------------------------------------------------------- table -- */

static void human_header(const struct snapshot *s, const char *region)
{
	const struct bakery_region_info *r = &s->region;
	time_t t = (time_t)(r->created_ns / 1000000000u);
	char when[64] = "?";
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
	printf("region %s: layout version %u, %llu bytes, mode %04o\n", region, r->version,
	       (unsigned long long)r->size, (unsigned)r->mode);
	printf("created %s by pid %ld, uid %lu\n", when, (long)r->creator_pid,
	       (unsigned long)r->creator_uid);
	printf("slots: %u of %u in use; locks: %u of %u in use\n", r->slots_used, r->slots,
	       r->locks_used, r->locks);
}

static void human_slots(const struct snapshot *s)
{
	char buf[BAKERY_LOCK_NAME_MAX + 1];

	if (!s->nslots) {
		printf("\nno slots in use\n");
		return;
	}
	printf("\n%5s  %-8s %-8s %-10s %-9s %-9s %s\n", "SLOT", "PID", "TID", "OWNER", "STATE",
	       "MODE", "LOCK");
	for (unsigned i = 0; i < s->nslots; i++) {
		const struct bakery_slot_info *si = &s->slots[i];
		const struct bakery_lock_info *li = lock_at(s, si->lock);
		const char *mode = mode_word(si);

		printf("%5u  %-8ld %-8ld %-10s %-9s %-9s %s\n", si->index, (long)si->pid,
		       (long)si->tid, owner_word(si), pass_name(si->pass), mode ? mode : "-",
		       li ? printable(li->name, buf, sizeof(buf)) : "-");
	}
}

/* Was LI made biased (BAKERY_LOCK_BIASED), whether biased to a slot now or not? */
static bool biased(const struct bakery_lock_info *li)
{
	return li->flags & BAKERY_LOCK_BIASED;
}

/* The last column, STATE, and a biased lock's BIAS after it: "biased to
 * slot N, R revocations" or "biased (none), ..."; nothing for a lock that
 * is not biased, whose line ends with its state as it always did. */
static void human_state(const struct bakery_lock_info *li)
{
	unsigned r = li->bias_revocations;

	if (!biased(li)) {
		printf("%s\n", lock_state_word(li));
		return;
	}
	printf("%-*s  ", STATE_WIDTH, lock_state_word(li));
	if (li->bias_slot >= 0)
		printf("biased to slot %d", li->bias_slot);
	else
		printf("biased (none)");
	printf(", %u revocation%s\n", r, r == 1 ? "" : "s");
}

static void human_locks(const struct snapshot *s)
{
	char buf[BAKERY_LOCK_NAME_MAX + 1], holder[16], comm[32];
	bool any_biased = false;
	int w = 4;

	if (!s->nlocks) {
		printf("\nno locks\n");
		return;
	}
	for (unsigned i = 0; i < s->nlocks; i++) {
		if ((int)strlen(s->locks[i].name) > w)
			w = (int)strlen(s->locks[i].name);
		any_biased |= biased(&s->locks[i]);
	}
	printf("\n%-*s  %-11s %8s %7s %7s %8s %-15s %7s %12s %12s %10s %12s %13s %6s %6s  ", w,
	       "LOCK", "ALGORITHM", "CAPACITY", "HOLDING", "READERS", "HOLDER", "COMMAND", "WAITERS",
	       "PARTICIPANTS", "ACQUISITIONS", "RECOVERIES", "OWNER-DEATHS", "READER-DEATHS",
	       "ABORTS", "PASSES");
	if (any_biased)
		printf("%-*s  BIAS\n", STATE_WIDTH, "STATE");
	else
		printf("STATE\n");
	for (unsigned i = 0; i < s->nlocks; i++) {
		const struct bakery_lock_info *li = &s->locks[i];
		const struct bakery_slot_info *h = slot_at(s, li->holder);

		snprintf(holder, sizeof(holder), h ? "%ld" : "-", h ? (long)h->pid : 0L);
		printf("%-*s  %-11s %8u %7u %7u %8s %-15s %7u %12u %12llu %10llu %12llu %13llu %6llu "
		       "%6llu  ", w, printable(li->name, buf, sizeof(buf)), algo_word(li->algo),
		       li->capacity, li->holding, li->readers, holder,
		       h ? shown_command(h, comm, sizeof(comm)) : "-",
		       li->waiters, li->participants, (unsigned long long)li->acquisitions,
		       (unsigned long long)li->recoveries, (unsigned long long)li->owner_deaths,
		       (unsigned long long)li->reader_deaths, (unsigned long long)li->aborts,
		       (unsigned long long)li->passes);
		human_state(li);
	}
}

/* Each lock's waiters, first to enter first: pid (command), as HOLDER. */
static void human_lines(const struct snapshot *s)
{
	char buf[BAKERY_LOCK_NAME_MAX + 1], comm[32];
	unsigned shown = 0;

	for (unsigned i = 0; i < s->nlocks; i++) {
		const struct line *line = &s->lines[i];

		if (!line->n)
			continue;
		printf("%squeue of %s, next first:", shown++ ? "" : "\n",
		       printable(s->locks[i].name, buf, sizeof(buf)));
		for (unsigned k = 0; k < line->n; k++) {
			const struct bakery_slot_info *w = slot_at(s, (int)line->slots[k]);

			if (w)
				printf("%s %ld (%s)", k ? "," : "", (long)w->pid,
				       shown_command(w, comm, sizeof(comm)));
			else
				printf("%s ? (slot %u)", k ? "," : "", line->slots[k]);
		}
		putchar('\n');
	}
}

/* ------------------------------------------------------------------ JSON -- */

/* A JSON string: quotes, backslashes and every byte outside printable
 * ASCII escaped, so the output is valid whatever the region holds. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch > 0x7e)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_header(const struct snapshot *s, const char *region)
{
	const struct bakery_region_info *r = &s->region;
	time_t t = (time_t)(r->created_ns / 1000000000u);
	char when[64] = "";
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("{\n  \"region\": ");
	json_string(region);
	printf(",\n  \"version\": %u,\n  ", r->version);
	cli_json_layout(r->version, true, ",\n  ");
	printf(",\n  \"size\": %llu,\n  \"mode\": \"%04o\",\n", (unsigned long long)r->size,
	       (unsigned)r->mode);
	printf("  \"creator_pid\": %ld,\n  \"creator_uid\": %lu,\n", (long)r->creator_pid,
	       (unsigned long)r->creator_uid);
	printf("  \"created_ns\": %llu,\n  \"created\": \"%s\",\n",
	       (unsigned long long)r->created_ns, when);
	printf("  \"slots_capacity\": %u,\n  \"slots_used\": %u,\n", r->slots, r->slots_used);
	printf("  \"locks_capacity\": %u,\n  \"locks_used\": %u,\n", r->locks, r->locks_used);
}

static void json_slot(const struct snapshot *s, const struct bakery_slot_info *si)
{
	const struct bakery_lock_info *li = lock_at(s, si->lock);

	printf("    {\"index\": %u, \"state\": \"%s\", \"alive\": %s, \"stopped\": %s, ",
	       si->index, si->state == BAKERY_SLOT_RECOVERING ? "recovering" : "active",
	       si->alive > 0 ? "true" : si->alive == 0 ? "false" : "null",
	       owner_stopped(si) ? "true" : "false");
	printf("\"pid\": %ld, \"tid\": %ld, \"start_time\": %llu, \"pass\": \"%s\", \"lock\": ",
	       (long)si->pid, (long)si->tid, (unsigned long long)si->start_time,
	       pass_name(si->pass));
	if (li)
		json_string(li->name);
	else
		printf("null");
	printf(", \"lock_index\": %d, \"mode\": ", si->lock);
	if (mode_word(si))
		printf("\"%s\"}", mode_word(si));
	else
		printf("null}");
}

/* The holders of LI, each with its slot, pid and mode. */
static void json_holders(const struct snapshot *s, const struct bakery_lock_info *li)
{
	bool first = true;

	printf("\"holders\": [");
	for (unsigned i = 0; i < s->nslots; i++) {
		const struct bakery_slot_info *si = &s->slots[i];

		if (!holds(si, li))
			continue;
		printf("%s{\"slot\": %u, \"pid\": %ld, \"mode\": \"%s\"}", first ? "" : ", ",
		       si->index, (long)si->pid, mode_word(si));
		first = false;
	}
	printf("]");
}

/* The lock's line, first to enter first: [{"slot", "pid", "command"}...] */
static void json_line(const struct snapshot *s, const struct line *line)
{
	char comm[32];

	printf("\"queue\": [");
	for (unsigned k = 0; k < line->n; k++) {
		const struct bakery_slot_info *w = slot_at(s, (int)line->slots[k]);

		printf("%s{\"slot\": %u, \"pid\": ", k ? ", " : "", line->slots[k]);
		if (w) {
			printf("%ld, \"command\": ", (long)w->pid);
			json_string(command_name(w, comm, sizeof(comm)));
		} else {
			printf("null, \"command\": null");
		}
		putchar('}');
	}
	printf("], ");
}

static void json_lock(const struct snapshot *s, const struct bakery_lock_info *li,
                      const struct line *line)
{
	const struct bakery_slot_info *h = slot_at(s, li->holder);
	char comm[32];

	printf("    {\"index\": %u, \"name\": ", li->index);
	json_string(li->name);
	printf(", \"algorithm\": \"%s\", \"holder\": ", algo_word(li->algo));
	if (li->holder < 0)
		printf("null");
	else
		printf("%d", li->holder);
	if (h) {
		printf(", \"holder_pid\": %ld, \"holder_command\": ", (long)h->pid);
		json_string(command_name(h, comm, sizeof(comm)));
	} else {
		printf(", \"holder_pid\": null, \"holder_command\": null");
	}
	printf(", \"waiters\": %u, ", li->waiters);
	json_line(s, line);
	printf("\"participants\": %u, \"acquisitions\": %llu, ", li->participants,
	       (unsigned long long)li->acquisitions);
	printf("\"recoveries\": %llu, \"owner_deaths\": %llu, \"aborts\": %llu, ",
	       (unsigned long long)li->recoveries, (unsigned long long)li->owner_deaths,
	       (unsigned long long)li->aborts);
	printf("\"passes\": %llu, ", (unsigned long long)li->passes);
	printf("\"owner_dead\": %s, \"not_recoverable\": %s, \"state\": \"%s\", ",
	       owner_died(li) ? "true" : "false", li->not_recoverable ? "true" : "false",
	       lock_state_word(li));
	printf("\"capacity\": %u, \"holding\": %u, \"readers\": %u, \"reader_deaths\": %llu, ",
	       li->capacity, li->holding, li->readers, (unsigned long long)li->reader_deaths);
	printf("\"biased\": %s, \"bias_slot\": ", biased(li) ? "true" : "false");
	if (li->bias_slot >= 0)
		printf("%d", li->bias_slot);
	else
		printf("null");
	printf(", \"bias_revocations\": %u, ", li->bias_revocations);
	json_holders(s, li);
	printf("}");
}

static void json_print(const struct snapshot *s, const char *region)
{
	json_header(s, region);
	printf("  \"slots\": [");
	for (unsigned i = 0; i < s->nslots; i++) {
		printf("%s\n", i ? "," : "");
		json_slot(s, &s->slots[i]);
	}
	printf("%s],\n  \"locks\": [", s->nslots ? "\n  " : "");
	for (unsigned i = 0; i < s->nlocks; i++) {
		printf("%s\n", i ? "," : "");
		json_lock(s, &s->locks[i], &s->lines[i]);
	}
	printf("%s]\n}\n", s->nlocks ? "\n  " : "");
}

/* ------------------------------------------------------- another layout -- */

/*
 * A region of another layout version, which this library cannot read: the
 * version its header names, said as `bakery list` says it (with --json,
 * list's members for it on stdout: its name, "layout_version" and
 * "compatible"), and a failure, as for any region that cannot be read.
 */
static int incompatible_fail(const struct cli *c, const char *region, bool json)
{
	unsigned layout = cli_region_layout(region);
	char version[32];

	if (json) {
		printf("{\n  \"region\": ");
		json_string(c->what);
		printf(",\n  ");
		cli_json_layout(layout, false, ",\n  ");
		printf("\n}\n");
	}
	return cli_fail(c, "incompatible layout (version %s): made by a libbakery of another "
	                "layout version, which this bakery cannot read",
	                cli_layout_word(layout, version, sizeof(version)));
}

/* ------------------------------------------------------------------ room -- */

/*
 * A region whose pages are not all allocated (made by an older version, or
 * where the file system could not reserve them) in a /dev/shm without room
 * for them: its participants will fail with ENOSPC at their next touch of
 * such a page.  Say so (on stderr: the JSON stays whole); the region is
 * not damaged.
 */
static void room_note(const struct cli *c, const char *region, uint64_t size)
{
	char path[sizeof(CLI_SHM_DIR) + BAKERY_REGION_NAME_MAX + 2];
	struct statvfs vfs;
	struct stat st;
	uint64_t missing, avail;

	snprintf(path, sizeof(path), CLI_SHM_DIR "%s", region + (*region == '/'));
	if (stat(path, &st) != 0 || statvfs(CLI_SHM_DIR, &vfs) != 0)
		return;
	if ((uint64_t)st.st_blocks * 512 >= size)
		return;
	missing = size - (uint64_t)st.st_blocks * 512;
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (avail < missing)
		fprintf(stderr, "bakery: status %s: %llu KiB of the region are not allocated yet "
		        "and /dev/shm has %llu KiB free: participants will fail with \"%s\"\n",
		        c->what, (unsigned long long)missing / 1024,
		        (unsigned long long)avail / 1024, bakery_strerror(ENOSPC));
}

/* ------------------------------------------------------------ subcommand -- */

int cmd_status(struct cli *c, int argc, char **argv)
{
	bool json = false;
	const struct cli_opt opts[] = {
		{ "json", 'j', NULL, &json, NULL }, { NULL, 0, NULL, NULL, NULL }
	};
	struct snapshot snap;
	struct cli_args a;
	bakery_t *b;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, NULL, 1, false, &a)))
		return err < 0 ? 0 : err;
	if ((err = cli_region_arg(c, a.pos[0])))
		return err;
	/* read-only: show dead slots as they are (`bakery recover` clears
	 * them), and read permission on the region is enough */
	err = bakery_open(a.pos[0], BAKERY_RDONLY, NULL, &b);
	if (err == BAKERY_EVERSION)
		return incompatible_fail(c, a.pos[0], json);
	if (err)
		return cli_open_fail(c, a.pos[0], err);
	err = snapshot_take(b, &snap);
	bakery_close(b);
	if (!err && json) {
		json_print(&snap, c->what);
	} else if (!err) {
		human_header(&snap, c->what);
		human_slots(&snap);
		human_locks(&snap);
		human_lines(&snap);
	}
	if (!err)
		room_note(c, a.pos[0], snap.region.size);
	snapshot_free(&snap);
	return err ? cli_fail(c, "%s", bakery_strerror(err)) : 0;
}
