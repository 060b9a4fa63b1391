/* SPDX-License-Identifier: MIT */
/*
 * wait.c - waiting on another slot's registers without burning CPU.
 *
 * A waiter polls its condition for a short spin, then sleeps in the kernel on
 * two shared futex words at once (futex_waitv, Linux 5.16+):
 *   - the awaited register line's `seq`, which its writer bumps after every
 *     register change (bakery__reg_publish), and
 *   - the awaited slot's liveness token (the robust mutex word), in which the
 *     waiter sets FUTEX_WAITERS so that the kernel, when the owner dies,
 *     marks it FUTEX_OWNER_DIED *and wakes us*.
 * So a waiter wakes when the register changes or its owner dies, never by
 * polling.  An algorithm may add one more word (Black-White's colour).
 * Where futex_waitv is refused (a kernel before 5.16, a container's seccomp
 * profile) it sleeps on the first word alone (`seq`, or the lock-wide word
 * of bakery__await_any), for 1 ms the first time and up to 100 ms as the
 * sleeps time out (futex.c), and checks the owner's liveness on every
 * wake-up: a death is seen within that bound, and a waiter blocked for long
 * wakes about ten times a second.
 *
 * The waiter counts make an uncontended release free of system calls: the
 * writer wakes only if someone registered before its barrier (bakery__reg_signal).
 * A line counts those waiting on its ticket and those waiting for the end of
 * its doorway apart, so that a doorway wakes only the latter.
 *
 * A waiter with two or more ahead first parks (bakery__park_behind_slow):
 * one sleep on a line ahead and its token, the same two words, ended by
 * that slot's exit, abort or death: the one before its predecessor, so
 * that it wakes next in line.
 * A blocking or timed waiter that meets a false condition becomes passable
 * (pass.c); it also sleeps on its own pass word, so that being passed wakes
 * it, and it passes the slot it waits on if that one does not take its
 * turn within the grace (its sleeps are then at most G/4 long).
 * A bakery_acquire with a cancel word sleeps on that word too, so that
 * bakery_cancel wakes it; one with BAKERY_ACQUIRE_INTR notes a sleep that a
 * signal handler interrupted, and with a callback sleeps no longer than
 * BAKERY_ACQUIRE_POLL_MS at a time (stop.c).
 * In the mutant build (no barriers) wake-ups can be lost, so every sleep
 * there is capped at MUTANT_POLL_NS: the mutant is slow, not stuck.
 * A region cut short under us (guard.c) ends the wait with
 * BAKERY_EBADREGION.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exitfence.h"
#include "futex.h"
#include "pass.h"
#include "registry.h"
#include "wait.h"

/* Polls of the condition before sleeping: a few microseconds, the length of a
 * short critical section; longer only burns the CPU the holder needs. */
#define SPIN_POLLS 100
/* Polls while everyone in line can be running: about one futex wake-up
 * (~35 us with a 36 ns `pause`). */
#define LONG_SPIN_POLLS 1000
#define MUTANT_POLL_NS   1000000L       /* 1 ms */
#define ORPHAN_POLL_NS   1000000L       /* awaited registers with no owner (proxy pending) */
#ifdef BAKERY_NO_BARRIERS
#define SLEEP_CAP_NS MUTANT_POLL_NS
#else
/* Every change wakes us; the cap only bounds what a participant that breaks
 * the protocol can cost a sleeper (a forged waiter count that loses our
 * wake-up, the object cut short under us): a second, not for ever. */
#define SLEEP_CAP_NS 1000000000L
#endif

void bakery__reg_wake(struct bakery_shm_reg *reg)
{
	/* atomic: a recoverer or proxy finisher may signal the line too */
	uatomic_inc(&reg->seq);
	bakery__futex_wake_all(&reg->seq);
}

void bakery__reg_publish(struct bakery_shm_reg *reg)
{
	/* our plain register stores before the load of the waiter counts
	 * (store->load), pairing with the waiter's barrier in await_common */
	cmm_smp_mb();
	if (caa_unlikely(CMM_LOAD_SHARED(reg->waiters) || CMM_LOAD_SHARED(reg->door_waiters)))
		bakery__reg_wake(reg);
}

/* The absolute time to sleep until: the deadline, capped at CAP_NS from now
 * (0 = no cap).  Returns false when there is no limit at all. */
static bool sleep_until(const struct deadline *dl, long cap_ns, clockid_t *clock,
                        struct timespec *until)
{
	if (cap_ns) {
		deadline_cap(dl, cap_ns, clock, until);
		return true;
	}
	if (dl->mode == WAIT_DEADLINE) {
		*clock = dl->clock;
		*until = dl->at;
		return true;
	}
	return false;
}

/* The wait's cancel word (bakery_acquire), if any, as one more word of W[N]
 * (W has room for it): a sleep ends once it is set.  The new count. */
static unsigned cancel_watch(struct futex_word *w, unsigned n, const struct deadline *dl)
{
	if (caa_likely(!dl->stop) || !dl->stop->cancel)
		return n;
	w[n] = futex_word((uint32_t *)(uintptr_t)dl->stop->cancel, 0);
	return n + 1;
}

/* Sleep until one of the words (and the wait's cancel word: W has room for
 * one more) differs from its value, a wake-up, DL, or CAP_NS from now
 * (futex.c's one sleep; *NAPS is its count of one-word sleeps where
 * futex_waitv is refused: 0 at the start of each wait).  A sleep a signal
 * handler interrupted is noted for bakery_acquire (stop.c). */
static void futex_sleep(struct futex_word *w, unsigned n, const struct deadline *dl,
                        long cap_ns, unsigned *naps)
{
	struct timespec until;
	clockid_t clock = CLOCK_MONOTONIC;
	/* the cancel word is watched by a sleep on several words, unless
	 * futex_waitv is refused (then only W[0] is: futex.h) */
	bool watched = !bakery__futex_waitv_refused();
	bool timed;

	n = cancel_watch(w, n, dl);
	timed = sleep_until(dl, bakery__stop_cap(dl->stop, watched, cap_ns), &clock, &until);
	bakery__stop_note_sleep(dl->stop, bakery__futex_sleep(w, n, clock, timed ? &until : NULL,
	                                                      naps));
}

/*
 * What one sleep watches, built by the calls below and nothing else: a
 * word of the line (a register's sequence word, a lock-wide word) with the
 * value read before the condition, a slot's token armed with its waiters
 * bit (token_arm), the waiter's own pass word once it is passable (a
 * passer's CLEARED wakes it).  One place is kept for the wait's cancel
 * word, which futex_sleep adds.
 */
struct watch {
	struct futex_word w[FUTEX_WORDS_MAX];
	unsigned n;
};

/* Room left in S, the cancel word's place kept. */
static inline unsigned watch_room(const struct watch *s)
{
	return FUTEX_WORDS_MAX - 1 - s->n;
}

static inline void watch_word(struct watch *s, uint32_t *word, uint32_t seen)
{
	s->w[s->n++] = futex_word(word, seen);
}

/* Slot J's token as token_arm returned it: TOK, or nothing when 0 (no
 * live holder to sleep on). */
static inline void watch_token(struct watch *s, struct bakery *b, unsigned j, uint32_t tok)
{
	if (tok)
		watch_word(s, slot_token_word(b, j), tok);
}

static inline void watch_own_pass(struct watch *s, const struct passage *p)
{
	if (p->pass_published)
		watch_word(s, &p->mine->pass, PASS_WAITING);
}

/* Sleep on S (futex_sleep). */
static void watch_sleep(struct watch *s, const struct deadline *dl, long cap_ns, unsigned *naps)
{
	futex_sleep(s->w, s->n, dl, cap_ns, naps);
}

/*
 * Arm the liveness token of slot J for a wake-up on its owner's death.
 * Returns the word value to sleep on, or 0 if there is no live owner to
 * wait for (it died: recovered here; or the slot has no owner).
 */
static uint32_t token_arm(struct bakery *b, unsigned j)
{
	uint32_t *word = slot_token_word(b, j);

	for (;;) {
		uint32_t v = uatomic_read(word);

		switch (token_state(v)) {
		case TOKEN_OWNER_DIED:
			bakery__slot_recover_if_dead(b, j);       /* proves and recovers */
			return 0;
		case TOKEN_FREE:
			return 0;
		case TOKEN_HELD:
			break;
		}
		if (token_has_waiters(v))
			return v;
		if (uatomic_cmpxchg(word, v, token_with_waiters(v)) == v)
			return token_with_waiters(v);
	}
}

/*
 * The kernel wakes ONE waiter of a token whose owner died.  Whoever it woke
 * proves and recovers the death before anything else (and so wakes every
 * other waiter of j's registers): a waiter about to give up (its deadline
 * passed) or to go on (its condition came true otherwise) must not take the
 * only wake-up with it, leaving the others asleep until their cap.
 */
static void death_pass_on(struct bakery *b, unsigned j)
{
	(void)slot_recover_if_marked(b, j);
}

/*
 * A trylock that would wait on j: before saying EBUSY, make sure j's owner
 * is alive.  Waiters find a dead owner through the kernel's wake-up; a
 * trylock never sleeps, so without this a survivor that only uses trylock
 * would be told EBUSY for ever by a corpse.  Costs one load of the token
 * word when the owner is alive.
 */
static int busy_unless_gone(struct passage *p, unsigned j, await_fn cond, void *arg)
{
	if (slot_recover_if_marked(p->b, j) == OWNER_RECOVERED && cond(p->b, p->lock, j, arg))
		return 0;
	/* the same for a waiter that has not taken its turn for G (by this
	 * thread's watch, kept between its trylocks) */
	if (bakery__pass_consider_once(p, j) && cond(p->b, p->lock, j, arg))
		return 0;
	return EBUSY;
}

/* CPUs to run on, read once per process: 0 until then. */
static unsigned cpus_online;

/* Two threads racing both read sysconf, harmlessly. */
static unsigned online_cpus_read(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = c > 0 ? (unsigned)c : 1;

	uatomic_set(&cpus_online, n);
	return n;
}

static unsigned online_cpus(void)
{
	unsigned n = uatomic_read(&cpus_online);

	return n ? n : online_cpus_read();
}

void bakery__wait_prepare(void)
{
	(void)online_cpus();
}

/* What an await's condition reads of j's registers: which waiter counts it
 * registers in, so that the right writes wake it. */
enum await_on { ON_TICKET = 1, ON_DOORWAY = 2, ON_BOTH = 3 };

static void waiters_inc(struct bakery_shm_reg *r, enum await_on on)
{
	if (on & ON_TICKET)
		uatomic_inc(&r->waiters);
	if (on & ON_DOORWAY)
		uatomic_inc(&r->door_waiters);
}

static void waiters_dec(struct bakery_shm_reg *r, enum await_on on)
{
	if (on & ON_TICKET)
		uatomic_dec(&r->waiters);
	if (on & ON_DOORWAY)
		uatomic_dec(&r->door_waiters);
}

/* await_spin's answer when the waiter is to sleep (0 and errors are
 * await_common's own answers). */
#define AWAIT_SLEEP (-1)

/*
 * The spin before a sleep: 0 once COND holds, or a try's answer
 * (busy_unless_gone), or AWAIT_SLEEP.  A sleeper costs its waker a system
 * call and itself a wake-up of tens of microseconds, and the next waiter
 * then tends to sleep too.  While everyone in line can be running (fewer
 * tickets ahead than CPUs), spin for about one wake-up; with more, someone
 * ahead is not running, and a long spin only takes the CPU it needs.
 */
static int await_spin(struct passage *p, unsigned j, await_fn cond, void *arg, bool transient)
{
	struct bakery *b = p->b;
	int spins = !transient && p->crowd < online_cpus() ? LONG_SPIN_POLLS : SPIN_POLLS;

	for (int i = 0; i < spins; i++) {
		if (cond(b, p->lock, j, arg))
			return 0;
		if (p->dl->mode == WAIT_NONE && !transient)
			return busy_unless_gone(p, j, cond, arg);
		/* waiting for real: from now on we may be passed (not on the
		 * uncontended path, where every condition holds at once) */
		bakery__pass_publish(p);
		/* A dead owner's registers never change: a blocking waiter
		 * that finds the token marked dead recovers it at once
		 * instead of spinning first (a late arrival after a crash). */
		if (i == 0 && slot_recover_if_marked(b, j) != OWNER_UNMARKED)
			continue;
		caa_cpu_relax();
	}
	return p->dl->mode == WAIT_NONE ? busy_unless_gone(p, j, cond, arg) : AWAIT_SLEEP;
}

/* The values of the words a sleep on j's registers watches, read before
 * the condition: a change after that makes the sleep return at once. */
struct await_seen {
	uint32_t seq, also;
};

static void await_seen_read(const struct passage *p, const struct bakery_shm_reg *r,
                            struct await_seen *seen)
{
	seen->seq = CMM_LOAD_SHARED(r->seq);
	seen->also = p->also ? CMM_LOAD_SHARED(*p->also) : 0;
}

/*
 * One sleep on j's registers (counted in as a waiter of ON), unless COND
 * holds once we are counted: watched are j's sequence word, its token (or
 * an orphan's poll), the passage's other word (ALSO) and its own pass
 * word (a passer's CLEARED wakes us).
 */
static void await_sleep(struct passage *p, unsigned j, await_fn cond, void *arg,
                        enum await_on on, const struct await_seen *seen, unsigned *naps)
{
	struct bakery *b = p->b;
	struct bakery_shm_reg *r = reg_of(b, p->lock, j);
	struct watch s;
	uint32_t tok;
	long cap = SLEEP_CAP_NS;

	s.n = 0;
	waiters_inc(r, on);
	if (p->also_waiters)
		uatomic_inc(p->also_waiters);
	/* Our waiter count before our re-read of the registers
	 * (store->load), pairing with the writer's store_mb(). */
	cmm_smp_mb();
	/* and with an exit's store, which may have no barrier: the exiters'
	 * barrier (exitfence.h); a doorway's choosing := 0 has its own */
	if (on != ON_DOORWAY || p->also_waiters)
		cap = bakery__exit_fence_remote(b, &b->locks[p->lock], cap);
	tok = token_arm(b, j);
	watch_word(&s, &r->seq, seen->seq);
	watch_token(&s, b, j, tok);
	if (p->also)
		watch_word(&s, p->also, seen->also);
	watch_own_pass(&s, p);
	if (!cond(b, p->lock, j, arg)) {
		watch_sleep(&s, p->dl, bakery__pass_sleep_cap(p, j, tok ? cap : ORPHAN_POLL_NS), naps);
		CRASH_POINT("wait-woken");
		death_pass_on(b, j);
	}
	if (p->also_waiters)
		uatomic_dec(p->also_waiters);
	waiters_dec(r, on);
}

static int await_common(struct passage *p, unsigned j, await_fn cond, void *arg,
                        enum await_on on)
{
	struct bakery *b = p->b;
	struct bakery_shm_reg *r = reg_of(b, p->lock, j);
	struct pass_watch watch = { .started = false };
	unsigned naps = 0;
	int err;

	/* passed: our view is stale and we will not enter (lock.c's
	 * pass_close says so); end the algorithm's loop without waiting and
	 * without an abort of our own (the passer has cleared our ticket) */
	if (caa_unlikely(bakery__pass_was_passed(p)))
		return 0;
	if ((err = await_spin(p, j, cond, arg, on == ON_DOORWAY)) != AWAIT_SLEEP)
		return err;
	for (;;) {
		struct await_seen seen;

		await_seen_read(p, r, &seen);
		if (region_lost(b))
			return region_lost_error(b);
		/* passed while we slept: as above */
		if (bakery__pass_was_passed(p))
			return 0;
		if ((err = bakery__wait_over(p->dl)))
			return cond(b, p->lock, j, arg) ? 0 : err;
		/* j's turn came and it has not taken it for G: pass it (its
		 * registers are clear then, and cond holds below) */
		bakery__pass_consider(p, j, &watch);
		await_sleep(p, j, cond, arg, on, &seen, &naps);
		if (cond(b, p->lock, j, arg))
			return 0;
	}
}

int bakery__await_slot(struct passage *p, unsigned j, await_fn cond, void *arg)
{
	return await_common(p, j, cond, arg, ON_TICKET);
}

int bakery__await_doorway(struct passage *p, unsigned j, await_fn cond, void *arg)
{
	return await_common(p, j, cond, arg, ON_DOORWAY);
}

int bakery__await_registers(struct passage *p, unsigned j, await_fn cond, void *arg)
{
	return await_common(p, j, cond, arg, ON_BOTH);
}

/* ---------------------------------------------------- many slots ahead -- */

/* futex_waitv takes at most 128 words (struct watch): the lock-wide one,
 * our own pass word, a cancel word and as many tokens as fit.  A death
 * among slots past them is seen at the next exit or at the sleep cap. */

static unsigned park_threshold(void);

void bakery__word_signal(uint32_t *word, uint32_t *sleepers)
{
	/* uatomic_add_return implies a full barrier before and after: the
	 * register change before the bump (store->store: a sleeper woken by
	 * it re-reads the change), the bump before the load of the sleeper
	 * count (store->load), pairing with the barrier between the
	 * sleeper's count increment and its re-read in bakery__await_any */
	(void)uatomic_add_return(word, 1);
	if (caa_unlikely(CMM_LOAD_SHARED(*sleepers)))
		bakery__futex_wake_all(word);
}

void bakery__reg_signal_entry(struct bakery_shm_reg *reg)
{
	/* uatomic_add_return implies a full barrier before and after: our
	 * reads of the tickets that let us in before the bump, and the bump
	 * before the load of the waiter count (store->load), pairing with
	 * the barrier between a parked waiter's count increment and its
	 * re-read of the tickets (holders_park): either it sees the tickets
	 * we saw leave, or we see its count, or its sleep sees the bump */
	(void)uatomic_add_return(&reg->seq, 1);
	if (caa_unlikely(CMM_LOAD_SHARED(reg->waiters)))
		bakery__futex_wake_all(&reg->seq);
}

/* Arm the tokens of AHEAD[0..n) into S, as many as it has room for.  A
 * token found dead is recovered (token_arm) and not slept on. */
static void tokens_arm(struct passage *p, const unsigned *ahead, unsigned n, struct watch *s)
{
	for (unsigned i = 0; i < n && watch_room(s) > 0; i++)
		watch_token(s, p->b, ahead[i], token_arm(p->b, ahead[i]));
}

/* The slots ahead and their pass watches.  FIRST[0..nfirst) is the first
 * sweep's list, WATCH[i] watches FIRST[i]; every later list is a subset
 * of it in the same order (a ticket read ahead of ours may only leave, and
 * the sweeps visit the slots in increasing order). */
struct any_line {
	const unsigned *ahead;     /* the last sweep's list, refreshed by cond */
	const unsigned *n;
	unsigned *first, nfirst;
	struct pass_watch *watch;  /* NULL: without memory we only do not pass */
};

/* Pass the waiters ahead whose turn came and was not taken for the grace;
 * any of them may be the one holding a place (a lock of k holders has no
 * single slot to wait on). */
static void consider_ahead(struct passage *p, const struct any_line *l)
{
	unsigned k = 0;

	if (!l->watch)
		return;
	for (unsigned i = 0; i < *l->n; i++) {
		while (k < l->nfirst && l->first[k] != l->ahead[i])
			k++;
		if (k == l->nfirst)
			return;
		bakery__pass_consider(p, l->ahead[i], &l->watch[k]);
	}
}

/* The sleep cap: shortened while any slot ahead is passable, so that we
 * wake to watch it (bakery__pass_sleep_cap). */
static long ahead_sleep_cap(struct passage *p, const struct any_line *l)
{
	long cap = SLEEP_CAP_NS;

	for (unsigned i = 0; i < *l->n; i++)
		cap = bakery__pass_sleep_cap(p, l->ahead[i], cap);
	return cap;
}

/* The words of one sleep: the lock-wide one (value ALSO), our pass word
 * once we are passable, the tokens ahead. */
static void any_words(struct passage *p, const struct any_line *l, uint32_t also,
                      struct watch *s)
{
	watch_word(s, p->also, also);
	watch_own_pass(s, p);
	tokens_arm(p, l->ahead, *l->n, s);
}

/* Next in line (at most k tickets ahead, all of which may be holders): one
 * sleep on the lock-wide word, which every exit, abort and pass bumps, and
 * on the tokens of those ahead.  True when cond holds. */
static bool any_sleep(struct passage *p, const struct any_line *l, await_fn cond, void *arg,
                      unsigned *naps)
{
	struct watch s;
	/* the word's value before the condition, as in await_common */
	uint32_t also = CMM_LOAD_SHARED(*p->also);
	bool holds;

	s.n = 0;
	consider_ahead(p, l);
	uatomic_inc(p->also_waiters);
	/* our sleeper count before our re-read of the tickets
	 * (store->load), pairing with bakery__word_signal */
	cmm_smp_mb();
	any_words(p, l, also, &s);
	holds = cond(p->b, p->lock, BAKERY_NO_SLOT, arg);
	if (!holds) {
		watch_sleep(&s, p->dl, ahead_sleep_cap(p, l), naps);
		CRASH_POINT("wait-woken");
		for (unsigned i = 0; i < *l->n; i++)
			death_pass_on(p->b, l->ahead[i]);
		holds = cond(p->b, p->lock, BAKERY_NO_SLOT, arg);
	}
	uatomic_dec(p->also_waiters);
	return holds;
}

/*
 * More than k tickets ahead: we cannot enter before all but k - 1 of them
 * have left.  One sleep on the line of the ticket whose leaving makes us
 * the next in line, the (k+1)-th latest ahead (p->pred2, noted by the
 * algorithm's count), so that the lock-wide word wakes only the next in
 * line and not the whole crowd on every exit.  Its exit or abort wakes us
 * during the turns of those ahead, as a waiter of a lock of one holder is
 * woken (bakery__park_behind_slow): the wake-ups of successive waiters
 * overlap instead of each waiting for the one before to be woken and to
 * enter.  If that ticket is a holder's, the line of our predecessor
 * p->pred too, whose entry (bakery__reg_signal_entry) says that at most k
 * are ahead of us: a holder that stays inside while the others pass it
 * must not make us sleep through a free unit.  (A waiter's entry bumps its
 * line too: that wakes us to watch the predecessor from then on.  Its
 * entry signal comes a few instructions before lock.c marks its stage
 * critical: a park that reads the line between the two sleeps behind it
 * alone, until its exit; slower, never stuck.)  The tokens (a death) and
 * our pass word too.  True when cond holds.
 */
static bool ticket_moved(struct bakery *b, unsigned lock, unsigned j, const uint64_t *seen);

static bool holders_park(struct passage *p, await_fn cond, void *arg, struct pass_watch *watch,
                         unsigned *naps)
{
	struct bakery *b = p->b;
	unsigned k = p->via->holders, next = p->pred2, pred = p->pred;
	struct bakery_shm_reg *rn = reg_of(b, p->lock, next), *rp = reg_of(b, p->lock, pred);
	uint64_t next_number = p->pred2_number;
	/* the futex values before the tickets are read, as in await_common */
	uint32_t seq_next = CMM_LOAD_SHARED(rn->seq), seq_pred = 0, tok_next, tok_pred = 0;
	bool inside, sleep;
	long cap;

	/* a waiter that does not take its turn is passed here too (then its
	 * ticket changed, and we do not sleep) */
	(void)bakery__pass_consider(p, next, watch);
	uatomic_inc(&rn->waiters);
	/* our waiter count before our reads of its stage and ticket
	 * (store->load), pairing with the barrier of its exit's store_mb();
	 * for an exit without one, the exiters' barrier (exitfence.h) */
	cmm_smp_mb();
	inside = CMM_LOAD_SHARED(rn->stage) == BAKERY_PASS_CRITICAL;
	if (inside) {
		seq_pred = CMM_LOAD_SHARED(rp->seq);
		uatomic_inc(&rp->waiters);
		/* the same before our count below, pairing with the barrier
		 * of the predecessor's entry signal */
		cmm_smp_mb();
	}
	cap = bakery__exit_fence_remote(b, &b->locks[p->lock], SLEEP_CAP_NS);
	tok_next = token_arm(b, next);
	if (inside)
		tok_pred = token_arm(b, pred);
	sleep = !ticket_moved(b, p->lock, next, &next_number);
	/* with a holder to sleep behind, count again: still more than k
	 * ahead, behind the same predecessor, which has not entered (else at
	 * most k would be ahead of us now) */
	if (sleep && inside)
		sleep = !cond(b, p->lock, BAKERY_NO_SLOT, arg) && p->crowd > k &&
		        p->pred2 == next && p->pred == pred;
	if (sleep) {
		struct watch s;

		s.n = 0;
		watch_word(&s, &rn->seq, seq_next);
		watch_token(&s, b, next, tok_next);
		if (inside) {
			watch_word(&s, &rp->seq, seq_pred);
			watch_token(&s, b, pred, tok_pred);
		}
		watch_own_pass(&s, p);
		watch_sleep(&s, p->dl,
		            bakery__pass_sleep_cap(p, next, tok_next ? cap : ORPHAN_POLL_NS), naps);
		CRASH_POINT("wait-woken");
		death_pass_on(b, next);
		if (inside)
			death_pass_on(b, pred);
	}
	if (inside)
		uatomic_dec(&rp->waiters);
	uatomic_dec(&rn->waiters);
	return cond(b, p->lock, BAKERY_NO_SLOT, arg);
}

static int await_any_sleeping(struct passage *p, struct any_line *l, await_fn cond, void *arg)
{
	struct bakery *b = p->b;
	struct pass_watch park_watch = { .started = false };
	unsigned naps = 0;

	for (;;) {
		bool holds;
		int err;

		if (region_lost(b))
			return region_lost_error(b);
		/* passed while we slept: as in await_common */
		if (bakery__pass_was_passed(p))
			return 0;
		if ((err = bakery__wait_over(p->dl)))
			return cond(b, p->lock, BAKERY_NO_SLOT, arg) ? 0 : err;
		if (p->crowd > p->via->holders && p->pred2 != BAKERY_NO_SLOT)
			holds = holders_park(p, cond, arg, &park_watch, &naps);
		else
			holds = any_sleep(p, l, cond, arg, &naps);
		if (holds)
			return 0;
	}
}

int bakery__await_any(struct passage *p, const unsigned *ahead, const unsigned *n,
                      await_fn cond, void *arg)
{
	struct bakery *b = p->b;
	struct any_line l = { ahead, n, NULL, 0, NULL };
	int err, spins;

	if (p->dl->mode == WAIT_NONE) {
		/* as busy_unless_gone: a dead holder ahead is no reason for EBUSY */
		if (cond(b, p->lock, BAKERY_NO_SLOT, arg))
			return 0;
		for (unsigned i = 0; i < *n; i++)
			death_pass_on(b, ahead[i]);
		return cond(b, p->lock, BAKERY_NO_SLOT, arg) ? 0 : EBUSY;
	}
	/* passed (in the doorway phase of bakery__holders_wait): as in
	 * await_common */
	if (caa_unlikely(bakery__pass_was_passed(p)))
		return 0;
	/* far back (2 x CPUs ahead, more than k): spinning on the whole line
	 * only takes the CPU those ahead need */
	spins = p->crowd < p->via->holders + park_threshold() ? SPIN_POLLS : 0;
	for (int i = 0; i < spins; i++) {
		if (cond(b, p->lock, BAKERY_NO_SLOT, arg))
			return 0;
		/* waiting for real: from now on we may be passed */
		bakery__pass_publish(p);
		caa_cpu_relax();
	}
	bakery__pass_publish(p);
	/* the first list and one watch per slot of it; without memory we
	 * only do not pass */
	l.nfirst = *n;
	l.first = malloc(sizeof(*l.first) * (l.nfirst ? l.nfirst : 1));
	l.watch = l.first ? calloc(l.nfirst ? l.nfirst : 1, sizeof(*l.watch)) : NULL;
	if (l.watch)
		memcpy(l.first, ahead, sizeof(*l.first) * l.nfirst);
	err = await_any_sleeping(p, &l, cond, arg);
	free(l.watch);
	free(l.first);
	return err;
}

/* ------------------------------------------------------------- parking -- */

/* The test build's BAKERY_TEST_PARK_AHEAD, or 0 if unset: a test of the
 * wake-ups needs parked waiters without a crowd of processes. */
static unsigned park_ahead_override(void)
{
#ifdef BAKERY_TESTING
	const char *s = getenv("BAKERY_TEST_PARK_AHEAD");

	if (s && *s)
		return (unsigned)strtoul(s, NULL, 10);
#endif
	return 0;
}

/* Tickets ahead from which a waiter of a k-holder lock does not spin before
 * it sleeps: twice the CPUs, so that most of those ahead are not running
 * and spinning on any of them is wasted (or the override). */
static unsigned park_threshold(void)
{
	unsigned n = park_ahead_override();

	return n ? n : 2 * online_cpus();
}

/* Tickets ahead from which a waiter of a lock of one holder parks behind its
 * predecessor instead of the one before it: never but in the test build
 * (the override), where it makes a line of sleepers each parked behind the
 * one before.  Far back in line, too, the one before the predecessor is
 * the one to wake behind: a release that woke a waiter yields its CPU
 * (lock.c), so the woken waiter runs and waits as the next in line while
 * the releaser stays out of the line.  (Parking far back behind the
 * predecessor, woken only when its turn had come, made every hand-over
 * with more threads than CPUs wait for a sleeper to be scheduled:
 * docs/performance.md.) */
static unsigned far_back_threshold(void)
{
	unsigned n = park_ahead_override();

	return n ? n : UINT_MAX;
}

/* The passage of slot J, whose ticket register our doorway read as SEEN,
 * moved on: its ticket changed (exit, abort, a new passage, a reset after
 * its death) or was left to a proxy (Jayanti). */
static bool ticket_moved(struct bakery *b, unsigned lock, unsigned j, const uint64_t *seen)
{
	struct bakery_shm_reg *r = reg_of(b, lock, j);

	return CMM_LOAD_SHARED(r->number) != *seen || CMM_LOAD_SHARED(r->proxy);
}

/* Sleep on slot J's line and token until its ticket moves from *SEEN (the
 * value our doorway read), its owner dies, we are passed or the deadline
 * comes: one sleep, unless a wake-up changed nothing. */
static int park_on(struct passage *p, unsigned j, const uint64_t *seen)
{
	struct bakery *b = p->b;
	struct pass_watch watch = { .started = false };
	struct bakery_shm_reg *r = reg_of(b, p->lock, j);
	unsigned naps = 0;

	bakery__pass_publish(p);                /* waiting for real */

	for (;;) {
		/* the futex value before the condition, as in await_common */
		uint32_t seq = CMM_LOAD_SHARED(r->seq), tok;
		bool moved;
		long cap;

		if (region_lost(b))
			return region_lost_error(b);
		if (bakery__pass_was_passed(p) || bakery__wait_over(p->dl))
			return 0;
		/* a slot that does not take its turn is passed here too:
		 * then its ticket changed, and the park ends */
		if (bakery__pass_consider(p, j, &watch))
			return 0;
		uatomic_inc(&r->waiters);
		/* our waiter count before our re-read of j's ticket
		 * (store->load), pairing with its exit's store_mb(), or for an
		 * exit without one, the exiters' barrier (exitfence.h) */
		cmm_smp_mb();
		cap = bakery__exit_fence_remote(b, &b->locks[p->lock], SLEEP_CAP_NS);
		tok = token_arm(b, j);
		moved = !tok || ticket_moved(b, p->lock, j, seen);
		if (!moved) {
			struct watch s;

			s.n = 0;
			watch_word(&s, &r->seq, seq);
			watch_token(&s, b, j, tok);
			watch_own_pass(&s, p);
			watch_sleep(&s, p->dl, bakery__pass_sleep_cap(p, j, cap), &naps);
			death_pass_on(b, j);
		}
		uatomic_dec(&r->waiters);
		/* One sleep: any change of the line ends it (the loop sorts out
		 * what changed); only a wake-up that changed nothing (a signal,
		 * the sleep cap) sleeps again. */
		if (moved || CMM_LOAD_SHARED(r->seq) != seq ||
		    ticket_moved(b, p->lock, j, seen) ||
		    CMM_LOAD_SHARED(*slot_token_word(b, j)) != tok)
			return 0;
	}
}

int bakery__park_behind_slow(struct passage *p)
{
	int err;

	if (p->dl->mode == WAIT_NONE)
		return 0;
	if (p->crowd >= far_back_threshold())
		return park_on(p, p->pred, &p->pred_number);
	if (p->pred2 == BAKERY_NO_SLOT)
		return 0;
	/* two or more ahead: wait for the one before our predecessor to
	 * leave, so that we are next in line when we wake; the wake-up takes
	 * place during the predecessor's turn, not after it */
	err = park_on(p, p->pred2, &p->pred2_number);
	/* next in line, as far as we know: the loop spins on the
	 * predecessor for about a wake-up before it sleeps (await_spin) */
	p->crowd = 1;
	return err;
}
