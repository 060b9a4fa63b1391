/*
 * bug-robust-list.c - REPRODUCER, an expected failure until the library is
 * fixed (tests/hostile/local.mk lists it in XFAIL_TESTS).
 *
 * A slot's liveness token is a robust mutex in the region, and while a
 * thread holds it, glibc links it into that thread's robust list through
 * the mutex's own `__list.__next` / `__list.__prev` words, in the region.
 * Unlocking it (bakery_close, thread exit) unlinks it with
 *     next->__prev = mutex->__list.__prev;  prev->__next = mutex->__list.__next;
 * using those two words as they are.  Anyone who can write the region can
 * therefore make a holder's process store a value of their choice at an
 * address of their choice: here the words point nowhere and the victim
 * dies of SIGSEGV in bakery_close.  With mode 0660 regions shared between
 * users, that is one user writing into another user's process.
 *
 * The contract (bakery.h, Caveats) says a hostile participant "cannot make
 * the library read or write outside the mapping"; with glibc's robust
 * mutexes in shared memory it can.  Checks before the unlock do not help (a
 * writer can change the words after the check).  The fix is a liveness
 * token the participants cannot write: an OFD lock (F_OFD_SETLK) on a byte
 * of the shm object per slot, taken through a descriptor of the owning
 * thread (opened per thread, closed by the thread-exit destructor, released
 * by the kernel when the process dies), which DESIGN part B lists as the
 * alternative; or else to narrow the promise in the Caveats: every
 * participant must be trusted with every other participant's memory.
 *
 * Exit status: 0 if the victim closes its region normally, 1 if not.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

struct stage {
	char region[H_NAME_SIZE];
	struct h_gate ready, go;
};

/* Owns a slot (token held), then closes the region when told to. */
static int victim(void *arg)
{
	struct stage *st = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(st->region, 0, NULL, &b) || bakery_lock_open(b, "r", 0, &l) ||
	    bakery_lock(l) || bakery_unlock(l) || bakery_lock_close(l))
		return 10;
	h_gate_open(&st->ready);
	if (!h_gate_wait(&st->go, 30))
		return 11;
	return bakery_close(b) ? 12 : 0;
}

int main(void)
{
	struct stage *st = h_shared(sizeof(*st));
	bakery_t *b = h_region(st->region, "rlist", 4, 2);
	struct raw raw;
	pid_t pid;
	int st_exit;

	bakery_close(b);
	h_gate_init(&st->ready);
	h_gate_init(&st->go);
	pid = h_fork(victim, st);
	if (!h_gate_wait(&st->ready, 10)) {
		printf("setup failed\n");
		return 1;
	}
	raw_map(&raw, st->region);
	/* the victim's token: slot 0 of a fresh region */
	raw.slots[0].token.__data.__list.__next = (void *)(uintptr_t)0x10;
	raw.slots[0].token.__data.__list.__prev = (void *)(uintptr_t)0x10;
	h_gate_open(&st->go);
	st_exit = h_reap(pid, 10);
	raw_unmap(&raw);
	if (st_exit == 0) {
		printf("ok:   victim closed its region after its token's list links were rewritten\n");
		return 0;
	}
	printf("BUG:  victim's bakery_close after its token's list links were rewritten: %s %d\n",
	       st_exit > 128 ? "signal" : "status", st_exit > 128 ? st_exit - 128 : st_exit);
	return 1;
}
