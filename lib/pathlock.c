/* SPDX-License-Identifier: MIT */
/*
 * pathlock.c - path locks (bakery.h, "path locks"): the lock of a file or
 * directory, named by the file's identity (pathid.c), in one region per
 * user.  The top layer: it uses only the public lock calls, the batched
 * reclamation of lockadmin.c and lock.c's test of who holds a lock.
 *
 * The process's side is one table of entries, one per file identity that
 * it has open (bakery_path_t handles point to them) or closed lately (an
 * idle entry, kept for the next open of the same file, the oldest let go
 * past BAKERY_PATH_IDLE_MAX).  An entry holds a reference to its current
 * lock handle (struct lockref); every lock call pins the current one for
 * its duration.  When another process has removed the lock (the table was
 * full, the lock idle), a call gets BAKERY_EREMOVED: it opens the name
 * again (making the lock anew, with nothing lost: the lock was idle and
 * had no repair due), installs the new handle unless another thread did
 * first, and goes on with it.  The old handle is closed by the last call
 * that pinned it.  A thread that holds the lock pins the handle it holds
 * it through: that lock cannot be removed while held, so that handle
 * stays current until the unlock, which takes the current one.
 *
 * The table's mutex is a leaf: no library call is made while it is held,
 * so that it takes no part in the order of the library's other locks (and
 * fork's handlers can take it first).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lock.h"
#include "lockadmin.h"
#include "pathid.h"

/* Attempts to open a lock in a full table, each after a reclamation.  More
 * than one: other processes may fill what one reclamation freed. */
#define RECLAIM_TRIES 4
#define FIRST_BUCKETS 64u

/* A lock handle and its references: the entry's while it is current, and
 * one per call running on it. */
struct lockref {
	bakery_lock_t *l;
	unsigned refs;
};

struct path_entry {
	char name[BAKERY_LOCK_NAME_MAX + 1];
	struct path_id id;
	uint32_t hash;
	struct path_entry *chain;           /* the next in its bucket         */
	struct path_entry *older, *newer;   /* the idle list, while opens == 0 */
	unsigned opens;                     /* bakery_path_t handles on it    */
	bool listed;                        /* in the table (not without memory) */
	struct lockref *cur;
};

struct bakery_path {
	struct path_entry *e;
};

static struct {
	pthread_mutex_t mu;
	bakery_t *b;               /* set once, kept until the process exits */
	char region[BAKERY_REGION_NAME_MAX + 2];
	struct path_entry **buckets;
	unsigned nbuckets, count;
	struct path_entry *oldest, *newest;   /* idle entries */
	unsigned nidle;
} paths = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* --------------------------------------------------------------- fork -- */

static void atfork_prepare(void) { pthread_mutex_lock(&paths.mu); }
static void atfork_parent(void) { pthread_mutex_unlock(&paths.mu); }
/* The child's only thread is the one that forked, outside any path call:
 * pins that other threads had are never given back there (their handles
 * live on in the child's table, as every inherited handle does). */
static void atfork_child(void) { pthread_mutex_init(&paths.mu, NULL); }

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ------------------------------------------------------------- region -- */

static int region_name(char *buf, size_t size)
{
	const char *env = secure_getenv(BAKERY_PATH_REGION_ENV);

	if (env && *env) {
		if (strlen(env) >= size)
			return ENAMETOOLONG;
		snprintf(buf, size, "%s", env);
	} else {
		snprintf(buf, size, BAKERY_PATH_REGION_PREFIX "%lu", (unsigned long)geteuid());
	}
	return 0;
}

/* Open the path region (the first call of the process), outside the
 * mutex: concurrent first calls each open it, one handle is kept. */
static int region_open(void)
{
	const struct bakery_config cfg = {
		.slots = BAKERY_PATH_SLOTS, .locks = BAKERY_PATH_LOCKS, .mode = 0600
	};
	char name[sizeof(paths.region)];
	bakery_t *b;
	int err = region_name(name, sizeof(name));

	if (!err)
		err = bakery_open(name, BAKERY_CREATE, &cfg, &b);
	if (err)
		return err;
	pthread_mutex_lock(&paths.mu);
	if (!paths.b) {
		memcpy(paths.region, name, sizeof(name));
		paths.b = b;
		b = NULL;
	}
	pthread_mutex_unlock(&paths.mu);
	if (b)
		bakery_close(b);
	/* after the library's own handlers: ours, registered later, run
	 * first at a fork, taking the leaf mutex before the others' */
	pthread_once(&fork_once, fork_init);
	return 0;
}

/* ----------------------------------------------------------- lockrefs -- */

/* Open the lock NAME, taking back the idle path locks of a full table. */
static int lock_open_reclaiming(const char *name, bakery_lock_t **l)
{
	int err = bakery_lock_open(paths.b, name, BAKERY_ALGO_DEFAULT, l);

	for (int i = 0; err == BAKERY_ELOCKS && i < RECLAIM_TRIES; i++) {
		unsigned removed;
		int rerr = bakery__lock_reclaim(paths.b, BAKERY_PATH_LOCK_PREFIX, &removed);

		/* not ours to reclaim (another user's region), or no
		 * membarrier: the table is simply full */
		if (rerr == EPERM || rerr == ENOTSUP)
			return BAKERY_ELOCKS;
		if (rerr)
			return rerr;
		err = bakery_lock_open(paths.b, name, BAKERY_ALGO_DEFAULT, l);
	}
	return err;
}

static int lockref_open(const char *name, struct lockref **out)
{
	struct lockref *r = malloc(sizeof(*r));
	int err;

	if (!r)
		return ENOMEM;
	err = lock_open_reclaiming(name, &r->l);
	if (err) {
		free(r);
		return err;
	}
	r->refs = 1;
	*out = r;
	return 0;
}

/* Close R's handle: the last reference is gone.  Not while the calling
 * thread holds it (bakery_path_close refuses that, and a lock that is
 * held stays current); only a thread that goes on holding a lock after
 * another closed the file's last handle makes the close fail, and the
 * handle is then left to it. */
static void lockref_free(struct lockref *r)
{
	if (bakery_lock_close(r->l) == 0)
		free(r);
}

/* Drop a reference to R, the mutex held: true if it was the last. */
static bool lockref_drop(struct lockref *r)
{
	return --r->refs == 0;
}

static void lockref_put(struct lockref *r)
{
	bool last;

	pthread_mutex_lock(&paths.mu);
	last = lockref_drop(r);
	pthread_mutex_unlock(&paths.mu);
	if (last)
		lockref_free(r);
}

/* E's current lock handle, pinned until lockref_put. */
static struct lockref *entry_pin(struct path_entry *e)
{
	struct lockref *r;

	pthread_mutex_lock(&paths.mu);
	r = e->cur;
	r->refs++;
	pthread_mutex_unlock(&paths.mu);
	return r;
}

/* ------------------------------------------------------------- table -- */

/* FNV-1a. */
static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

static struct path_entry *table_find(const char *name, uint32_t hash)
{
	if (!paths.nbuckets)
		return NULL;
	for (struct path_entry *e = paths.buckets[hash % paths.nbuckets]; e; e = e->chain)
		if (e->hash == hash && !strcmp(e->name, name))
			return e;
	return NULL;
}

/* Twice the buckets once the entries outnumber them twice; without the
 * memory, the chains only grow longer. */
static void table_grow(void)
{
	unsigned n = paths.nbuckets ? 2 * paths.nbuckets : FIRST_BUCKETS;
	struct path_entry **nb;

	if (paths.count + 1 < 2 * paths.nbuckets || !(nb = calloc(n, sizeof(*nb))))
		return;
	for (unsigned i = 0; i < paths.nbuckets; i++)
		for (struct path_entry *e = paths.buckets[i], *next; e; e = next) {
			next = e->chain;
			e->chain = nb[e->hash % n];
			nb[e->hash % n] = e;
		}
	free(paths.buckets);
	paths.buckets = nb;
	paths.nbuckets = n;
}

/* Without even the first buckets, E stays out of the table: it lives as
 * long as its handles, and is not found by the next open. */
static void table_insert(struct path_entry *e)
{
	struct path_entry **head;

	table_grow();
	if (!paths.nbuckets)
		return;
	head = &paths.buckets[e->hash % paths.nbuckets];
	e->chain = *head;
	*head = e;
	e->listed = true;
	paths.count++;
}

static void table_remove(struct path_entry *e)
{
	struct path_entry **pp = &paths.buckets[e->hash % paths.nbuckets];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	e->listed = false;
	paths.count--;
}

static void idle_unlink(struct path_entry *e)
{
	if (e->older)
		e->older->newer = e->newer;
	else
		paths.oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		paths.newest = e->older;
	e->older = e->newer = NULL;
	paths.nidle--;
}

static void idle_push(struct path_entry *e)
{
	e->older = paths.newest;
	e->newer = NULL;
	if (paths.newest)
		paths.newest->newer = e;
	else
		paths.oldest = e;
	paths.newest = e;
	paths.nidle++;
}

/* Take E out of the table, the mutex held: its lock handle, if this was
 * its last reference, into *DEAD for the caller to close unlocked. */
static void entry_forget(struct path_entry *e, struct lockref **dead)
{
	if (e->listed)
		table_remove(e);
	*dead = lockref_drop(e->cur) ? e->cur : NULL;
}

/* ----------------------------------------------------------- entries -- */

/* The entry of lock NAME, opened once more: found in the table, or made
 * with a lock handle opened outside the mutex (another thread may make it
 * meanwhile: then ours is thrown away). */
static int entry_open(const char *name, const struct path_id *id, struct path_entry **out)
{
	uint32_t hash = name_hash(name);
	struct path_entry *e, *made = NULL;
	int err;

	pthread_mutex_lock(&paths.mu);
	while (!(e = table_find(name, hash)) && !made) {
		pthread_mutex_unlock(&paths.mu);
		if (!(made = calloc(1, sizeof(*made))))
			return ENOMEM;
		if ((err = lockref_open(name, &made->cur))) {
			free(made);
			return err;
		}
		memcpy(made->name, name, sizeof(made->name));
		made->id = *id;
		made->hash = hash;
		pthread_mutex_lock(&paths.mu);
	}
	if (!e) {
		e = made;
		made = NULL;
		table_insert(e);
	} else if (e->opens == 0) {
		idle_unlink(e);
	}
	e->opens++;
	pthread_mutex_unlock(&paths.mu);
	if (made) {
		lockref_free(made->cur);
		free(made);
	}
	*out = e;
	return 0;
}

/* One handle less on E: idle at the last, and the oldest idle entry let
 * go when there are too many. */
static void entry_close(struct path_entry *e)
{
	struct path_entry *gone = NULL;
	struct lockref *dead = NULL;

	pthread_mutex_lock(&paths.mu);
	if (--e->opens == 0) {
		if (e->listed) {
			idle_push(e);
			if (paths.nidle > BAKERY_PATH_IDLE_MAX) {
				gone = paths.oldest;
				idle_unlink(gone);
			}
		} else {
			gone = e;       /* never in the table (no memory) */
		}
		if (gone)
			entry_forget(gone, &dead);
	}
	pthread_mutex_unlock(&paths.mu);
	if (dead)
		lockref_free(dead);
	free(gone);
}

/* E's lock STALE was removed by another process: open it again and make
 * that E's current handle, unless another thread has already. */
static int entry_renew(struct path_entry *e, struct lockref *stale)
{
	struct lockref *fresh;
	int err = lockref_open(e->name, &fresh);

	if (err)
		return err;
	pthread_mutex_lock(&paths.mu);
	if (e->cur == stale) {
		e->cur = fresh;
		fresh = NULL;
		lockref_drop(stale);    /* the entry's; our pin keeps it */
	}
	pthread_mutex_unlock(&paths.mu);
	if (fresh)
		lockref_free(fresh);
	return 0;
}

/* ------------------------------------------------------------ opening -- */

static int path_open(const char *path, unsigned flags, bakery_path_t **out)
{
	char name[BAKERY_LOCK_NAME_MAX + 1];
	struct bakery_path *p;
	struct path_id id;
	int err;

	if (!path || !*path || !out || (flags & ~BAKERY_CREATE))
		return EINVAL;
	if ((err = bakery__path_id(path, flags & BAKERY_CREATE, &id)))
		return err;
	bakery__path_id_name(&id, name);
	if (!CMM_LOAD_SHARED(paths.b) && (err = region_open()))
		return err;
	if (!(p = malloc(sizeof(*p))))
		return ENOMEM;
	if ((err = entry_open(name, &id, &p->e))) {
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

int bakery_path_open(const char *path, unsigned flags, bakery_path_t **out)
{
	int old = cancel_off(), err = path_open(path, flags, out);

	cancel_restore(old);
	return err;
}

/* CALL on P's current lock handle, pinned meanwhile. */
static int on_current(bakery_path_t *p, int (*call)(bakery_lock_t *l))
{
	struct lockref *r = entry_pin(p->e);
	int err = call(r->l);

	lockref_put(r);
	return err;
}

static int held_by_caller(bakery_lock_t *l)
{
	return bakery__lock_held_by_caller(l);
}

int bakery_path_close(bakery_path_t *p)
{
	if (!p)
		return EINVAL;
	if (on_current(p, held_by_caller))
		return EBUSY;
	entry_close(p->e);
	free(p);
	return 0;
}

int bakery_path_info(const bakery_path_t *p, struct bakery_path_info *out)
{
	const struct path_entry *e;

	if (!p || !out)
		return EINVAL;
	e = p->e;
	memset(out, 0, sizeof(*out));
	memcpy(out->region, paths.region, sizeof(out->region));
	memcpy(out->lock, e->name, sizeof(out->lock));
	out->dev = makedev(e->id.major, e->id.minor);
	out->ino = e->id.ino;
	out->stamp = e->id.stamp;
	out->stamp_value = e->id.stamp_value;
	return 0;
}

/* ------------------------------------------------------------ renewing -- */

/* CALL (with ARG) on P's current lock handle, pinned meanwhile; a lock
 * another process removed is made again, and CALL runs once more on it. */
static int on_renewed(bakery_path_t *p, int (*call)(bakery_lock_t *l, const void *arg),
                      const void *arg)
{
	for (;;) {
		struct lockref *r = entry_pin(p->e);
		int err = call(r->l, arg);

		/* removed by another process: made again, then once more */
		if (err == BAKERY_EREMOVED && (err = entry_renew(p->e, r)) == 0)
			err = BAKERY_EREMOVED;
		lockref_put(r);
		if (err != BAKERY_EREMOVED)
			return err;
	}
}

/* ---------------------------------------------------------- acquiring -- */

static int acquire_call(bakery_lock_t *l, const void *opts)
{
	return bakery_acquire(l, opts);
}

/* OPTS on P's current lock handle (bakery_acquire), made again first if
 * another process removed it. */
static int path_acquire(bakery_path_t *p, const struct bakery_acquire_opts *opts)
{
	return on_renewed(p, acquire_call, opts);
}

int bakery_path_acquire(bakery_path_t *p, const struct bakery_acquire_opts *opts)
{
	return p && opts ? path_acquire(p, opts) : EINVAL;
}

int bakery_path_lock(bakery_path_t *p)
{
	const struct bakery_acquire_opts o = { .flags = 0 };

	return bakery_path_acquire(p, &o);
}

int bakery_path_trylock(bakery_path_t *p)
{
	const struct bakery_acquire_opts o = { .flags = BAKERY_ACQUIRE_TRY };

	return bakery_path_acquire(p, &o);
}

int bakery_path_clocklock(bakery_path_t *p, clockid_t clock, const struct timespec *abstime)
{
	const struct bakery_acquire_opts o = { .clock = clock, .deadline = abstime };

	return abstime ? bakery_path_acquire(p, &o) : EINVAL;
}

int bakery_path_timedlock(bakery_path_t *p, const struct timespec *abstime)
{
	return bakery_path_clocklock(p, CLOCK_REALTIME, abstime);
}

int bakery_path_rdlock(bakery_path_t *p)
{
	const struct bakery_acquire_opts o = { .flags = BAKERY_ACQUIRE_SHARED };

	return bakery_path_acquire(p, &o);
}

int bakery_path_tryrdlock(bakery_path_t *p)
{
	const struct bakery_acquire_opts o = {
		.flags = BAKERY_ACQUIRE_SHARED | BAKERY_ACQUIRE_TRY
	};

	return bakery_path_acquire(p, &o);
}

int bakery_path_clockrdlock(bakery_path_t *p, clockid_t clock, const struct timespec *abstime)
{
	const struct bakery_acquire_opts o = {
		.flags = BAKERY_ACQUIRE_SHARED, .clock = clock, .deadline = abstime
	};

	return abstime ? bakery_path_acquire(p, &o) : EINVAL;
}

int bakery_path_timedrdlock(bakery_path_t *p, const struct timespec *abstime)
{
	return bakery_path_clockrdlock(p, CLOCK_REALTIME, abstime);
}

/* ---------------------------------------------------------- releasing -- */

int bakery_path_unlock(bakery_path_t *p)
{
	return p ? on_current(p, bakery_unlock) : EINVAL;
}

int bakery_path_consistent(bakery_path_t *p)
{
	return p ? on_current(p, bakery_consistent) : EINVAL;
}

/* ------------------------------------------------------- introspection -- */

struct info_query {
	const char *name;          /* the path's lock...                 */
	struct bakery_lock_info *out;   /* ...and where its info goes    */
};

/* bakery_lock_info of L, or BAKERY_EREMOVED if its entry no longer holds
 * it (removed before or between the two calls: the name tells). */
static int current_info(bakery_lock_t *l, const void *arg)
{
	const struct info_query *q = arg;
	unsigned index;
	int err = bakery_lock_index(l, &index);

	if (!err)
		err = bakery_lock_info(paths.b, index, q->out);
	if (err == ENOENT || (!err && strcmp(q->out->name, q->name)))
		err = BAKERY_EREMOVED;
	return err;
}

int bakery_path_lock_info(bakery_path_t *p, struct bakery_lock_info *out)
{
	struct info_query q;
	int old, err;

	if (!p || !out)
		return EINVAL;
	q.name = p->e->name;
	q.out = out;
	old = cancel_off();     /* a lock made again: as bakery_path_open */
	err = on_renewed(p, current_info, &q);
	cancel_restore(old);
	return err;
}
