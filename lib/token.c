/* SPDX-License-Identifier: MIT */
/*
 * token.c - liveness tokens: robust futex words whose list node no other
 * process can write.
 *
 * The kernel's robust-futex protocol (Documentation/locking/robust-futex-ABI):
 * a thread registers one list head (glibc does it at thread start); each
 * futex word the thread holds is linked into that list through a node that
 * lies `futex_offset` bytes from the word; when the thread ends, the kernel
 * walks the list and marks every word still holding the thread's TID
 * FUTEX_OWNER_DIED, waking one waiter.  glibc's robust mutexes keep the node
 * inside the mutex, next to the word - for a mutex in shared memory, where
 * any participant can rewrite it, and glibc's own unlock then writes through
 * whatever pointers it finds there.
 *
 * Here the word is shared but the node is not.  The region keeps each token
 * word in the last bytes of a page (TOKEN_TAIL), so its node, futex_offset
 * bytes further, falls on the following page.  A thread that takes a token
 * maps a two-page window: the word's page of the region (shared), then a
 * private anonymous page that holds the node.  Nothing this process or the
 * kernel follows as a pointer is ever read from shared memory; a participant
 * that scribbles over a token word can lie about who holds it (deny service),
 * never make another process write outside its own memory.
 *
 * The node joins glibc's list as glibc links its own mutexes (a doubly linked
 * list on 64-bit: a `prev` pointer just before each node), so glibc can keep
 * locking and unlocking robust mutexes around ours; list_op_pending covers
 * the instants between taking the word and linking the node, and between
 * unlinking it and freeing the word, as the ABI prescribes.
 *
 * The word's TID is its holder's as the holder's own PID namespace numbers
 * it: from another namespace it names nobody, or somebody else.  Nothing
 * is ever concluded from it but one thing, and only where the holder
 * itself recorded that its namespace is ours (the token's line, layout 6):
 * a word that names a thread of our namespace that does not exist, and
 * that the kernel never marked, was forged (bakery__token_holder_missing).
 * Or, in any namespace, one whose TID no kernel hands out: above
 * PID_MAX_LIMIT, the ceiling of every namespace's pid_max.
 * A death needs no TID at all: the kernel marks the word.
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "futex.h"
#include "guard.h"
#include "token.h"

/* glibc links a node by the address of its `next`, with the node's `prev`
 * one pointer before it. */
static inline struct robust_list **prev_slot(struct robust_list *node)
{
	return (struct robust_list **)((char *)node - sizeof(void *));
}

/* Bit 0 of a list pointer marks a priority-inheritance mutex (glibc). */
static inline struct robust_list *untag(struct robust_list *p)
{
	return (struct robust_list *)((uintptr_t)p & ~(uintptr_t)1);
}

/* ----------------------------------------------------- the thread's list -- */

static __thread struct robust_list_head *tls_head;

/* The list head the kernel walks when this thread ends (glibc's). */
static struct robust_list_head *robust_head(void)
{
	struct robust_list_head *head = tls_head;
	size_t len;

	if (caa_likely(head))
		return head;
	if (syscall(SYS_get_robust_list, 0, &head, &len) != 0 || !head ||
	    len != sizeof(*head))
		return NULL;
	tls_head = head;
	return head;
}

/*
 * The kernel forgets a process's robust lists at fork, and the C library
 * registers the child's again; where that is refused (a seccomp profile
 * that denies set_robust_list) the child has none, and a head noted before
 * the fork would link tokens into a list the kernel never walks: the
 * child's death would go unseen, its locks held for ever.  Asked again, the
 * kernel says: no list, ENOTSUP (one system call in every fork child that
 * takes a token).
 */
void bakery__token_list_forget(void)
{
	tls_head = NULL;
}

int bakery__token_abi_check(uint32_t page_size)
{
	struct robust_list_head *head = robust_head();
	long reach;

	/* (the page size itself was compared with ours by header_validate) */
	if (sizeof(void *) != 8 || !head)
		return ENOTSUP;
	/* the word's node and the prev pointer before it must both fall on
	 * the private page that follows the word's */
	reach = -head->futex_offset;
	if (reach < (long)(TOKEN_TAIL + sizeof(void *)) || reach >= (long)page_size)
		return ENOTSUP;
	return 0;
}

static struct robust_list *node_of(const struct robust_list_head *head, uint32_t *word)
{
	return (struct robust_list *)((char *)word - head->futex_offset);
}

/* Link NODE first in the thread's list, as glibc links its mutexes. */
static void list_push(struct robust_list_head *head, struct robust_list *node)
{
	struct robust_list *first = head->list.next;

	*prev_slot(node) = &head->list;
	node->next = first;
	/* the list's end is the head itself, whose prev slot glibc keeps
	 * just before it, like a node's */
	*prev_slot(untag(first)) = node;
	/* the node is whole before the kernel can reach it: only our own
	 * thread (or the kernel on its behalf) reads the list, so program
	 * order is all that is needed */
	cmm_barrier();
	head->list.next = node;
}

static void list_unlink(struct robust_list *node)
{
	struct robust_list *next = node->next, *prev = *prev_slot(node);

	*prev_slot(untag(next)) = prev;
	untag(prev)->next = next;
}

/* ---------------------------------------------------------- the window -- */

/*
 * A window given back is kept (up to TOKEN_SPARE_WINDOWS per mapping) for
 * the next take: one that still shows the token's page serves again as it
 * is (the table's token, taken for every lock made or removed, costs no
 * system call then); re-pointing another at a new token page is one
 * mmap(MAP_FIXED), where a new window costs two, an munmap and a page fault
 * for the node's page.  A spare's node page holds a stale node that is off
 * every list; list_push() rewrites both its links before linking it.
 */
static unsigned char *spare_get(struct bakery *b, uint64_t page_off, bool *shows)
{
	unsigned char *win = NULL;
	unsigned i;

	pthread_mutex_lock(&b->spare_lock);
	for (i = 0; i < b->nspare && b->spare_off[i] != page_off; i++)
		;
	*shows = i < b->nspare;
	if (b->nspare) {
		if (!*shows)
			i = b->nspare - 1;
		win = b->spare_win[i];
		b->nspare--;
		b->spare_win[i] = b->spare_win[b->nspare];
		b->spare_off[i] = b->spare_off[b->nspare];
	}
	pthread_mutex_unlock(&b->spare_lock);
	return win;
}

static bool spare_put(struct bakery *b, unsigned char *win, uint64_t page_off)
{
	bool kept = false;

	pthread_mutex_lock(&b->spare_lock);
	if (b->nspare < TOKEN_SPARE_WINDOWS) {
		b->spare_win[b->nspare] = win;
		b->spare_off[b->nspare++] = page_off;
		kept = true;
	}
	pthread_mutex_unlock(&b->spare_lock);
	return kept;
}

void bakery__token_spares_free(struct bakery *b)
{
	while (b->nspare)
		munmap(b->spare_win[--b->nspare], 2 * (size_t)b->page_size);
}

static int window_open(struct bakery *b, unsigned i, struct token_hold *h)
{
	uint64_t off = token_offset(b->tokens_off, b->page_size, i);
	size_t page = b->page_size;
	uint64_t page_off = off / page * page;
	bool shows;
	unsigned char *win = spare_get(b, page_off, &shows);
	int err;

	if (!win)
		win = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		           -1, 0);
	if (win == MAP_FAILED)
		return errno;
	if (!shows && mmap(win, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, b->fd,
	                   (off_t)page_off) == MAP_FAILED) {
		err = errno;
		munmap(win, 2 * page);
		return err;
	}
	err = bakery__guard_add(win, page, b->fd, page_off + page, &b->lost, &h->guard);
	if (err) {
		munmap(win, 2 * page);
		return err;
	}
	h->b = b;
	h->win = win;
	h->page_off = page_off;
	h->word = (uint32_t *)(win + (off - page_off));
	return 0;
}

static void window_close(struct token_hold *h, bool keep)
{
	bakery__guard_remove(h->guard);
	if (!keep || !spare_put(h->b, h->win, h->page_off))
		munmap(h->win, 2 * (size_t)h->b->page_size);
	h->win = NULL;
	h->word = NULL;
	h->guard = NULL;
}

/* -------------------------------------------------------- who holds it -- */

/* A PID namespace: the device and inode of its /proc/self/ns/pid. */
struct pidns {
	uint64_t dev, ino;
};

/* This process's, read once: (0, 0) where /proc cannot say.  A child
 * forked after its parent entered a new PID namespace is in that one, so
 * the values are kept with the PID of the process they belong to. */
static pid_t pidns_pid;
static struct pidns pidns_cached;

static struct pidns pidns_self(void)
{
	pid_t pid = getpid();
	struct pidns ns = { 0, 0 };
	struct stat st;

	if (uatomic_read(&pidns_pid) == pid) {
		/* the PID before the values it vouches for (load->load;
		 * pairs with the write barrier below) */
		cmm_smp_rmb();
		ns.dev = CMM_LOAD_SHARED(pidns_cached.dev);
		ns.ino = CMM_LOAD_SHARED(pidns_cached.ino);
		return ns;
	}
	if (stat("/proc/self/ns/pid", &st) == 0)
		ns = (struct pidns){ (uint64_t)st.st_dev, (uint64_t)st.st_ino };
	/* (threads racing here store the same values) */
	CMM_STORE_SHARED(pidns_cached.dev, ns.dev);
	CMM_STORE_SHARED(pidns_cached.ino, ns.ino);
	/* the values before the PID that publishes them (store->store) */
	cmm_smp_wmb();
	uatomic_set(&pidns_pid, pid);
	return ns;
}

/* We took token I: say who we are on its line. */
static void holder_sign(struct bakery *b, unsigned i, uint32_t tid)
{
	struct bakery_shm_token_line *line = token_line(b, i);
	struct pidns ns = pidns_self();

	CMM_STORE_SHARED(line->holder_pidns_dev, ns.dev);
	CMM_STORE_SHARED(line->holder_pidns_ino, ns.ino);
	/* the namespace before the TID that it goes with (store->store;
	 * pairs with the read barriers in holder_is_ours) */
	cmm_smp_wmb();
	CMM_STORE_SHARED(line->holder_tid, tid);
}

/* Does token I's line say that TID, its holder, is a thread of our PID
 * namespace? */
static bool holder_is_ours(struct bakery *b, unsigned i, uint32_t tid)
{
	const struct bakery_shm_token_line *line = token_line(b, i);
	struct pidns ours = pidns_self();
	bool same;

	if (!ours.ino || CMM_LOAD_SHARED(line->holder_tid) != tid)
		return false;
	/* the TID before the namespace, and the namespace before the TID
	 * again (load->load; pairs with holder_sign's write barrier): a
	 * record being rewritten does not pass */
	cmm_smp_rmb();
	same = CMM_LOAD_SHARED(line->holder_pidns_dev) == ours.dev &&
	       CMM_LOAD_SHARED(line->holder_pidns_ino) == ours.ino;
	cmm_smp_rmb();
	return same && CMM_LOAD_SHARED(line->holder_tid) == tid;
}

/* The kernel's PID_MAX_LIMIT on 64-bit (<linux/threads.h>, not a UAPI
 * header): no namespace's pid_max may exceed it, so no thread anywhere has
 * this TID or a higher one. */
#define TID_IMPOSSIBLE (4u * 1024u * 1024u)

bool bakery__token_holder_missing(struct bakery *b, unsigned i)
{
	uint32_t *word = token_word(b, i);
	uint32_t v = CMM_LOAD_SHARED(*word), tid = token_tid(v);

	if (!token_held_live(v))
		return false;
	/* a holder no kernel could have written: forged in any namespace,
	 * without waiting for a record of ours */
	if (tid >= TID_IMPOSSIBLE)
		return true;
	if (!holder_is_ours(b, i, tid))
		return false;
	/* EPERM: it exists (another user's) */
	if (kill((pid_t)tid, 0) == 0 || errno != ESRCH)
		return false;
	/* Still the same word?  A holder that ended had it marked by the
	 * kernel (exit_robust_list) before its TID was free: a word that
	 * names a thread gone and was never marked is forged.  (The kill is
	 * a system call: our load of the word is not moved before it.) */
	return CMM_LOAD_SHARED(*word) == v;
}

/* ---------------------------------------------------------------- take -- */

/* CAS the word to TID (keeping FUTEX_WAITERS): 0, EOWNERDEAD or EBUSY. */
static int word_take(uint32_t *word, uint32_t tid)
{
	uint32_t v = uatomic_read(word);

	for (;;) {
		uint32_t seen;

		if (token_held_live(v))
			return EBUSY;
		seen = uatomic_cmpxchg(word, v, token_has_waiters(v) ? token_with_waiters(tid) : tid);
		if (seen == v)
			return token_owner_died(v) ? EOWNERDEAD : 0;
		v = seen;
	}
}

int bakery__token_try(struct bakery *b, unsigned i, struct token_hold *h)
{
	struct robust_list_head *head = robust_head();
	struct robust_list *node;
	uint32_t tid;
	int r;

	/* a live holder: answered without mapping anything */
	if (token_held_live(CMM_LOAD_SHARED(*token_word(b, i))))
		return EBUSY;
	if (!head)
		return ENOTSUP;
	r = window_open(b, i, h);
	if (r)
		return r;
	node = node_of(head, h->word);
	/* if we die once the word is ours but before the node is linked,
	 * the kernel still finds it here */
	head->list_op_pending = node;
	cmm_barrier();
	tid = token_tid((uint32_t)syscall(SYS_gettid));
	r = word_take(h->word, tid);
	if (r != EBUSY) {
		CRASH_POINT("token-taken");
		list_push(head, node);
	}
	cmm_barrier();  /* linked before the pending entry is cleared */
	head->list_op_pending = NULL;
	if (r == EBUSY) {
		window_close(h, true);
		return r;
	}
	h->index = i;
	holder_sign(b, i, tid);
	return r;
}

/* Ask for a wake-up when the holder of WORD gives it back or dies, and
 * sleep until then or UNTIL on CLOCK.  Returns without sleeping if it
 * changed. */
static void word_sleep(uint32_t *word, clockid_t clock, const struct timespec *until)
{
	uint32_t v = uatomic_read(word);
	struct futex_word w;

	if (!token_held_live(v))
		return;
	if (!token_has_waiters(v) &&
	    uatomic_cmpxchg(word, v, token_with_waiters(v)) != v)
		return;
	w = futex_word(word, token_with_waiters(v));
	bakery__futex_sleep(&w, 1, clock, until, NULL);
}

int bakery__token_wait(struct bakery *b, unsigned i, struct token_hold *h, clockid_t clock,
                       const struct timespec *until)
{
	for (;;) {
		struct timespec now;
		int r = bakery__token_try(b, i, h);

		if (r != EBUSY)
			return r;
		clock_gettime(clock, &now);
		if (ts_cmp(&now, until) >= 0)
			return ETIMEDOUT;
		if (region_lost(b))
			return region_lost_error(b);
		word_sleep(token_word(b, i), clock, until);
	}
}

/* ---------------------------------------------------------------- give -- */

static void token_release(struct token_hold *h, uint32_t to)
{
	struct robust_list_head *head = robust_head();
	struct robust_list *node = node_of(head, h->word);
	uint32_t old;

	/* no holder to name any more: the TID goes before the word (only
	 * the holder writes the line; a reader that still sees the TID also
	 * sees the word held, or not, and decides on the word) */
	CMM_STORE_SHARED(token_line(h->b, h->index)->holder_tid, 0);
	/* unlinked but not yet freed: if we die in between, the kernel
	 * still marks the word */
	head->list_op_pending = node;
	cmm_barrier();
	list_unlink(node);
	CRASH_POINT("token-unlinked");
	old = uatomic_xchg(h->word, to);
	if (token_has_waiters(old))
		bakery__futex_wake_all(h->word);
	cmm_barrier();  /* the word freed before the pending entry is cleared */
	head->list_op_pending = NULL;
	window_close(h, true);
}

void bakery__token_give(struct token_hold *h)
{
	token_release(h, 0);
}

void bakery__token_abandon(struct token_hold *h)
{
	token_release(h, FUTEX_OWNER_DIED);
}

void bakery__token_forget(struct token_hold *h)
{
	if (h->win)
		window_close(h, false);
}
