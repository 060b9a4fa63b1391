/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - takes records out of the shared ring (ring.h), one per turn
 * of the bakery lock, and checks that nothing was lost or duplicated.
 *
 *   consumer --region R --ring RING [--lock L] [--algo A]
 *
 * It runs until it receives SIGUSR1, SIGTERM or SIGINT, then drains the ring
 * and reports, per producer, the records the ring says were committed and
 * the records it consumed.  Exit status 0 only if, for every producer, the
 * sequence numbers came in order without a gap or a repeat, every record
 * was intact, and consumed == committed.  It removes the ring at the end.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

#define WHO "consumer"

static volatile sig_atomic_t finishing;

struct tally {
	uint64_t next[RING_MAX_PRODUCERS];      /* = records consumed, in order */
	uint64_t consumed, duplicated, lost, corrupt;
};

/* Check one record against what this producer's sequence says is next. */
static void tally_record(struct tally *t, const struct ring_record *rec, uint64_t pos)
{
	uint64_t *next;

	if (rec->state != REC_COMMITTED || rec->pos != pos ||
	    rec->producer >= RING_MAX_PRODUCERS || !record_intact(rec)) {
		t->corrupt++;
		return;
	}
	next = &t->next[rec->producer];
	if (rec->seq < *next) {
		t->duplicated++;
		return;
	}
	t->lost += rec->seq - *next;            /* a gap: records never seen */
	*next = rec->seq + 1;
	t->consumed++;
}

/* Take the head record, if any; true if one was taken. */
static bool consume_one(struct ring *r, struct tally *t)
{
	struct ring_record *rec;

	if (r->head == r->tail)
		return false;
	rec = &r->rec[r->head % RING_CAPACITY];
	tally_record(t, rec, r->head);
	rec->state = REC_EMPTY;
	crash_order();
	r->head++;
	return true;
}

/* Consume until told to finish and the ring is empty. */
static int consume(struct ring_conn *c, struct tally *t)
{
	unsigned delay = 0;

	for (;;) {
		bool took, done;

		if (ring_lock(c, WHO))
			return 1;
		took = consume_one(c->ring, t);
		done = !took && finishing;
		ring_unlock(c);
		if (done)
			return 0;
		if (took)
			delay = 0;
		else
			backoff(&delay);        /* ring empty */
	}
}

/* The final accounting, under the lock so the counters are settled. */
static int report(struct ring_conn *c, struct tally *t)
{
	const struct ring *r = c->ring;
	int bad = t->duplicated || t->lost || t->corrupt;

	if (ring_lock(c, WHO))
		return 1;
	for (unsigned p = 0; p < RING_MAX_PRODUCERS; p++) {
		if (!r->committed[p] && !t->next[p])
			continue;
		printf(WHO ": producer %u: committed %" PRIu64 ", consumed %" PRIu64 "%s\n", p,
		       r->committed[p], t->next[p], r->committed[p] == t->next[p] ? "" : "  MISMATCH");
		bad |= r->committed[p] != t->next[p];
	}
	printf(WHO ": summary consumed=%" PRIu64 " duplicated=%" PRIu64 " lost=%" PRIu64
	       " corrupt=%" PRIu64 " repaired=%" PRIu64 " rolled_forward=%" PRIu64
	       " owner_dead=%" PRIu64 "\n", t->consumed, t->duplicated, t->lost, t->corrupt,
	       r->repaired, r->rolled_forward, r->owner_dead);
	ring_unlock(c);
	return bad ? 1 : 0;
}

static void on_signal(int sig)
{
	(void)sig;
	finishing = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: " WHO " --region R --ring RING [--lock L] [--algo A]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' }, { "ring", required_argument, NULL, 'R' },
		{ "lock", required_argument, NULL, 'l' }, { "algo", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	const char *region = NULL, *ring = NULL, *lock = "ring";
	enum bakery_algo algo = BAKERY_ALGO_DEFAULT;
	struct ring_conn conn;
	struct tally t;
	int o, rc;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'r': region = optarg; break;
		case 'R': ring = optarg; break;
		case 'l': lock = optarg; break;
		case 'a': if (bakery_algo_parse(optarg, &algo)) usage(); break;
		default: usage();
		}
	}
	if (!region || !ring || optind != argc)
		usage();
	signal(SIGUSR1, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	memset(&t, 0, sizeof(t));
	rc = ring_connect(&conn, region, lock, algo, ring, WHO);
	if (rc == 0)
		rc = consume(&conn, &t);
	if (rc == 0)
		rc = report(&conn, &t);
	ring_disconnect(&conn);
	ring_unlink(ring);
	return rc;
}
