/* SPDX-License-Identifier: MIT */
/*
 * producer.c - writes COUNT records into the shared ring (ring.h), one per
 * turn of the bakery lock, then reports how many it committed.
 *
 *   producer --region R --ring RING --id N --count C [--lock L] [--algo A]
 *            [--stall-at K]
 *
 * With --stall-at K it stops half-way through writing record K, holding the
 * lock, and waits to be killed: examples/demo.sh SIGKILLs it there to show
 * the next holder repairing the ring.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

#define WHO "producer"

struct producer {
	struct ring_conn conn;
	uint32_t id;
	uint64_t count;
	int64_t stall_at;           /* -1: never */
};

/* Half a record, then stop for good with the lock held (demo only). */
static void stall(struct producer *p, struct ring_record *rec, uint64_t seq, uint64_t pos)
{
	record_fill(rec, p->id, seq, pos, RING_PAYLOAD / 2);
	crash_order();
	printf(WHO " %u (pid %ld): stalled holding the lock, half-way through record %" PRIu64 "\n",
	       p->id, (long)getpid(), seq);
	fflush(stdout);
	for (;;)
		pause();
}

/* One record into the ring, if there is room; true if written. */
static bool produce_one(struct producer *p)
{
	struct ring *r = p->conn.ring;
	struct ring_record *rec;
	uint64_t pos, seq;

	if (r->tail - r->head >= RING_CAPACITY)
		return false;
	pos = r->tail;
	seq = r->committed[p->id];
	rec = &r->rec[pos % RING_CAPACITY];
	rec->state = REC_WRITING;
	crash_order();
	if ((int64_t)seq == p->stall_at)
		stall(p, rec, seq, pos);
	record_fill(rec, p->id, seq, pos, RING_PAYLOAD);
	record_seal(rec);
	crash_order();
	rec->state = REC_COMMITTED;            /* the commit point */
	crash_order();
	r->committed[p->id] = seq + 1;
	crash_order();
	r->tail = pos + 1;
	return true;
}

static int produce(struct producer *p)
{
	unsigned delay = 0;

	for (;;) {
		bool done, wrote;

		if (ring_lock(&p->conn, WHO))
			return 1;
		done = p->conn.ring->committed[p->id] >= p->count;
		wrote = !done && produce_one(p);
		ring_unlock(&p->conn);
		if (done)
			return 0;
		if (wrote)
			delay = 0;
		else
			backoff(&delay);        /* ring full */
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: " WHO " --region R --ring RING --id N --count C "
	        "[--lock L] [--algo A] [--stall-at K]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct producer *p, const char **region,
                  const char **ring, const char **lock, enum bakery_algo *algo)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' }, { "ring", required_argument, NULL, 'R' },
		{ "id", required_argument, NULL, 'i' }, { "count", required_argument, NULL, 'c' },
		{ "lock", required_argument, NULL, 'l' }, { "algo", required_argument, NULL, 'a' },
		{ "stall-at", required_argument, NULL, 's' }, { NULL, 0, NULL, 0 }
	};
	long id = -1;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'r': *region = optarg; break;
		case 'R': *ring = optarg; break;
		case 'i': id = strtol(optarg, NULL, 10); break;
		case 'c': p->count = strtoull(optarg, NULL, 10); break;
		case 'l': *lock = optarg; break;
		case 'a': if (bakery_algo_parse(optarg, algo)) usage(); break;
		case 's': p->stall_at = strtoll(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (!*region || !*ring || id < 0 || id >= (long)RING_MAX_PRODUCERS || optind != argc)
		usage();
	p->id = (uint32_t)id;
}

int main(int argc, char **argv)
{
	const char *region = NULL, *ring = NULL, *lock = "ring";
	enum bakery_algo algo = BAKERY_ALGO_DEFAULT;
	struct producer p = { .stall_at = -1 };
	int rc;

	parse(argc, argv, &p, &region, &ring, &lock, &algo);
	if (ring_connect(&p.conn, region, lock, algo, ring, WHO)) {
		ring_disconnect(&p.conn);
		return 1;
	}
	rc = produce(&p);
	if (rc == 0)
		printf(WHO " %u: committed %" PRIu64 " records\n", p.id, p.count);
	ring_disconnect(&p.conn);
	return rc;
}
