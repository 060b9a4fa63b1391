/* SPDX-License-Identifier: MIT */
/*
 * guard.c - surviving a region that another process cut short.
 *
 * The fault: a region is a MAP_SHARED mapping of a POSIX shm object.  Any
 * process allowed to open the object may ftruncate() it to a smaller size;
 * every access to a page of our mapping past the new end then raises SIGBUS,
 * whose default action kills the process.  A careless or hostile peer could
 * thereby kill every participant.
 *
 * Why a signal handler is the only remedy: the object cannot be sealed
 * against shrinking (F_SEAL_SHRINK exists only for memfd, and the regions
 * must have names that unrelated processes open), and checking the size with
 * fstat() before each access would cost a system call on every lock passage
 * and still race with a truncation that comes right after it.  So the
 * library lets the fault happen and answers it: the handler maps private
 * zero-filled pages over the whole watched range (the faulting access is
 * retried and reads zeros instead of killing the process), and sets the
 * caller's `lost` word to the error every later call answers.
 *
 * The same SIGBUS comes from a page the file system cannot allocate: a
 * full /dev/shm (tmpfs) under a region whose pages were not all reserved
 * (made by an older version, or where fallocate does not work, or a
 * read-only mapping's read of a page never written).  That is no damage,
 * and must not read as such: the handler looks at the object's size
 * (fstat, async-signal-safe).  Smaller than the range needs: it was cut
 * short, BAKERY_EBADREGION.  Still whole: the page could not be had,
 * ENOSPC.
 *
 * What it costs the application: a process-wide SIGBUS handler, installed
 * once by the first bakery__guard_add() with SA_SIGINFO | SA_ONSTACK | SA_RESTART.
 * The handler found there before is kept and every SIGBUS outside our
 * ranges is passed to it (with its signal mask); where there was none
 * (SIG_DFL or SIG_IGN) the signal gets what the kernel would have done: a
 * fault kills the process, a SIGBUS sent with kill() kills it or is ignored
 * as before.  An application that later installs its own SIGBUS handler
 * without chaining to ours gets the old behaviour back: a truncated region
 * kills it.
 *
 * The handler takes no lock and allocates nothing.  The watched ranges are
 * nodes of a singly linked list that only grows: a node is never freed, a
 * removed one is kept on a spare list for the next bakery__guard_add().  Changes
 * happen under a mutex; each node is a small seqlock the handler reads
 * without waiting, skipping a node caught mid-change (a range is watched
 * only between the return of its bakery__guard_add() and the call of its
 * bakery__guard_remove(), and the caller touches it only in between).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "guard.h"

/*
 * A watched range.  Publishing hi last (hi = 0 to retire, then lo and lost,
 * then hi) would keep a half-written node from matching, but not a node
 * reused while the handler reads it: the handler could pair the old hi with
 * the new lo and cover, with its zero pages, memory between two ranges.
 * Hence a sequence number around every rewrite (a seqlock whose reader never
 * waits: a node caught mid-rewrite is one being added or removed, which the
 * faulting access cannot be using).
 */
struct guard {
	/* Odd while the fields below are being rewritten; the handler trusts
	 * them only if it reads the same even value before and after. */
	unsigned long seq;
	uintptr_t lo, hi;          /* [lo, hi) watched; hi == 0: not in use */
	int fd;                    /* the object mapped there, or -1       */
	uint64_t end;              /* its size when the range is all there */
	int *lost;
	struct guard *next;        /* the list: written once, before publication */
	struct guard *next_spare;  /* spare nodes: guards_lock */
};

/* A consistent copy of a node, taken by the handler. */
struct range {
	uintptr_t lo, hi;
	int fd;
	uint64_t end;
	int *lost;
};

static struct guard *guards;          /* head: read by the handler, lock-free */
static struct guard *spares;          /* guards_lock */
static pthread_mutex_t guards_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_rc;                /* the once-routine's errno, or 0 */
static struct sigaction prev_action;  /* SIGBUS's action before ours */

/* ------------------------------------------------------ the seqlock -- */

static void node_write(struct guard *g, const struct range *r)
{
	/* odd whatever seq was, even after a rewrite cut short */
	unsigned long begin = (CMM_LOAD_SHARED(g->seq) + 1) | 1;

	CMM_STORE_SHARED(g->seq, begin);
	/* The odd seq before any field: a handler that reads a new field
	 * then reads seq again and finds it changed. */
	cmm_smp_wmb();
	CMM_STORE_SHARED(g->lo, r->lo);
	CMM_STORE_SHARED(g->fd, r->fd);
	CMM_STORE_SHARED(g->end, r->end);
	CMM_STORE_SHARED(g->lost, r->lost);
	CMM_STORE_SHARED(g->hi, r->hi);
	/* Every field before the even seq: a handler that reads the final
	 * seq first reads the final fields after it. */
	cmm_smp_wmb();
	CMM_STORE_SHARED(g->seq, begin + 1);
}

/* Copy G into R if it is in use and not being rewritten. */
static bool node_read(const struct guard *g, struct range *r)
{
	unsigned long seq = CMM_LOAD_SHARED(g->seq);

	if (seq & 1)
		return false;
	/* The first seq load before the field loads: the fields read are at
	 * least as new as that seq. */
	cmm_smp_rmb();
	r->lo = CMM_LOAD_SHARED(g->lo);
	r->hi = CMM_LOAD_SHARED(g->hi);
	r->fd = CMM_LOAD_SHARED(g->fd);
	r->end = CMM_LOAD_SHARED(g->end);
	r->lost = CMM_LOAD_SHARED(g->lost);
	/* The field loads before the second seq load: if any field came from
	 * a rewrite, the second load sees its odd (or a later) seq. */
	cmm_smp_rmb();
	return CMM_LOAD_SHARED(g->seq) == seq && r->hi != 0;
}

/* ------------------------------------------------------- the handler -- */

/* The watched range holding ADDR, if any.  Async-signal-safe. */
static bool guard_find(uintptr_t addr, struct range *r)
{
	struct guard *g = CMM_LOAD_SHARED(guards);

	/* The head load before the loads through it (node contents were
	 * published before the head: guard_push). */
	cmm_smp_read_barrier_depends();
	for (; g; g = g->next) {           /* next never changes once published */
		if (node_read(g, r) && addr >= r->lo && addr < r->hi)
			return true;
	}
	return false;
}

/*
 * What a fault at INFO in R means: the object cut short (smaller than the
 * range needs), or, while it is still whole, a page the file system could
 * not allocate (a memory error is damage too).  fstat() is on POSIX's list
 * of async-signal-safe functions.
 */
static int fault_error(const siginfo_t *info, const struct range *r)
{
	struct stat st;

	if (info->si_code == BUS_ADRERR && r->fd >= 0 && fstat(r->fd, &st) == 0 &&
	    (uint64_t)st.st_size >= r->end)
		return ENOSPC;
	return BAKERY_EBADREGION;
}

/*
 * A fault in a watched range: zero pages over the whole range, then the
 * error in the lost word.  mmap is not on POSIX's list of async-signal-safe functions, but on
 * Linux it is a bare system call that takes no lock of the C library.
 * False if INFO is not such a fault or the range could not be replaced.
 */
static bool guard_fault(const siginfo_t *info)
{
	struct range r;
	void *p;
	int err;

	if (info->si_code <= 0)           /* kill(), sigqueue(), raise() */
		return false;
	if (!guard_find((uintptr_t)info->si_addr, &r))
		return false;
	err = fault_error(info, &r);      /* before the object's pages go */
	p = mmap((void *)r.lo, r.hi - r.lo, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		return false;             /* the access would fault forever */
	/* No barrier: the system call orders the new pages before the word. */
	CMM_STORE_SHARED(*r.lost, err);
	return true;
}

/* Does SIGBUS with INFO come back by itself if we just return? */
static bool refaults(const siginfo_t *info)
{
#ifdef BUS_MCEERR_AO
	if (info->si_code == BUS_MCEERR_AO)   /* memory error, nothing retried */
		return false;
#endif
	return info->si_code > 0;
}

/*
 * What the process did without us.  SIG_DFL: the default action, restored
 * first; a fault re-executes the access and dies of it, a sent signal (or
 * one that does not come back) is raised again and delivered when this
 * handler returns.  SIG_IGN: a sent signal stays ignored; a fault cannot be
 * ignored (the kernel forces the default action), so it dies as above.
 */
static void default_action(int sig, const siginfo_t *info)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	if (prev_action.sa_handler == SIG_IGN && info->si_code <= 0)
		return;
	sigaction(sig, &dfl, NULL);
	if (!refaults(info))
		raise(sig);             /* pending until this handler returns */
}

/* Call the previous handler with the mask it asked for. */
static void chain(int sig, siginfo_t *info, void *ctx)
{
	sigset_t mask;

	if (prev_action.sa_handler == SIG_DFL || prev_action.sa_handler == SIG_IGN) {
		default_action(sig, info);
		return;
	}
	pthread_sigmask(SIG_BLOCK, &prev_action.sa_mask, &mask);
	if (prev_action.sa_flags & SA_SIGINFO)
		prev_action.sa_sigaction(sig, info, ctx);
	else
		prev_action.sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

static void guard_handler(int sig, siginfo_t *info, void *ctx)
{
	int saved = errno;

	if (!guard_fault(info))
		chain(sig, info, ctx);
	errno = saved;
}

/* ------------------------------------------------------ installation -- */

static void atfork_prepare(void) { pthread_mutex_lock(&guards_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&guards_lock); }

/* The child keeps the handler and the list (it inherits the mappings too);
 * only the mutex, held by the forking thread, needs a fresh start. */
static void atfork_child(void)
{
	pthread_mutex_init(&guards_lock, NULL);
}

static bool same_action(const struct sigaction *a, const struct sigaction *b)
{
	return a->sa_handler == b->sa_handler && a->sa_flags == b->sa_flags;
}

/*
 * The previous action is read before ours goes in: sigaction() hands back
 * the old one only after the switch, and a SIGBUS in another thread meanwhile
 * would find prev_action empty.  If another thread changed the action in
 * between (a race the application cannot order anyway), chain to the one we
 * really replaced.
 */
static void handler_install(void)
{
	struct sigaction replaced, ours = {
		.sa_sigaction = guard_handler,
		.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART,   /* not SA_NODEFER */
	};

	sigemptyset(&ours.sa_mask);
	install_rc = pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (install_rc)
		return;
	if (sigaction(SIGBUS, NULL, &prev_action) != 0 ||
	    sigaction(SIGBUS, &ours, &replaced) != 0) {
		install_rc = errno;
		return;
	}
	if (!same_action(&replaced, &prev_action))
		prev_action = replaced;
}

/* ------------------------------------------------------------- nodes -- */

/* Make the new node G reachable by the handler. */
static void guard_push(struct guard *g)
{
	g->next = guards;
	/* The node's contents (zeros: matches nothing) and its next pointer
	 * before the head that leads to it. */
	cmm_smp_wmb();
	CMM_STORE_SHARED(guards, g);
}

/* A node out of use: a spare, or a new one put on the list.  guards_lock
 * held. */
static struct guard *node_get(void)
{
	struct guard *g = spares;

	if (g) {
		spares = g->next_spare;
		return g;
	}
	g = calloc(1, sizeof(*g));
	if (g)
		guard_push(g);
	return g;
}

int bakery__guard_add(void *base, size_t len, int fd, uint64_t end, int *lost,
                      struct guard **out)
{
	const struct range r = {
		.lo = (uintptr_t)base, .hi = (uintptr_t)base + len, .fd = fd, .end = end,
		.lost = lost,
	};
	struct guard *g;

	pthread_once(&install_once, handler_install);
	if (install_rc)
		return install_rc;
	pthread_mutex_lock(&guards_lock);
	g = node_get();
	if (g)
		node_write(g, &r);
	pthread_mutex_unlock(&guards_lock);
	*out = g;
	return g ? 0 : ENOMEM;
}

void bakery__guard_remove(struct guard *g)
{
	if (!g)
		return;
	const struct range none = { .fd = -1 };

	pthread_mutex_lock(&guards_lock);
	node_write(g, &none);
	g->next_spare = spares;
	spares = g;
	pthread_mutex_unlock(&guards_lock);
}
