/* SPDX-License-Identifier: MIT */
/*
 * fuzz-region.c - one fuzz case of region validation and of everything that
 * reads a region afterwards.  Bytes in, a POSIX shm object out; then
 * bakery_open (no CREATE) and, if the region is accepted, every
 * introspection call, lock opens, trylock / past-deadline timedlock / unlock,
 * bakery_recover and bakery_close.  Checked: nothing crashes (the sanitizers,
 * or the replay's parent watching its child, see to that) and every answer is
 * one the API documents for that call in that situation.
 *
 * Input format (every byte string is a valid input):
 *
 *   byte 0   control.  bit 7 RAW, bit 3 FIXHASH; without RAW also
 *            bits 0-1 slots - 1, bit 2 locks - 1, bits 4-5 scenario, bit 6 GROW
 *   RAW      the rest of the input is the object, byte for byte: garbage
 *            headers, truncated objects.  FIXHASH recomputes its layout_check
 *            first, so the other header fields are explored past the hash.
 *   template byte 1 gives the algorithms of locks "L0" and "L1" (two bits
 *            each, value + 1; an "L1" of Lamport's is made biased,
 *            BAKERY_LOCK_BIASED, where this process may have one); then patches [offset u16 BE][length u8][bytes],
 *            offsets modulo the region size, written over a region the
 *            library itself made and left in the scenario's state (below).
 *            FIXHASH recomputes layout_check after the patches, GROW makes
 *            the object one page longer than the region.
 *
 * The template keeps the header valid, so the fuzzer spends its time in the
 * tables: slot states and tokens, lock entries, active sets, registers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm_layout.h"
#include "handle.h"
#include "fuzz-region.h"

#define CTL_SLOTS(c)     (((c) & 3u) + 1)
#define CTL_LOCKS(c)     ((((c) >> 2) & 1u) + 1)
#define CTL_FIXHASH      0x08u
#define CTL_SCENARIO(c)  (((c) >> 4) & 3u)
#define CTL_GROW         0x40u
#define CTL_RAW          0x80u

#define MAX_TPL_SLOTS 4
#define MAX_TPL_LOCKS 2

/* How the library leaves the template region before it is copied. */
enum scenario {
	SCN_IDLE,          /* a participant took and released every lock, exited */
	SCN_DEAD_HOLDER,   /* a participant died holding L0 (owner-died token)   */
	SCN_DEAD_QUEUE,    /* a holder of L0 and a waiter behind it both died    */
	SCN_DEAD_ABORT,    /* a holder died, and a waiter that timed out died    */
	SCN_COUNT
};

/* ---------------------------------------------------------------- oracle -- */

static void fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

static void fail(int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz-region.c:%d: ", line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#define EXPECT(cond, ...) do { if (!(cond)) fail(__LINE__, __VA_ARGS__); } while (0)

static int one_of(int err, const int *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == err)
			return 1;
	return 0;
}

#define ONE_OF(err, ...) \
	one_of((err), (const int[]){ __VA_ARGS__ }, sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))

/* ------------------------------------------------------------ the header -- */

/* FNV-1a over the header up to layout_check: written here from the layout's
 * description, not taken from the library, so a mismatch would show as
 * templates that stop validating after FIXHASH. */
static void fix_hash(uint8_t *obj, size_t size)
{
	size_t n = offsetof(struct bakery_shm_header, layout_check);
	uint64_t x = UINT64_C(0xcbf29ce484222325);

	if (size < sizeof(struct bakery_shm_header))
		return;
	for (size_t i = 0; i < n; i++) {
		x ^= obj[i];
		x *= UINT64_C(0x100000001b3);
	}
	memcpy(obj + n, &x, sizeof(x));
}

/* ------------------------------------------------- scenario participants -- */

enum act { ACT_CYCLE, ACT_HOLD, ACT_WAIT, ACT_ABORT };

static void child_fail(const char *what, int err) __attribute__((noreturn));

static void child_fail(const char *what, int err)
{
	fprintf(stderr, "fuzz-region.c: template participant: %s: %s\n", what, bakery_strerror(err));
	_exit(2);
}

static void child_act(const char *name, unsigned nlocks, enum act act, int wfd)
{
	bakery_t *b;
	bakery_lock_t *l[MAX_TPL_LOCKS];
	struct timespec t;
	int err;

	if ((err = bakery_open(name, 0, NULL, &b)))
		child_fail("bakery_open", err);
	for (unsigned i = 0; i < nlocks; i++) {
		char ln[8];
		snprintf(ln, sizeof(ln), "L%u", i);
		if ((err = bakery_lock_open(b, ln, BAKERY_ALGO_DEFAULT, &l[i])))
			child_fail("bakery_lock_open", err);
	}
	switch (act) {
	case ACT_CYCLE:
		for (unsigned i = 0; i < nlocks; i++)
			if ((err = bakery_lock(l[i])) || (err = bakery_unlock(l[i])))
				child_fail("bakery_lock/unlock", err);
		for (unsigned i = 0; i < nlocks; i++)
			bakery_lock_close(l[i]);
		if ((err = bakery_close(b)))
			child_fail("bakery_close", err);
		_exit(0);
	case ACT_HOLD:
		if ((err = bakery_lock(l[0])))
			child_fail("bakery_lock", err);
		break;
	case ACT_WAIT:
		if (write(wfd, "w", 1) != 1)
			_exit(2);
		err = bakery_lock(l[0]);        /* blocks: the holder never lets go */
		child_fail("bakery_lock returned while the holder held", err);
	case ACT_ABORT:
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec = t.tv_nsec < 980000000L ? t.tv_nsec + 20000000L : 999999999L;
		if ((err = bakery_timedlock(l[0], &t)) != ETIMEDOUT)
			child_fail("bakery_timedlock", err);
		break;
	}
	if (write(wfd, "r", 1) != 1)
		_exit(2);
	for (;;)
		pause();                /* until SIGKILLed, mid-protocol */
}

/* Start a participant and wait for its "ready" byte. */
static pid_t child_start(const char *name, unsigned nlocks, enum act act)
{
	int fds[2];
	pid_t pid;
	char c;
	struct pollfd pfd;

	EXPECT(pipe(fds) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	EXPECT(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* never outlive the fuzzer: a crash there must not leave
		 * participants paused for ever */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		child_act(name, nlocks, act, fds[1]);
	}
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	if (act != ACT_CYCLE)
		EXPECT(poll(&pfd, 1, 10000) == 1 && read(fds[0], &c, 1) == 1,
		       "template participant (act %d) did not get ready", (int)act);
	close(fds[0]);
	return pid;
}

static void child_kill(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static void child_reap(pid_t pid)
{
	int st;

	EXPECT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "template participant failed (status %#x)", (unsigned)st);
}

/* Wait until lock 0 of B has a waiter past the doorway. */
static void wait_for_waiter(bakery_t *b)
{
	struct bakery_lock_info li;

	for (int i = 0; i < 10000; i++) {
		if (bakery_lock_info(b, 0, &li) == 0 && li.waiters > 0)
			return;
		usleep(1000);
	}
	fail(__LINE__, "template waiter never queued");
}

static void scenario_run(bakery_t *b, const char *name, unsigned nlocks, enum scenario scn)
{
	pid_t holder, other;

	switch (scn) {
	case SCN_IDLE:
		child_reap(child_start(name, nlocks, ACT_CYCLE));
		return;
	case SCN_DEAD_HOLDER:
		child_kill(child_start(name, nlocks, ACT_HOLD));
		return;
	case SCN_DEAD_QUEUE:
		holder = child_start(name, nlocks, ACT_HOLD);
		other = child_start(name, nlocks, ACT_WAIT);
		wait_for_waiter(b);
		child_kill(other);      /* dies waiting: its ticket stays published */
		child_kill(holder);
		return;
	case SCN_DEAD_ABORT:
		holder = child_start(name, nlocks, ACT_HOLD);
		other = child_start(name, nlocks, ACT_ABORT);
		child_kill(other);      /* Jayanti: its passage is left to a proxy */
		child_kill(holder);
		return;
	default:
		return;
	}
}

/* -------------------------------------------------------------- templates -- */

struct blob {
	uint8_t *bytes;
	size_t size;
};

static struct blob templates[MAX_TPL_SLOTS + 1][MAX_TPL_LOCKS + 1][16][SCN_COUNT];

static void snapshot(const char *name, struct blob *out)
{
	struct stat st;
	int fd = shm_open(name, O_RDONLY, 0);

	EXPECT(fd >= 0 && fstat(fd, &st) == 0, "template snapshot: %s", strerror(errno));
	out->size = (size_t)st.st_size;
	out->bytes = malloc(out->size);
	EXPECT(out->bytes && pread(fd, out->bytes, out->size, 0) == (ssize_t)out->size,
	       "template snapshot: short read");
	close(fd);
}

static void template_make(unsigned slots, unsigned locks, unsigned algos,
                          enum scenario scn, struct blob *out)
{
	struct bakery_config cfg = { .slots = slots, .locks = locks };
	char name[64];
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	snprintf(name, sizeof(name), "/bakery-fuzz-tpl-%d", (int)getpid());
	bakery_unlink(name);
	err = bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b);
	EXPECT(err == 0, "template create: %s", bakery_strerror(err));
	for (unsigned i = 0; i < locks; i++) {
		char ln[8];
		struct bakery_lock_config lc = {
			.algo = (enum bakery_algo)(1 + ((algos >> (2 * i)) & 3)),
		};

		snprintf(ln, sizeof(ln), "L%u", i);
		/* a bias word for the patches to forge */
		if (i == 1 && lc.algo == BAKERY_ALGO_LAMPORT)
			lc.flags = BAKERY_LOCK_BIASED;
		err = bakery_lock_open_config(b, ln, &lc, &l);
		if (err == ENOTSUP && lc.flags) {
			lc.flags = 0;   /* no expedited membarrier here */
			err = bakery_lock_open_config(b, ln, &lc, &l);
		}
		EXPECT(err == 0, "template lock: %s", bakery_strerror(err));
		bakery_lock_close(l);
	}
	scenario_run(b, name, locks, scn);
	snapshot(name, out);
	EXPECT(bakery_close(b) == 0, "template close");
	bakery_unlink(name);
}

static const struct blob *template_get(unsigned slots, unsigned locks, unsigned algos,
                                       enum scenario scn)
{
	struct blob *t;

	if (scn != SCN_IDLE && scn != SCN_DEAD_HOLDER && slots < 2)
		slots = 2;              /* two participants */
	if (locks < 2)
		algos &= 3;             /* L1's bits mean nothing */
	t = &templates[slots][locks][algos][scn];
	if (!t->bytes)
		template_make(slots, locks, algos, scn, t);
	return t;
}

/* ----------------------------------------------------------------- input -- */

static void patches_apply(struct blob *obj, const uint8_t *p, size_t n)
{
	while (n >= 3) {
		size_t off = ((size_t)p[0] << 8 | p[1]) % obj->size;
		size_t len = p[2];

		p += 3;
		n -= 3;
		if (len > n)
			len = n;
		if (len > obj->size - off)
			len = obj->size - off;
		memcpy(obj->bytes + off, p, len);
		p += len;
		n -= len;
	}
}

/* The object's bytes for input DATA (caller frees). */
static struct blob object_build(const uint8_t *data, size_t size)
{
	uint8_t ctl = size ? data[0] : CTL_RAW;
	struct blob obj;
	const struct blob *t;

	if (ctl & CTL_RAW) {
		obj.size = size ? size - 1 : 0;
		obj.bytes = malloc(obj.size + 1);
		EXPECT(obj.bytes, "out of memory");
		if (obj.size)
			memcpy(obj.bytes, data + 1, obj.size);
	} else {
		t = template_get(CTL_SLOTS(ctl), CTL_LOCKS(ctl), size > 1 ? data[1] & 15 : 0,
		                 (enum scenario)CTL_SCENARIO(ctl));
		obj.size = t->size + ((ctl & CTL_GROW) ? 4096 : 0);
		obj.bytes = calloc(1, obj.size);
		EXPECT(obj.bytes, "out of memory");
		memcpy(obj.bytes, t->bytes, t->size);
		if (size > 2)
			patches_apply(&obj, data + 2, size - 2);
	}
	if (ctl & CTL_FIXHASH)
		fix_hash(obj.bytes, obj.size);
	return obj;
}

static void object_write(const char *name, const struct blob *obj)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	size_t done = 0;

	EXPECT(fd >= 0, "shm_open: %s", strerror(errno));
	while (done < obj->size) {
		ssize_t w = write(fd, obj->bytes + done, obj->size - done);
		EXPECT(w > 0, "write: %s", strerror(errno));
		done += (size_t)w;
	}
	close(fd);
}

/* ---------------------------------------------------------- introspection -- */

static void check_region(bakery_t *b, size_t objsize, struct bakery_region_info *ri)
{
	int err = bakery_region_info(b, ri);

	EXPECT(err == 0, "bakery_region_info: %d", err);
	EXPECT(ri->slots >= 1 && ri->slots <= BAKERY_MAX_SLOTS &&
	       ri->locks >= 1 && ri->locks <= BAKERY_MAX_LOCKS,
	       "region_info capacities %u/%u", ri->slots, ri->locks);
	EXPECT(ri->size <= objsize, "region_info size %llu beyond the object (%zu)",
	       (unsigned long long)ri->size, objsize);
	EXPECT(ri->slots_used <= ri->slots && ri->locks_used <= ri->locks,
	       "region_info used %u/%u", ri->slots_used, ri->locks_used);
}

static void check_slots(bakery_t *b, const struct bakery_region_info *ri)
{
	struct bakery_slot_info si;
	int err;

	for (unsigned i = 0; i < ri->slots; i++) {
		err = bakery_slot_info(b, i, &si);
		EXPECT(err == 0, "bakery_slot_info(%u): %d", i, err);
		EXPECT(si.index == i && (unsigned)si.state <= BAKERY_SLOT_RECOVERING &&
		       si.alive >= -1 && si.alive <= 1 && (unsigned)si.pass <= BAKERY_PASS_CRITICAL &&
		       si.lock >= -1 && si.lock < (int)ri->locks,
		       "slot_info(%u) out of range: state %d alive %d pass %d lock %d",
		       i, (int)si.state, si.alive, (int)si.pass, si.lock);
	}
	EXPECT(bakery_slot_info(b, ri->slots, &si) == EINVAL, "slot_info past the end");
	EXPECT(bakery_slot_info(b, UINT_MAX, &si) == EINVAL, "slot_info(UINT_MAX)");
}

static void check_locks(bakery_t *b, const struct bakery_region_info *ri)
{
	struct bakery_lock_info li;
	int err;

	for (unsigned i = 0; i < ri->locks; i++) {
		err = bakery_lock_info(b, i, &li);
		EXPECT(err == 0 || err == ENOENT, "bakery_lock_info(%u): %d", i, err);
		if (err)
			continue;
		EXPECT(li.index == i && memchr(li.name, '\0', sizeof(li.name)) &&
		       (unsigned)li.algo < BAKERY_ALGO_COUNT &&
		       li.holder >= -1 && li.holder < (int)ri->slots &&
		       li.waiters <= ri->slots && li.participants <= ri->slots &&
		       li.bias_slot >= -1 && li.bias_slot < (int)ri->slots &&
		       (li.flags & ~BAKERY_LOCK_BIASED) == 0,
		       "lock_info(%u) out of range: algo %d holder %d waiters %u participants %u "
		       "bias_slot %d flags %#x", i, (int)li.algo, li.holder, li.waiters,
		       li.participants, li.bias_slot, li.flags);
	}
	EXPECT(bakery_lock_info(b, ri->locks, &li) == EINVAL, "lock_info past the end");
}

/* ------------------------------------------------------------------ locks -- */

/* After an acquisition attempt that returned ERR. */
static void release_if_held(bakery_lock_t *l, int err)
{
	int r;

	/* EDEADLK says this thread holds the lock already (the input may
	 * leave the slot it gets in the critical stage): it is released as
	 * the API says, and bakery_close must succeed after that */
	if (err == 0 || err == EOWNERDEAD || err == EDEADLK) {
		if (err == EOWNERDEAD) {
			r = bakery_consistent(l);
			EXPECT(r == 0, "bakery_consistent after EOWNERDEAD: %d", r);
		}
		r = bakery_unlock(l);
		EXPECT(r == 0, "bakery_unlock of a held lock (after %d): %d", err, r);
		r = bakery_unlock(l);
		EXPECT(r == EPERM, "second bakery_unlock: %d", r);
	} else {
		r = bakery_unlock(l);
		EXPECT(r == EPERM, "bakery_unlock of a lock not held (after %d): %d", err, r);
	}
}

static void exercise_lock(bakery_lock_t *l, const struct bakery_region_info *ri)
{
	struct timespec past = { 1, 0 };
	unsigned idx;
	int err;

	EXPECT(bakery_lock_index(l, &idx) == 0 && idx < ri->locks, "lock index");
	err = bakery_trylock(l);
	EXPECT(ONE_OF(err, 0, EOWNERDEAD, EBUSY, EDEADLK, ENOTRECOVERABLE, BAKERY_ESLOTS, EAGAIN,
	              BAKERY_EBADREGION), "bakery_trylock: %d", err);
	release_if_held(l, err);
	err = bakery_timedlock(l, &past);
	EXPECT(ONE_OF(err, 0, EOWNERDEAD, ETIMEDOUT, EDEADLK, ENOTRECOVERABLE, BAKERY_ESLOTS,
	              EAGAIN, BAKERY_EBADREGION), "bakery_timedlock (past deadline): %d", err);
	release_if_held(l, err);
}

static void open_and_exercise(bakery_t *b, const char *name, enum bakery_algo algo,
                              const struct bakery_region_info *ri)
{
	bakery_lock_t *l;
	int err = bakery_lock_open(b, name, algo, &l);

	EXPECT(ONE_OF(err, 0, EAGAIN, BAKERY_EBADREGION, BAKERY_ELOCKS, BAKERY_EALGO),
	       "bakery_lock_open(%s, %d): %d", name, (int)algo, err);
	if (err)
		return;
	exercise_lock(l, ri);
	err = bakery_lock_close(l);
	EXPECT(err == 0, "bakery_lock_close: %d", err);
}

/* Is the region's table token free or left by a dead owner?  Creating a
 * lock takes that token, and for a word naming a thread that is neither
 * alive nor dead-and-marked the library waits its bound (seconds) before
 * EAGAIN (or BAKERY_EBADREGION): right, but too slow for a fuzz case
 * (tests/hostile/bug-table-mutex-hang.c covers it).  Called only for a
 * region bakery_open accepted, so the header's offsets are sound. */
static int table_token_usable(const struct blob *obj)
{
	struct bakery_shm_header h;
	uint64_t off;
	uint32_t word;

	if (obj->size < sizeof(h))
		return 0;
	memcpy(&h, obj->bytes, sizeof(h));
	off = token_offset(h.tokens_off, h.page_size, 2u * h.nslots);   /* the table's */
	if (off + sizeof(word) > obj->size)
		return 0;
	memcpy(&word, obj->bytes + off, sizeof(word));
	return (word & 0x3fffffffu) == 0 || (word & 0x40000000u);  /* FUTEX_OWNER_DIED */
}

/* A name bakery_lock_open accepts: 1..63 printable characters, no '/'. */
static int lock_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > BAKERY_LOCK_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '/' || name[i] < 0x20 || name[i] > 0x7e)
			return 0;
	return 1;
}

/* Is NAME in the lock table, as bakery_lock_open looks it up?  (A name
 * lock_info shows whole is terminated in the entry.) */
static int name_in_table(bakery_t *b, const struct bakery_region_info *ri, const char *name)
{
	struct bakery_lock_info li;

	for (unsigned i = 0; i < ri->locks; i++)
		if (bakery_lock_info(b, i, &li) == 0 && !strcmp(li.name, name))
			return 1;
	return 0;
}

/* Open NAME if that cannot block: a name that is not in the table is
 * created under the table token (see table_token_usable). */
static void try_name(bakery_t *b, const struct blob *obj, const char *name,
                     enum bakery_algo algo, const struct bakery_region_info *ri)
{
	if (name_in_table(b, ri, name) || table_token_usable(obj))
		open_and_exercise(b, name, algo, ri);
}

static void exercise_locks(bakery_t *b, const struct blob *obj,
                           const struct bakery_region_info *ri)
{
	struct bakery_lock_info li;

	try_name(b, obj, "L0", BAKERY_ALGO_DEFAULT, ri);
	try_name(b, obj, "L1", BAKERY_ALGO_DEFAULT, ri);
	try_name(b, obj, "L0", BAKERY_ALGO_JAYANTI, ri);
	try_name(b, obj, "L1", BAKERY_ALGO_BOULANGERIE, ri);
	/* whatever name the table's first entry holds, if it is a valid one */
	if (bakery_lock_info(b, 0, &li) == 0 && strcmp(li.name, "L0") &&
	    lock_name_valid(li.name))
		try_name(b, obj, li.name, BAKERY_ALGO_DEFAULT, ri);
	try_name(b, obj, "fuzz-new", BAKERY_ALGO_DEFAULT, ri);
}

/* ----------------------------------------------------------------- a case -- */

static void run_api(const char *name, const struct blob *obj)
{
	struct bakery_region_info ri;
	bakery_t *b;
	unsigned reclaimed = UINT_MAX;
	int err = bakery_open(name, 0, NULL, &b);

	EXPECT(ONE_OF(err, 0, BAKERY_EBADREGION, BAKERY_EVERSION), "bakery_open: %d", err);
	if (err)
		return;
	check_region(b, obj->size, &ri);
	check_slots(b, &ri);
	check_locks(b, &ri);
	exercise_locks(b, obj, &ri);
	err = bakery_recover(b, &reclaimed);
	EXPECT(err == 0 || err == BAKERY_EBADREGION, "bakery_recover: %d", err);
	EXPECT(err || reclaimed <= ri.slots, "bakery_recover reclaimed %u of %u", reclaimed, ri.slots);
	check_slots(b, &ri);
	err = bakery_close(b);
	EXPECT(err == 0, "bakery_close: %d (this thread holds nothing)", err);
}

void fuzz_region_case(const uint8_t *data, size_t size)
{
	char name[64];
	struct blob obj;

	if (size > FUZZ_MAX_INPUT)
		size = FUZZ_MAX_INPUT;
	obj = object_build(data, size);
	snprintf(name, sizeof(name), "/bakery-fuzz-%d", (int)getpid());
	object_write(name, &obj);
	run_api(name, &obj);
	shm_unlink(name);
	free(obj.bytes);
}
