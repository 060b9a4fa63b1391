/* SPDX-License-Identifier: MIT */
/*
 * list.c - `bakery list [--json]`: every region in the shm directory that
 * the caller may read (lslocks' system-wide view), one line each: its
 * mode and owner, slots and locks in use, locks held and locks whose
 * holder died.  A region of another layout version, which this library
 * cannot read, is shown as such, with the version its header names
 * (bakery_region_layout).  Objects that are not regions, or that the caller
 * may not read, are left out.  Regions are opened read-only
 * (BAKERY_RDONLY): the list changes nothing, and read permission is enough.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

struct region_row {
	char name[BAKERY_REGION_NAME_MAX + 2];
	struct bakery_region_info info;   /* a region of this layout only */
	bool compatible;           /* of this library's layout version       */
	unsigned layout;           /* the version its header names, 0 unknown */
	uid_t uid;
	mode_t mode;
	unsigned held, owner_died;
};

/* The locks held, and those whose owner died (the flag a recoverer set, or
 * a holder's death proven before anyone recovered it: the library's state) */
static void count_locks(bakery_t *b, struct region_row *r)
{
	struct bakery_lock_info li;

	for (unsigned i = 0; i < r->info.locks; i++) {
		if (bakery_lock_info(b, i, &li))
			continue;
		r->held += li.holder >= 0;
		r->owner_died += li.owner_dead || li.state == BAKERY_LOCK_OWNER_DIED;
	}
}

/* The region NAME (a directory entry), if it is one the caller may read. */
static bool row_read(const char *name, struct region_row *r)
{
	char path[sizeof(CLI_SHM_DIR) + 256];
	struct stat st;
	bakery_t *b;
	int err;

	snprintf(path, sizeof(path), CLI_SHM_DIR "%s", name);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || strlen(name) > BAKERY_REGION_NAME_MAX)
		return false;
	err = bakery_open(name, BAKERY_RDONLY, NULL, &b);
	if (err && err != BAKERY_EVERSION)
		return false;
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "/%s", name);
	r->uid = st.st_uid;
	r->mode = st.st_mode & 07777;
	if (err) {
		r->layout = cli_region_layout(name);
		return true;
	}
	r->compatible = true;
	if (bakery_region_info(b, &r->info) == 0) {
		r->layout = r->info.version;
		r->mode = r->info.mode;
		count_locks(b, r);
	}
	bakery_close(b);
	return true;
}

/* A region of another layout: what the object says, and its version. */
static void row_print_incompatible(const struct region_row *r)
{
	char version[32];

	printf("%-30s %04o %6lu %9s %9s %5s %10s  incompatible layout (version %s)\n", r->name,
	       (unsigned)r->mode, (unsigned long)r->uid, "-", "-", "-", "-",
	       cli_layout_word(r->layout, version, sizeof(version)));
}

static void row_print(const struct region_row *r)
{
	char slots[32], locks[32];

	if (!r->compatible) {
		row_print_incompatible(r);
		return;
	}
	snprintf(slots, sizeof(slots), "%u/%u", r->info.slots_used, r->info.slots);
	snprintf(locks, sizeof(locks), "%u/%u", r->info.locks_used, r->info.locks);
	printf("%-30s %04o %6lu %9s %9s %5u %10u\n", r->name, (unsigned)r->mode,
	       (unsigned long)r->uid, slots, locks, r->held, r->owner_died);
}

static void row_json(const struct region_row *r, bool first)
{
	/* region names are printable ASCII without '/' (bakery_open's rule),
	 * but '"' and '\\' may be in them */
	printf("%s\n  {\"region\": \"", first ? "" : ",");
	for (const char *p = r->name; *p; p++)
		printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
	printf("\", \"mode\": \"%04o\", \"uid\": %lu, ", (unsigned)r->mode, (unsigned long)r->uid);
	cli_json_layout(r->layout, r->compatible, ", ");
	if (!r->compatible) {
		/* nothing of its contents can be read */
		printf(", \"slots_used\": null, \"slots_capacity\": null, "
		       "\"locks_used\": null, \"locks_capacity\": null, \"held\": null, "
		       "\"owner_died\": null}");
		return;
	}
	printf(", \"slots_used\": %u, \"slots_capacity\": %u, ",
	       r->info.slots_used, r->info.slots);
	printf("\"locks_used\": %u, \"locks_capacity\": %u, \"held\": %u, \"owner_died\": %u}",
	       r->info.locks_used, r->info.locks, r->held, r->owner_died);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int cmd_list(struct cli *c, int argc, char **argv)
{
	bool json = false;
	const struct cli_opt opts[] = {
		{ "json", 'j', NULL, &json, NULL }, { NULL, 0, NULL, NULL, NULL }
	};
	struct dirent **names;
	struct region_row r;
	struct cli_args a;
	unsigned shown = 0;
	int err, n;

	if ((err = cli_parse(c, argc, argv, opts, NULL, 0, false, &a)))
		return err < 0 ? 0 : err;
	n = scandir(CLI_SHM_DIR, &names, NULL, by_name);
	if (n < 0)
		return cli_fail(c, "%s: %s", CLI_SHM_DIR, strerror(errno));
	if (json)
		printf("[");
	else
		printf("%-30s %4s %6s %9s %9s %5s %10s\n", "REGION", "MODE", "UID", "SLOTS",
		       "LOCKS", "HELD", "OWNER-DIED");
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && row_read(names[i]->d_name, &r)) {
			if (json)
				row_json(&r, shown == 0);
			else
				row_print(&r);
			shown++;
		}
		free(names[i]);
	}
	free(names);
	if (json)
		printf("%s]\n", shown ? "\n" : "");
	return 0;
}
