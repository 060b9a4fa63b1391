/* SPDX-License-Identifier: MIT */
/*
 * bakery.h - fair, crash-proof mutual exclusion between unrelated processes.
 *
 * libbakery keeps named locks in a POSIX shared-memory object ("region") that
 * any process may map by name.  Each thread that takes part in a lock owns a
 * "slot" of the region's registry; the locks are the Lamport Bakery family of
 * algorithms, selectable per lock.  When a participant dies, survivors prove
 * the death with a kernel-attested token (a robust futex word held by the
 * slot's owner thread), clear the dead slot's registers and carry on; the next
 * acquirer of a lock whose holder died is told EOWNERDEAD.
 *
 * Conventions
 *   - Every function returns 0 on success or an error number: a positive errno
 *     value, or a negative BAKERY_E* value from a reserved block.  errno is
 *     never the channel (it may be changed as a side effect).
 *   - Handles (bakery_t, bakery_lock_t) may be shared by all threads of a
 *     process.  Lock ownership is per thread, as with a pthread mutex.
 *   - Nothing here is async-signal-safe, but bakery_cancel().
 *
 * Memory ordering
 *   A successful bakery_lock()/bakery_trylock()/bakery_timedlock()/
 *   bakery_clocklock() (and the rdlock family, and bakery_acquire()) is an
 *   acquire operation and bakery_unlock() a release operation: every load
 *   and store the previous holder made inside its critical section, in any
 *   process, happens-before every access the next holder makes in its own.
 *   (Readers inside together, and the holders of a k-holder lock, are not
 *   ordered with each other.)
 *   No other call orders the caller's memory.
 *
 * Which calls may run concurrently
 *   bakery_open, bakery_unlink, bakery_lock_open, bakery_recover and the
 *   introspection calls: with anything, from any thread or process.
 *   bakery_lock family: with each other, on the same or different handles.
 *   bakery_lock_close / bakery_close: only once no other thread of the process
 *   uses that handle any more (as with free()).
 *
 * Caveats
 *   - fork(): the child may keep using inherited handles; its threads take
 *     fresh slots.  A lock the parent held at fork time is NOT held by the
 *     child (the child's unlock of it returns EPERM).
 *   - Signals: a signal handler that interrupts a waiting call runs and the
 *     wait resumes in place (the place in line is kept), except in
 *     bakery_acquire with BAKERY_ACQUIRE_INTR, which gives up with EINTR
 *     (or asks its callback).  Do not call libbakery from a signal handler,
 *     but bakery_cancel() (which ends a bakery_acquire's wait).
 *   - exec() drops the process's slots like an exit does (the kernel releases
 *     the liveness tokens).
 *   - pthread_cancel(): the calls run with cancellation disabled; a
 *     cancellation requested meanwhile acts at the thread's next
 *     cancellation point after the call (waiting for a lock is none, as
 *     for pthread_mutex_lock).  dlclose() leaves the library loaded (it
 *     is linked NODELETE: thread-exit and SIGBUS handlers point into it).
 *   - The kernel walks at most 2048 robust-list entries of a dying thread:
 *     a thread takes part in at most BAKERY_MAX_THREAD_REGIONS regions at
 *     once (its first lock call in one more returns BAKERY_EREGIONS, not a
 *     descriptor limit: RLIMIT_NOFILE does not change it), so that its
 *     death is always proven.
 *   - A thread that exits while holding a lock is a dead owner: the next
 *     acquirer gets EOWNERDEAD.  A thread that exits normally gives back its
 *     slots.
 *   - One host only: the region is shared memory.  Past one machine use a
 *     lease-based lock on a coordination service (etcd, ZooKeeper).
 *   - Trust: every participant can write the whole region.  A hostile or
 *     buggy participant can deny service (hold a lock forever, fill the
 *     slot table) and break exclusion among the others (scribble on the
 *     registers, forge a token's owner-died mark).  It cannot crash them or
 *     make the library read or write outside the mapping: every index and
 *     size read from shared memory is checked (BAKERY_EBADREGION), no
 *     pointer is ever read from it, and a region shrunk under a process
 *     (ftruncate) costs that process the region, not its life: every call
 *     on it then returns BAKERY_EBADREGION.  Share a region only with
 *     trusted processes (the default mode is 0600).
 *   - Other users: anyone may create any name in /dev/shm, so a name does
 *     not say whose region it is.  bakery_open joins a region whose shm
 *     object belongs to the caller (its effective UID) or to root.  A
 *     region of another user, who may have created it first under the
 *     name the caller meant for its own (a squat: as the object's owner it
 *     could then rewrite the registers, remove or reset the caller's locks
 *     and let two "exclusive" holders in together), is refused with EPERM,
 *     unless the caller asks to share it (BAKERY_ANY_OWNER) or only reads
 *     it (BAKERY_RDONLY: introspection acts on nothing).  A region of the
 *     caller's own is trusted whatever its mode: a 0666 object of ours is a
 *     choice only we could have made.  Nothing another user puts in
 *     /dev/shm holds bakery_open up: no lock there is waited for, and every
 *     object is opened non-blocking, without following a symbolic link,
 *     and must be a regular file (BAKERY_EBADREGION otherwise).
 *   - Shared memory is memory: a region takes bakery_region_size() bytes of
 *     /dev/shm, a tmpfs of limited size (Docker's default: 64 MB).  Every
 *     page is reserved when the region is created (and when it is opened,
 *     if some are missing), so a full /dev/shm is ENOSPC from bakery_open,
 *     not a SIGBUS later.  A page that cannot be had after that (a file
 *     system that cannot reserve, a read-only handle's first look at a page
 *     an older version never wrote) costs the process the region as a
 *     shrink does, but every call on it then returns ENOSPC, not
 *     BAKERY_EBADREGION: the region is sound, /dev/shm is full.
 *   - SIGBUS: to survive a shrunk region, the first bakery_open installs a
 *     process-wide SIGBUS handler.  A SIGBUS outside the library's mappings
 *     goes to the handler installed before it, or kills the process as
 *     before.  An application that installs its own SIGBUS handler later
 *     should chain to the one it replaces (sigaction's old action), or a
 *     shrunk region kills it as it would without libbakery.
 */
#ifndef BAKERY_H
#define BAKERY_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BAKERY_BUILDING) && defined(__GNUC__)
#define BAKERY_API __attribute__((visibility("default")))
#else
#define BAKERY_API
#endif

/* -------------------------------------------------------------- version -- */

/*
 * The version of the library this header belongs to (configure.ac's AC_INIT
 * version; tests/unit/test_version checks that they agree).  Compare
 * bakery_version() with them to see whether the library loaded at run time
 * is the one a program was compiled against.
 */
#define BAKERY_VERSION_MAJOR 0
#define BAKERY_VERSION_MINOR 1
#define BAKERY_VERSION_PATCH 0
/* One number for #if tests: BAKERY_VERSION_NUMBER >= BAKERY_VERSION_AT(0, 2, 0). */
#define BAKERY_VERSION_AT(major, minor, patch) \
	(((major) * 1000000L) + ((minor) * 1000L) + (patch))
#define BAKERY_VERSION_NUMBER \
	BAKERY_VERSION_AT(BAKERY_VERSION_MAJOR, BAKERY_VERSION_MINOR, BAKERY_VERSION_PATCH)

/* The running library's version, "MAJOR.MINOR.PATCH": a fixed string. */
BAKERY_API const char *bakery_version(void);

/* ---------------------------------------------------------------- types -- */

typedef struct bakery      bakery_t;       /* one mapped region = one POSIX shm object */
typedef struct bakery_lock bakery_lock_t;  /* one named lock inside a region           */

/*
 * The lock algorithms.  All keep mutual exclusion, starvation-freedom and
 * doorway FIFO (a thread that has finished the doorway enters the critical
 * section before any thread that starts the doorway later).
 *
 * Which to choose: BLACK_WHITE is the default.  Proof: like all four it is
 * model-checked with crashes, aborts and slot reuse (tests/model), and its
 * crash recovery is the plain register reset; unlike Lamport's its numbers
 * stay bounded by n.  Measurement (docs/performance.md): close to the
 * fastest uncontended, and under contention it keeps its throughput where
 * the others convoy.  Every algorithm costs the same in a 64-slot and a 1024-slot region (an
 * adaptive active set: the cost grows with the threads using the lock).
 * LAMPORT is the reference and the simplest to audit.  BOULANGERIE waits
 * less than LAMPORT under low contention and may share a lock with LAMPORT
 * participants.  JAYANTI keeps every register bounded (tokens mod 2n-1) at
 * the price of a shared register written on every entry and a proxy
 * completion of dead or aborted passages.
 */
enum bakery_algo {
	BAKERY_ALGO_DEFAULT = 0,   /* open: whatever the lock was created with; create: library default */
	BAKERY_ALGO_LAMPORT,       /* Lamport 1974, unbounded (64-bit) numbers                    */
	BAKERY_ALGO_BOULANGERIE,   /* Moses & Patkin 2018: Lamport + two blocking optimisations   */
	BAKERY_ALGO_BLACK_WHITE,   /* Taubenfeld 2004: coloured tickets, numbers bounded by n     */
	BAKERY_ALGO_JAYANTI,       /* Jayanti, Tan, Friedland, Katz 2001: B-Bakery, tokens mod 2n-1 */
};
#define BAKERY_ALGO_COUNT 5

/* Used only when the region is created; NULL = all defaults. */
struct bakery_config {
	unsigned slots;            /* max participating threads at once, all processes; 0 = default (64) */
	unsigned locks;            /* max named locks in the region; 0 = default (64)                    */
	mode_t   mode;             /* permission bits of the shm object, within 0666; 0 = 0600           */
	unsigned reserved[5];      /* must be 0 (room for later settings)                                */
};

/* The grace G (ms) after which a waiter that does not take its turn is
 * passed, unless BAKERY_PASS_GRACE_MS says otherwise (bakery_lock). */
#define BAKERY_PASS_GRACE_DEFAULT_MS 250L

#define BAKERY_DEFAULT_SLOTS   64u
#define BAKERY_DEFAULT_LOCKS   64u
#define BAKERY_MAX_SLOTS       4096u   /* larger configs are refused with EINVAL */
#define BAKERY_MAX_LOCKS       4096u
/* Regions one thread may take part in at once (a slot in each): every slot
 * holds a liveness token on the thread's robust list, which the kernel walks
 * only 2048 entries deep at the thread's death; the rest is left for the
 * application's own robust mutexes.  One more: BAKERY_EREGIONS from the
 * lock call. */
#define BAKERY_MAX_THREAD_REGIONS 1024u
#define BAKERY_REGION_NAME_MAX 200     /* characters, not counting a leading '/' */
#define BAKERY_LOCK_NAME_MAX   63      /* characters                             */

#define BAKERY_CREATE  0x1u    /* create the region if it does not exist            */
#define BAKERY_EXCL    0x2u    /* with BAKERY_CREATE: fail with EEXIST if it exists */
#define BAKERY_NORECOVER 0x4u  /* extension: do not reap dead slots while opening
                                  (inspection tools that want to show them)        */
#define BAKERY_RDONLY  0x8u    /* extension: map the region read-only, for the
                                  introspection calls only (read permission on the
                                  object is enough); implies BAKERY_NORECOVER, not
                                  with BAKERY_CREATE.  bakery_lock_open and
                                  bakery_recover on such a handle: EPERM.  Opens a
                                  region of any owner (see Other users above)       */
#define BAKERY_ANY_OWNER 0x10u /* extension: join a region whose shm object
                                  belongs to another user (neither the caller's
                                  effective UID nor root), which is refused with
                                  EPERM without it (see Other users above)          */

/* ------------------------------------------------------- library errors -- */

/*
 * The library's own error codes, one list: X(name, message) for each, in
 * the order of their values (BAKERY_ERRBASE, then one less each; the
 * library's build checks it).  The values are fixed; bakery_strerror and
 * bakery_errname are built from this list, and a program may use it too:
 *   #define NAME(code, msg) case BAKERY_##code: return #code;
 */
#define BAKERY_ERRNO_MAP(X)                                                          \
	X(EBADREGION, "not a valid libbakery region (bad magic, truncated or corrupted)") \
	X(EVERSION,   "region created by an incompatible libbakery layout version")      \
	X(EALGO,      "lock exists with an algorithm this handle cannot take part in")   \
	X(ESLOTS,     "no free participant slot in the region (idle threads keep theirs "  \
	              "where membarrier(2) is refused)")                                 \
	X(ELOCKS,     "no free entry in the region's lock table")                        \
	X(EREMOVED,   "lock was removed (bakery_lock_unlink) after this handle was opened") \
	X(EREGIONS,   "the thread is in BAKERY_MAX_THREAD_REGIONS (1024) regions already, the " \
	              "kernel's robust-list limit (not a descriptor limit): close one")

/* Negative, from a reserved block, so they never collide with errno values. */
#define BAKERY_ERRBASE     (-40700)
#define BAKERY_EBADREGION  (BAKERY_ERRBASE - 0)
#define BAKERY_EVERSION    (BAKERY_ERRBASE - 1)
#define BAKERY_EALGO       (BAKERY_ERRBASE - 2)
#define BAKERY_ESLOTS      (BAKERY_ERRBASE - 3)
#define BAKERY_ELOCKS      (BAKERY_ERRBASE - 4)
#define BAKERY_EREMOVED    (BAKERY_ERRBASE - 5)
#define BAKERY_EREGIONS    (BAKERY_ERRBASE - 6)
#define BAKERY_ERRLAST     BAKERY_EREGIONS

/* ------------------------------------------------------------- regions -- */

/*
 * Open (and with BAKERY_CREATE, create) the region NAME: "/name" or "name",
 * following shm_open rules.  Creation is atomic: the region is built under a
 * temporary name and linked into place complete, so concurrent creators end
 * with exactly one region and an opener never sees a half-built one.  The
 * temporary name is NAME followed by a DEL character (0x7f), which no region
 * name may contain: no region is ever taken for another's temporary.  Opening
 * validates the header and every size against the object's size, then reaps
 * slots whose owners died (as bakery_recover; not with BAKERY_NORECOVER).
 * Does not block (beyond file-system calls; completing a dead Jayanti
 * passage is done only as far as it goes without waiting): it waits for no
 * lock in /dev/shm, and opens nothing there that could block (see Other
 * users above).  The region's pages are reserved (see Shared memory
 * above).  Descriptors it opens are close-on-exec and never 0, 1 or 2 (a
 * program started with its standard streams closed does not write its
 * messages into a region).
 *
 * Returns 0 and *out, or EINVAL (NULL name/out, bad flags (also
 * BAKERY_RDONLY with BAKERY_CREATE), bad name, cfg out
 * of range, a cfg mode with bits outside 0666, a reserved field of cfg
 * not 0), ENAMETOOLONG, ENOENT, EEXIST, EACCES,
 * EPERM (the region belongs to another user: see BAKERY_ANY_OWNER), ENOSPC
 * (no room left in /dev/shm for the region's pages), ENOMEM, EMFILE,
 * EAGAIN (creation found every temporary name it tried taken: try again),
 * BAKERY_EBADREGION (also: the name is not a regular file, as a directory,
 * a FIFO, a socket or a symbolic link), BAKERY_EVERSION, ENOTSUP (not the 64-bit glibc
 * robust-futex ABI the liveness tokens need), or another errno from the
 * system.
 *
 * A region shrunk under the process after it was opened (see Trust and
 * SIGBUS above): every call on it then returns BAKERY_EBADREGION (ENOSPC
 * for a page /dev/shm had no room for), except bakery_close, which still
 * closes it (the calling thread's slot is left for the others to recover,
 * as a dead owner's).
 */
BAKERY_API int bakery_open(const char *name, unsigned flags,
                           const struct bakery_config *cfg, bakery_t **out);

/*
 * The bytes of shared memory (/dev/shm) a region created with CFG (NULL:
 * the defaults) takes, into *size: a page of header, then per slot 64
 * bytes and two liveness tokens (a third of a page each), per lock an entry
 * and an active set, and per lock and slot two 64-byte register lines,
 * each part rounded up to pages.  0, or EINVAL (NULL size, cfg out of range).
 */
BAKERY_API int bakery_region_size(const struct bakery_config *cfg, uint64_t *size);

/*
 * Close a region handle: gives back the calling thread's slot and, once no
 * thread of this process still has a slot in it, unmaps the region.  Other
 * threads' slots are given back when those threads exit or make their next
 * lock call (bakery_lock family, on any region).  A slot that was taken
 * from the thread while it was idle (see bakery_lock) is not the thread's
 * any more and is left to its new owner.  Lock handles of B must be closed first (or are invalid after).
 * Returns 0, EINVAL (NULL), or EBUSY if a thread of this process holds a lock
 * of the region (nothing is closed then).
 */
BAKERY_API int bakery_close(bakery_t *b);

/* Remove the region's name; mapped handles keep working.  0, EINVAL,
 * ENAMETOOLONG, ENOENT, EACCES, EPERM (another user's, in the sticky
 * /dev/shm), BAKERY_EBADREGION (a directory under the name). */
BAKERY_API int bakery_unlink(const char *name);

/* --------------------------------------------------------------- locks -- */

/*
 * Create or join the lock LOCK_NAME (1..BAKERY_LOCK_NAME_MAX printable
 * ASCII characters, no '/').  ALGO is fixed when the lock is created
 * (BAKERY_ALGO_DEFAULT: BAKERY_ALGO_BLACK_WHITE).  Joining with DEFAULT takes
 * the lock's algorithm; joining with another explicit algorithm fails with
 * BAKERY_EALGO, except that LAMPORT and BOULANGERIE may share a lock (seed
 * 001 section 4), each handle running its own variant.
 * Creating a lock takes the region's lock table for microseconds; a caller
 * that finds it held for 2 s (by a creator or remover that is stopped,
 * traced or starved of CPU, in this PID namespace or another) gets EAGAIN:
 * try again later.  BAKERY_EBADREGION only when the table's token is
 * proven forged: it names a thread of the caller's own PID namespace that
 * does not exist and whose end the kernel never marked, or a thread ID no
 * kernel gives (at or above 4194304, PID_MAX_LIMIT), at once.
 * Returns 0 and *out, or EINVAL, ENAMETOOLONG, ENOMEM, EAGAIN, BAKERY_EALGO,
 * BAKERY_ELOCKS, BAKERY_EBADREGION, EPERM (B was opened BAKERY_RDONLY).
 */
BAKERY_API int bakery_lock_open(bakery_t *b, const char *lock_name,
                                enum bakery_algo algo, bakery_lock_t **out);

/*
 * Locks of k holders.  A lock created with holders = k > 1 admits up to k
 * holders at once, in ticket order (doorway FIFO): a counting semaphore
 * whose units have owners.  A holder that dies gives its unit back when its
 * death is proven, and the next acquirer is told EOWNERDEAD, as for a
 * mutex: every taker proves the deaths of the holders ahead of it, even
 * with a unit free.  Lamport and Boulangerie count holders; Black-White and Jayanti
 * cannot (ENOTSUP), and BAKERY_ALGO_DEFAULT creates such a lock with
 * Lamport's.  Shared mode is not for k-holder locks (ENOTSUP).
 */
#define BAKERY_MAX_HOLDERS BAKERY_MAX_SLOTS
struct bakery_lock_config {
	enum bakery_algo algo;     /* as bakery_lock_open's ALGO                    */
	unsigned holders;          /* capacity k; 0 = create with 1, join any       */
	unsigned flags;            /* BAKERY_LOCK_BIASED; 0 = create plain, join any */
	unsigned reserved[5];      /* must be 0 (room for later settings)           */
};

/*
 * A biased lock (Lamport or Boulangerie, one holder).  Once one thread has
 * taken it 64 times in a row with nobody else in line, the lock is biased
 * to that thread's slot: its passages then take and leave the lock with
 * plain stores, no locked instruction and no barrier, as cheap as a mutex
 * or cheaper.  Another thread's first lock call revokes the bias with
 * membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) (tens of microseconds, once)
 * and the lock goes on as an ordinary one; each revocation doubles the run
 * of lone passages the next bias waits for.  Exclusion, FIFO and crash
 * recovery are those of the algorithm.  Every process that opens a biased
 * lock must be able to make that membarrier (registered by bakery_open):
 * where the kernel or a seccomp profile refuses it, opening or creating
 * one is ENOTSUP, and on architectures other than x86 a biased lock is
 * never biased.  Shared passages of a biased lock take the ordinary path.
 */
#define BAKERY_LOCK_BIASED 0x1u

/*
 * As bakery_lock_open, with a configuration (NULL is EINVAL).  Creating:
 * the lock gets CFG's algorithm, capacity and flags (BAKERY_LOCK_BIASED:
 * with BAKERY_ALGO_DEFAULT, a Lamport lock).  Joining: HOLDERS 0 takes the
 * lock's capacity, another value must equal it, and BAKERY_LOCK_BIASED
 * must match the lock (else BAKERY_EALGO; FLAGS 0 joins any).
 * Other returns as bakery_lock_open, and EINVAL (holders above
 * BAKERY_MAX_HOLDERS, an unknown flag, a reserved field not 0), ENOTSUP
 * (holders > 1 with an algorithm that cannot count them; a biased lock of
 * Black-White or Jayanti, or of k > 1 holders; a biased lock in a process
 * that cannot make the expedited membarrier).
 */
BAKERY_API int bakery_lock_open_config(bakery_t *b, const char *lock_name,
                                       const struct bakery_lock_config *cfg,
                                       bakery_lock_t **out);
/* The lock's capacity k (1 for a mutex) into *holders.  0, EINVAL, or
 * BAKERY_EREMOVED (the lock was removed since L was opened). */
BAKERY_API int bakery_lock_holders(bakery_lock_t *l, unsigned *holders);

/* Free a lock handle.  The lock itself stays in the region (until
 * bakery_lock_unlink).  0 or EINVAL (NULL), EBUSY if the calling thread
 * holds it.  A handle whose lock was removed is held by nobody: it closes
 * with 0, whatever lock took its entry since. */
BAKERY_API int bakery_lock_close(bakery_lock_t *l);

/*
 * Acquire: blocks until the calling thread holds the lock.  Waiting spins
 * briefly, then sleeps in the kernel (shared futex) and is woken when the
 * register it waits on changes or its owner dies.  Where futex_waitv(2) is
 * refused (Linux before 5.16, a container's seccomp profile: whatever the
 * error) it sleeps on the register alone and looks at its owner at growing
 * intervals up to a tenth of a second: a death is seen that late at worst,
 * and a long wait costs about ten wake-ups a second.  A waiter two or more
 * tickets back sleeps once, behind the ticket before the one just ahead of
 * it, and is woken by that one's unlock, abort or death alone, to wait as
 * the next in line.  Signals do not interrupt it (bakery_acquire's
 * BAKERY_ACQUIRE_INTR and cancel word end a wait early).
 * FIFO holds among waiters that take their turn within the grace G
 * (BAKERY_PASS_GRACE_DEFAULT_MS, 250 ms; the environment variable
 * BAKERY_PASS_GRACE_MS sets it per process, 0 turns passing off).  A waiter
 * whose turn has come and that does not take it within G (stopped by
 * SIGSTOP or Ctrl-Z, traced, frozen, starved of CPU) is passed by a waiter
 * behind it: its place in line is given up on its behalf, and when it runs
 * again it takes a new one, transparently (the call still returns only once
 * the lock is held or the deadline passed).  A passed waiter never enters on
 * its old place.  Not passed: a waiter stopped inside its doorway or in the
 * few instructions before its first wait or after its wait, a holder (until
 * its unlock has cleared its ticket) and a trylock.  A passed JAYANTI
 * waiter's passage is aborted on its behalf and completed by proxy, as its
 * own timeout would; when it runs again it first helps complete it.  A
 * passer stopped in the middle of a pass (a few stores)
 * holds up the one it passes.  bakery_lock_info() counts passes.
 * In a lock of k > 1 holders a waiter's turn has come when fewer than k
 * tickets are ahead of it (it would enter if it ran): a stopped waiter
 * takes up one of the k places for G at most, then a blocking or timed
 * waiter behind it passes it (a trylock there does not pass: it is EBUSY
 * while the stopped one keeps its place).  A reader's turn has come when
 * nobody is inside and no ticket is ahead of it: a writer behind it passes
 * it (readers do not wait for it).
 * Takes a slot for the calling thread on its first call; when every slot
 * of the region is taken, waits for one to be given back (woken one per
 * freed slot, the longest asleep first; looking again at least every
 * 250 ms, reclaiming dead owners' slots), as long as it would wait for the
 * lock: bakery_trylock then returns EBUSY, a timed lock ETIMEDOUT.  While
 * a thread waits for a slot, bakery_unlock gives the caller's slot back
 * when it holds no other lock of the region, and a waiter that has slept
 * once takes the slot of a thread that is idle (holds no lock of the
 * region, is not inside a lock call); that thread's next lock call claims
 * a slot again, transparently.  Not where membarrier(2) is refused (a
 * kernel without it, a container's seccomp profile): no slot is then
 * reclaimed, and a caller that sees every slot owned by an idle thread for
 * a second gets BAKERY_ESLOTS instead of waiting for ever (threads that are
 * inside a lock call or hold a lock still give their slots back at their
 * unlock, and are waited for).
 * A lock being removed (bakery_lock_unlink), or the caller's own idle slot
 * being reclaimed, by a participant stopped half-way (in any PID
 * namespace: its TID says nothing here) is waited for as the lock is:
 * for ever, until the deadline (ETIMEDOUT), or not at all (trylock: EBUSY).
 * Returns 0, or:
 *   EOWNERDEAD       acquired, but the previous holder died inside its critical
 *                    section; repair, bakery_consistent(), then unlock
 *   ENOTRECOVERABLE  the lock was left inconsistent; it cannot be acquired
 *                    until the region's owner calls bakery_lock_reset()
 *   EDEADLK          the calling thread already holds it (through this
 *                    handle, or through another handle of the same region,
 *                    whatever name it was opened by: a hard link or a
 *                    rename of the object names the same region)
 *   BAKERY_EREGIONS  the thread already has a slot in
 *                    BAKERY_MAX_THREAD_REGIONS regions (close some)
 *   BAKERY_ESLOTS    every slot is owned by an idle thread and none can
 *                    be reclaimed: membarrier(2) is refused (see above)
 *   ENOMEM, ENOTSUP  this thread's slot token could not be held: no memory
 *                    (or mappings) for its window, or no robust-futex list
 *                    registered for the thread (threads not made by glibc);
 *                    ENOMEM also from a JAYANTI doorway that finds a crowd
 *                    of more than 32 in line (it notes their tokens in
 *                    allocated memory, to keep its stack small)
 *   BAKERY_EREMOVED  the lock was removed by bakery_lock_unlink() since L
 *                    was opened (its entry may hold another lock by now);
 *                    close L, and open the name again for a new lock
 *   EINVAL, BAKERY_EBADREGION
 */
BAKERY_API int bakery_lock(bakery_lock_t *l);

/* As bakery_lock, but never waits: EBUSY if it would have to (the thread
 * leaves the protocol cleanly first). */
BAKERY_API int bakery_trylock(bakery_lock_t *l);

/* As bakery_lock, but gives up with ETIMEDOUT at ABSTIME (CLOCK_REALTIME, like
 * pthread_mutex_timedlock).  EINVAL if abstime is NULL or its tv_nsec is out
 * of range.  A deadline already past still makes one attempt.  A waiter
 * woken by the death of the participant it waits on recovers that death
 * before it returns, even past its deadline (the kernel wakes only one
 * waiter per death: the others are not left asleep). */
BAKERY_API int bakery_timedlock(bakery_lock_t *l, const struct timespec *abstime);

/* As bakery_timedlock with ABSTIME on CLOCK (CLOCK_MONOTONIC or
 * CLOCK_REALTIME; EINVAL for any other clock). */
BAKERY_API int bakery_clocklock(bakery_lock_t *l, clockid_t clock,
                                const struct timespec *abstime);

/*
 * Release.  Wakes the threads that wait on this thread's registers.  Does not
 * block.  If it woke a thread, or the thread's lock calls did since its last
 * release of this kind, and the thread holds no other lock, it yields its
 * CPU (sched_yield(2)) to let the woken one run: it returns at once when
 * nothing else is runnable on its CPU.  Returns 0, EPERM (the calling
 * thread does not hold it), EINVAL, BAKERY_EBADREGION (the region was
 * shrunk under the process), BAKERY_EREMOVED (the lock was removed since L
 * was opened: nothing is released, not even a lock that took its entry and
 * that the caller holds).
 * Unlocking after EOWNERDEAD without bakery_consistent() makes the lock
 * ENOTRECOVERABLE (and returns 0), until bakery_lock_reset().
 */
BAKERY_API int bakery_unlock(bakery_lock_t *l);

/* Mark the state protected by a lock acquired with EOWNERDEAD as repaired.
 * 0, EPERM (not held by the calling thread, or held in shared mode: a
 * reader cannot repair), EINVAL (the lock is not in the owner-died state),
 * BAKERY_EREMOVED (the lock was removed since L was opened: no other lock's
 * mark is touched). */
BAKERY_API int bakery_consistent(bakery_lock_t *l);

/*
 * Shared (reader) mode, in the pthread_rwlock style, on the same lock as
 * the exclusive calls above.  Readers overlap with readers; a writer (the
 * exclusive calls) with nobody.  Order is the doorway's, for both: a
 * reader waits only for the writers whose tickets are ahead of its own,
 * and a reader that arrives after a waiting writer waits behind it, so
 * neither readers nor writers starve.  Release with bakery_unlock().
 * Supported by Lamport, Boulangerie and Black-White (whose numbers, while
 * readers overlap without a pause, grow as Lamport's do: its bound n holds
 * for exclusive passages, see docs/algorithms.md); Jayanti's
 * bounded tokens admit one holder at a time (ENOTSUP, see
 * docs/algorithms.md), as do locks of k > 1 holders.
 * Owner death: a dead reader only gives its share back (no data was
 * changed; counted in bakery_lock_info's reader_deaths).  A dead writer
 * leaves the lock owner-died as for the exclusive calls: the next reader
 * is told EOWNERDEAD too and holds the lock shared, but the state may be
 * half-written: it may read it to decide what to do, must not write it,
 * and cannot repair it (bakery_consistent returns EPERM for a reader).
 * The lock stays owner-died until a writer is told EOWNERDEAD, repairs
 * and calls bakery_consistent().
 * Returns as bakery_lock, bakery_trylock, bakery_timedlock and
 * bakery_clocklock, and ENOTSUP.  EDEADLK: the thread already holds the
 * lock, in either mode (no recursive read locks).
 */
BAKERY_API int bakery_rdlock(bakery_lock_t *l);
BAKERY_API int bakery_tryrdlock(bakery_lock_t *l);
BAKERY_API int bakery_timedrdlock(bakery_lock_t *l, const struct timespec *abstime);
BAKERY_API int bakery_clockrdlock(bakery_lock_t *l, clockid_t clock,
                                  const struct timespec *abstime);

/* ---------------------------------------------- acquiring with options -- */

/*
 * bakery_acquire: the calls above in one, with what they lack: a wait that
 * another thread, another process or a signal handler can end (a cancel
 * word), and one that a signal handler ends, as sem_wait(3)'s does.
 * OPTS (required; all zero is bakery_lock):
 *   flags        BAKERY_ACQUIRE_SHARED  as a reader (the rdlock calls)
 *                BAKERY_ACQUIRE_TRY     never wait: EBUSY (the trylock calls)
 *                BAKERY_ACQUIRE_INTR    a signal handler that interrupts a
 *                                       sleep of the wait ends it: EINTR
 *                BAKERY_ACQUIRE_ESLOTS  a try, or a deadline, that ends the
 *                                       call while it still waits for a free
 *                                       slot (the lock not tried at all)
 *                                       returns BAKERY_ESLOTS, not EBUSY or
 *                                       ETIMEDOUT, which then speak of the
 *                                       lock alone
 *   clock, deadline  give up with ETIMEDOUT at *deadline on CLOCK
 *                (CLOCK_MONOTONIC or CLOCK_REALTIME), as bakery_clocklock;
 *                NULL: no deadline (not with BAKERY_ACQUIRE_TRY)
 *   cancel       give up with ECANCELED once *cancel is not 0.  Every
 *                sleep of the wait watches the word: bakery_cancel(cancel)
 *                (from any thread, any process if the word is in shared
 *                memory, or a signal handler) ends it at once
 *   interrupted, arg  with BAKERY_ACQUIRE_INTR: the judge of an interruption.
 *                Called as interrupted(arg) in the waiting thread, inside
 *                the call, after a sleep a signal handler interrupted, and
 *                at least every BAKERY_ACQUIRE_POLL_MS while the call waits
 *                (its sleeps are that long at most); non-zero gives up
 *                (EINTR), 0 keeps the place in line.  Without it, every
 *                interruption gives up.  It must not take this lock
 *                (EDEADLK) nor close a handle the call uses.
 *   reserved     all 0
 * A thread that gives up (ETIMEDOUT, ECANCELED, EINTR) leaves the line
 * exactly as a timed-out waiter does: the others are not disturbed.  Like
 * a deadline already past, a cancel word already set still makes one
 * attempt.  A wait that is told to stop just as the lock comes free may
 * acquire it all the same: 0 (or EOWNERDEAD), the caller holds it.
 * A signal interrupts only a sleep under way: one caught while the waiter
 * spins (microseconds before each sleep) ends nothing, and neither does
 * one whose handler was installed with SA_RESTART if the kernel resumes
 * the sleep.  A handler that must end the wait sets a cancel word
 * (bakery_cancel is async-signal-safe), or a flag that `interrupted` reads:
 * then the wait ends within BAKERY_ACQUIRE_POLL_MS.
 * Returns as the call it stands for, and EINVAL (NULL opts, unknown flags,
 * reserved not 0, a bad deadline or clock, a deadline with
 * BAKERY_ACQUIRE_TRY, interrupted without BAKERY_ACQUIRE_INTR), ECANCELED,
 * EINTR.
 */
#define BAKERY_ACQUIRE_SHARED 0x1u
#define BAKERY_ACQUIRE_TRY    0x2u
#define BAKERY_ACQUIRE_INTR   0x4u
#define BAKERY_ACQUIRE_ESLOTS 0x8u
/* The longest a wait with an `interrupted` callback sleeps at once (ms). */
#define BAKERY_ACQUIRE_POLL_MS 50

struct bakery_acquire_opts {
	unsigned flags;                    /* BAKERY_ACQUIRE_*                    */
	clockid_t clock;                   /* of the deadline                     */
	const struct timespec *deadline;   /* NULL: none                          */
	const uint32_t *cancel;            /* NULL: none                          */
	int (*interrupted)(void *arg);     /* NULL: every interruption gives up   */
	void *arg;
	void *reserved[4];                 /* 0                                   */
};
BAKERY_API int bakery_acquire(bakery_lock_t *l, const struct bakery_acquire_opts *opts);

/* Set the cancel word *WORD to 1 and wake every bakery_acquire waiting
 * with it.  Async-signal-safe (a store and a futex wake-up): a signal
 * handler may call it.  The word stays set: store 0 in it before it serves
 * another call.  0, or EINVAL (NULL). */
BAKERY_API int bakery_cancel(uint32_t *word);

/*
 * Reap dead slots now: prove each death, clear the dead slot's part in every
 * lock (Jayanti passages are completed by proxy, which may wait), then free
 * the slot.  *reclaimed (if not NULL) gets the number of slots freed.
 * Safe to call concurrently with anything; recovery is idempotent.
 * 0, EINVAL, BAKERY_EBADREGION, EPERM (B was opened BAKERY_RDONLY).
 */
BAKERY_API int bakery_recover(bakery_t *b, unsigned *reclaimed);

/* A fixed string for every value above and for any errno value. */
BAKERY_API const char *bakery_strerror(int err);
/* The symbolic name of an error number, a fixed string: "BAKERY_EBADREGION"
 * for the library's codes, "EOWNERDEAD" for errno values (the documented
 * ones by the names used here, whatever the C library: "ENOTSUP", not
 * glibc's "EOPNOTSUPP"), "0" for 0, and "UNKNOWN" for a value that has no
 * name. */
BAKERY_API const char *bakery_errname(int err);

/* ------------------------------------------------- lock administration -- */

/*
 * As bakery_lock_open, but only if the lock LOCK_NAME exists: ENOENT
 * otherwise, and nothing is created (a typing error in a name does not use
 * up an entry of the lock table).  Same other returns as bakery_lock_open.
 */
BAKERY_API int bakery_lock_lookup(bakery_t *b, const char *lock_name,
                                  enum bakery_algo algo, bakery_lock_t **out);

/*
 * Make a not-recoverable lock usable again: the lock goes back to the
 * owner-died state, so the next acquirer gets EOWNERDEAD (the state it
 * protects was never repaired) and may repair it and call
 * bakery_consistent().  For the owner of the region's shm object (or
 * root) only.  Does not block; one atomic step, ordered with acquirers.
 * Returns 0, EINVAL (NULL, or the lock is not ENOTRECOVERABLE), EPERM
 * (the caller does not own the region), BAKERY_EREMOVED (the lock was
 * removed since L was opened), BAKERY_EBADREGION.
 */
BAKERY_API int bakery_lock_reset(bakery_lock_t *l);

/*
 * Remove the lock LOCK_NAME from region B, freeing its table entry for
 * another name.  Only while nobody holds it, waits for it or is in its
 * doorway, no passage of a dead participant is left in it, and no repair
 * is owed.  Participants of the lock that died (killed holding it, waiting
 * or in its doorway) are proven dead and recovered first, as
 * bakery_recover() does: a dead reader or waiter leaves nothing behind,
 * and a lock whose holder died inside its critical section and that
 * nobody has repaired since (its next holder would be told EOWNERDEAD) is
 * refused with EOWNERDEAD, a not-recoverable one with ENOTRECOVERABLE,
 * and stays as it was (a lock made anew under the name would tell its
 * next holder nothing of the death; see bakery_lock_unlink_flags to
 * remove it anyway).  For the owner of the region's shm object (or root)
 * only.  Race-free against a
 * concurrent acquisition: either the unlink sees it (EBUSY) or the
 * acquirer sees the unlink.  Handles still open on the removed lock stay
 * valid to close (0), and every other call on them (the lock calls,
 * bakery_unlock, bakery_consistent, bakery_lock_reset, bakery_lock_holders,
 * bakery_lock_index) returns BAKERY_EREMOVED, even once the entry holds
 * another lock, which none of them touches; bakery_lock_open of the same
 * name makes a new lock.  Blocks for a system-wide memory barrier
 * (membarrier(2), milliseconds) and while another lock of B is being
 * created or removed.  Returns 0, EINVAL, ENOENT (no such lock), EBUSY,
 * EOWNERDEAD or ENOTRECOVERABLE (a repair is owed: nothing was removed),
 * EPERM (not the region's owner, or B was opened BAKERY_RDONLY), EAGAIN
 * (the lock table stayed busy for 2 s), ENOTSUP (the kernel has no
 * MEMBARRIER_CMD_GLOBAL, or a seccomp filter refuses membarrier(2)),
 * BAKERY_EBADREGION.
 */
BAKERY_API int bakery_lock_unlink(bakery_t *b, const char *lock_name);

/* bakery_lock_unlink_flags: remove a lock that owes a repair all the same. */
#define BAKERY_UNLINK_FORCE 0x1u

/*
 * As bakery_lock_unlink, with FLAGS: 0 (the same call), or
 * BAKERY_UNLINK_FORCE, which removes a lock that is owner-died or not
 * recoverable too: the news that its holder died is lost with it (use it
 * when nothing is left to repair, e.g. the data it protected is gone).  A
 * lock that is held or waited for is still refused (EBUSY).  Other flags:
 * EINVAL.  Returns as bakery_lock_unlink.
 */
BAKERY_API int bakery_lock_unlink_flags(bakery_t *b, const char *lock_name, unsigned flags);

/* ---------------------------------------------------------- path locks -- */

/*
 * Path locks: the lock of a file or directory, as flock(2) gives one, fair
 * and crash-proof as every lock here.  A path lock is named by the file's
 * identity, not by the path: its device, its inode number, and what tells
 * a reused inode number apart, the file's birth time where the file system
 * records it (statx(2)'s STATX_BTIME), else its inode generation
 * (FS_IOC_GETVERSION), else nothing (bakery_path_info says which).  So
 * every path to one file (links, relative or absolute, before and after a
 * rename) names one lock; a file replaced by another (a new inode) has a
 * new lock; a file that gets a deleted one's inode number starts with a
 * lock of its own, which inherits no holder and no owner-died mark.  Not
 * told apart: a file born in the same tick of the file system's clock (a
 * few milliseconds) as the deleted one it succeeds, and on a file system
 * with neither stamp, any successor.
 *
 * The locks of all paths live in one region per user, named
 * BAKERY_PATH_REGION_PREFIX and the effective user ID ("/bakery-paths-1000"),
 * created at first use with BAKERY_PATH_SLOTS slots and BAKERY_PATH_LOCKS
 * locks, mode 0600; the environment variable BAKERY_PATH_REGION_ENV names
 * another region instead (read once, at the process's first path lock;
 * ignored by set-user-ID programs).  So path locks exclude the processes of
 * one user (or of the users who share that region), not two users locking
 * one file.  A path lock's name in its region is BAKERY_PATH_LOCK_PREFIX
 * and the identity in hexadecimal: "path:MAJOR.MINOR:INODE:bBIRTH" (birth
 * time in nanoseconds), ":gGENERATION" or ":-", so that `bakery status`
 * shows them and a program may open one as any other lock.
 *
 * The table does not fill up with locks nobody uses: an opener that finds
 * it full removes, in one go, every path lock that nobody holds, waits for
 * or is entering, and that is neither owner-died nor not recoverable (a
 * repair still due is kept, until a holder repairs it or the lock is
 * removed by hand): bakery_lock_unlink's protocol, with one membarrier(2)
 * for them all.  A process whose handle's lock was removed so gets it made
 * again at its next lock call, transparently.  Reclaiming needs the
 * region's owner (or root) and membarrier(2): others get BAKERY_ELOCKS
 * from a full table.
 *
 * A process maps the region at its first path lock and keeps it until it
 * exits (one descriptor), and keeps the lock handles of the paths it has
 * open, and of the last BAKERY_PATH_IDLE_MAX it closed, in one table: a
 * path opened again costs a statx(2) and a look-up.  fork(): as for any
 * handle; exec(): nothing is left.
 */
typedef struct bakery_path bakery_path_t;

#define BAKERY_PATH_REGION_ENV    "BAKERY_PATH_REGION"
#define BAKERY_PATH_REGION_PREFIX "/bakery-paths-"
#define BAKERY_PATH_LOCK_PREFIX   "path:"
/* The capacity of a path region created by the library: 128 threads at
 * once in path locks (more wait for a slot, see bakery_lock), 1024 paths
 * held, waited for or owner-died at once.  17.6 MB of shared memory, all
 * reserved when the region is created. */
#define BAKERY_PATH_SLOTS    128u
#define BAKERY_PATH_LOCKS    1024u
#define BAKERY_PATH_IDLE_MAX 64u

/* What tells a file apart from an earlier one that had its inode number. */
enum bakery_path_stamp {
	BAKERY_PATH_STAMP_NONE = 0,   /* nothing: a successor shares the lock         */
	BAKERY_PATH_STAMP_BIRTH,      /* the birth time (statx STATX_BTIME), in ns     */
	BAKERY_PATH_STAMP_GENERATION, /* the inode generation (FS_IOC_GETVERSION)      */
};

struct bakery_path_info {
	char     region[BAKERY_REGION_NAME_MAX + 2];  /* the region, "/bakery-paths-UID" */
	char     lock[BAKERY_LOCK_NAME_MAX + 1];      /* the lock's name in it           */
	uint64_t dev;              /* the file's device, makedev(major, minor)  */
	uint64_t ino;              /* its inode number                          */
	enum bakery_path_stamp stamp;
	uint64_t stamp_value;      /* birth time (ns since the epoch) or generation */
};

/*
 * Open the lock of the file or directory PATH (symbolic links are
 * followed).  FLAGS: 0, or BAKERY_CREATE to create a missing regular file
 * (mode 0666 less the umask), as flock(1) does.  PATH is resolved now: the
 * handle stays the lock of the file PATH named at this call, as a
 * descriptor stays its file's; open again to follow a replaced file.
 * Returns 0 and *out, or EINVAL (NULL, an empty path, an unknown flag),
 * the error of statx(2) or open(2) on PATH (ENOENT, EACCES, ENOTDIR,
 * ELOOP, ENAMETOOLONG, EISDIR...; EACCES also when the file system keeps
 * no birth time and the file cannot be opened for reading to read its
 * generation; ENOTSUP where a seccomp profile refuses statx(2) with
 * EPERM: the file's identity cannot be read), ENOMEM, EAGAIN (the lock
 * table stayed busy: as bakery_lock_open), BAKERY_ELOCKS (the table is
 * full of locks in use or owner-died, or may not be reclaimed by this
 * caller), or bakery_open's
 * errors for the region (BAKERY_EBADREGION, BAKERY_EVERSION, EACCES,
 * ENAMETOOLONG for a BAKERY_PATH_REGION too long, EINVAL for one that is
 * not a region name, EMFILE...).
 */
BAKERY_API int bakery_path_open(const char *path, unsigned flags, bakery_path_t **out);

/* Free a path handle.  0, EINVAL (NULL), EBUSY if the calling thread holds
 * the lock (nothing is closed then). */
BAKERY_API int bakery_path_close(bakery_path_t *p);

/* The handle's region, lock name and file identity into *OUT.  0 or EINVAL. */
BAKERY_API int bakery_path_info(const bakery_path_t *p, struct bakery_path_info *out);

/*
 * The bakery_lock family on the path's lock: exclusive, shared (readers),
 * try and timed, with the same returns (EOWNERDEAD and bakery_path_consistent
 * as for any lock; EDEADLK when the calling thread holds it already,
 * through this handle or another of the same file).  Never
 * BAKERY_EREMOVED: a lock that was removed since the handle last used it
 * (the table was full and it was idle) is made again, and the call goes
 * on with it; that may also return ENOMEM, EAGAIN or BAKERY_ELOCKS, as
 * bakery_path_open.
 */
BAKERY_API int bakery_path_lock(bakery_path_t *p);
BAKERY_API int bakery_path_trylock(bakery_path_t *p);
BAKERY_API int bakery_path_timedlock(bakery_path_t *p, const struct timespec *abstime);
BAKERY_API int bakery_path_clocklock(bakery_path_t *p, clockid_t clock,
                                     const struct timespec *abstime);
BAKERY_API int bakery_path_rdlock(bakery_path_t *p);
BAKERY_API int bakery_path_tryrdlock(bakery_path_t *p);
BAKERY_API int bakery_path_timedrdlock(bakery_path_t *p, const struct timespec *abstime);
BAKERY_API int bakery_path_clockrdlock(bakery_path_t *p, clockid_t clock,
                                       const struct timespec *abstime);
/* bakery_acquire on the path's lock: the calls above in one, with a
 * cancel word and BAKERY_ACQUIRE_INTR (a wait that a signal handler ends,
 * with EINTR; the thread leaves the line as a timed-out waiter does).
 * Returns as bakery_acquire, and as the calls above. */
BAKERY_API int bakery_path_acquire(bakery_path_t *p, const struct bakery_acquire_opts *opts);
/* As bakery_unlock and bakery_consistent. */
BAKERY_API int bakery_path_unlock(bakery_path_t *p);
BAKERY_API int bakery_path_consistent(bakery_path_t *p);

/* ------------------------------------------------------- introspection -- */

/* Names of the algorithms: "default", "lamport", "boulangerie",
 * "black-white", "jayanti".  NULL for an unknown value. */
BAKERY_API const char *bakery_algo_name(enum bakery_algo algo);
/* Parse a name as above (also "black_white", "bw"); 0 or EINVAL. */
BAKERY_API int bakery_algo_parse(const char *name, enum bakery_algo *out);

/* What an algorithm can do beside exclusive locks of one holder
 * (bakery_algo_features' bits). */
#define BAKERY_ALGO_HAS_SHARED  0x1u   /* shared passages: bakery_rdlock and the like  */
#define BAKERY_ALGO_HAS_HOLDERS 0x2u   /* locks of k > 1 holders (bakery_lock_config)  */
#define BAKERY_ALGO_HAS_BIAS    0x4u   /* biased locks (BAKERY_LOCK_BIASED)            */
/* ALGO's BAKERY_ALGO_HAS_ bits: what the library accepts of a lock of that
 * algorithm, and refuses (ENOTSUP) of the others.  0 for
 * BAKERY_ALGO_DEFAULT (no algorithm: a new lock gets one that has what its
 * configuration asks for) and for an unknown value. */
BAKERY_API unsigned bakery_algo_features(enum bakery_algo algo);

struct bakery_region_info {
	unsigned version;          /* layout version                        */
	unsigned slots, locks;     /* capacities                            */
	unsigned slots_used;       /* slots not free                        */
	unsigned locks_used;       /* lock-table entries in use             */
	uint64_t size;             /* bytes mapped                          */
	pid_t    creator_pid;      /* display only                          */
	uid_t    creator_uid;
	uint64_t created_ns;       /* CLOCK_REALTIME, nanoseconds           */
	mode_t   mode;             /* current permission bits of the object */
	unsigned reserved[8];      /* 0: the library zeroes them (room for more) */
};
BAKERY_API int bakery_region_info(bakery_t *b, struct bakery_region_info *out);

/*
 * The layout version written in the header of the region NAME, into
 * *version, read without joining the region: a region that bakery_open
 * refuses with BAKERY_EVERSION (made by a library of another layout
 * version) can still be named, and its version said, as `bakery list`
 * does.  For a region this library opens, it is bakery_region_info's
 * version.  *version is 0 when the header is of another kind altogether,
 * with no version where this library looks for one.  Only the header's
 * first bytes are read: a 0 says what the region claims to be, not that it
 * is sound.  Returns 0; BAKERY_EBADREGION for an object that is not a
 * libbakery region of any layout (or not a regular file); EINVAL (NULL
 * version, bad name), ENAMETOOLONG, ENOENT, EACCES, or another errno from
 * opening or reading the object.
 */
BAKERY_API int bakery_region_layout(const char *name, unsigned *version);

enum bakery_slot_state {
	BAKERY_SLOT_FREE = 0,
	BAKERY_SLOT_ACTIVE,        /* owned by a thread                              */
	BAKERY_SLOT_RECOVERING,    /* owner gone, its passages still being completed */
};
enum bakery_pass_state {       /* where a slot stands in one lock */
	BAKERY_PASS_IDLE = 0,
	BAKERY_PASS_DOORWAY,
	BAKERY_PASS_WAITING,
	BAKERY_PASS_CRITICAL,
};
struct bakery_slot_info {
	unsigned index;
	enum bakery_slot_state state;
	int      alive;            /* 1 alive, 0 owner proven dead, -1 free/unknown  */
	pid_t    pid, tid;         /* as seen by the owner (its PID namespace)       */
	uint64_t start_time;       /* owner process start, clock ticks since boot    */
	enum bakery_pass_state pass; /* furthest stage over all locks               */
	int      lock;             /* lock index of that stage, -1 if idle           */
	int      shared;           /* that stage is a shared (reader) passage        */
	unsigned reserved[8];      /* 0: the library zeroes them (room for more)     */
};
/* 0, EINVAL (index out of range). */
BAKERY_API int bakery_slot_info(bakery_t *b, unsigned index, struct bakery_slot_info *out);

/*
 * The state of a lock as a status display shows it ("ok", "not-recoverable",
 * "owner-died", "removing"), derived by bakery_lock_info from the lock's
 * flags, its holders' liveness and its table entry: the first of the states
 * after OK that applies, else OK.  A snapshot, for display.
 */
enum bakery_lock_state {
	BAKERY_LOCK_OK = 0,
	/* released without bakery_consistent() after EOWNERDEAD: every
	 * acquirer is told ENOTRECOVERABLE until bakery_lock_reset */
	BAKERY_LOCK_NOT_RECOVERABLE,
	/* a holder died inside (not a reader): its recovery marked the lock
	 * (owner_dead), or, before anyone recovered it, the kernel has proven
	 * the death of a holder still inside.  The next acquirer is told
	 * EOWNERDEAD. */
	BAKERY_LOCK_OWNER_DIED,
	/* bakery_lock_unlink is under way: the lock is about to go, or to
	 * stay if it is in use (also after an unlinker died mid-way, until
	 * the next call on the lock table settles it) */
	BAKERY_LOCK_REMOVING,
};

struct bakery_lock_info {
	unsigned index;
	char     name[BAKERY_LOCK_NAME_MAX + 1];
	enum bakery_algo algo;
	int      holder;           /* slot index, -1 if free (the first of
	                              several: see holding)                */
	unsigned waiters;          /* slots in the doorway or waiting       */
	unsigned participants;     /* slots in the lock's active set        */
	int      owner_dead;       /* previous holder died, not yet repaired:
	                              0, or BAKERY_OWNER_DEAD_DIED, or
	                              BAKERY_OWNER_DEAD_UNREPAIRED     */
	int      not_recoverable;
	uint64_t acquisitions;     /* since creation, all participants      */
	uint64_t recoveries;       /* dead slots cleared in this lock       */
	uint64_t owner_deaths;     /* holders that died in the critical section */
	uint64_t aborts;           /* trylock/timeout give-ups after the doorway */
	/* extension: k holders and shared mode */
	unsigned capacity;         /* holders at once: 1 for a mutex        */
	unsigned holding;          /* slots inside the critical section now */
	unsigned readers;          /* of them, in shared mode               */
	uint64_t reader_deaths;    /* readers that died inside: no owner-died */
	uint64_t passes;           /* waiters passed: their turn came and they did not take it */
	enum bakery_lock_state state; /* as a status display shows it (above) */
	/* extension: biased locks */
	unsigned flags;            /* BAKERY_LOCK_BIASED if made biased     */
	int      bias_slot;        /* the slot it is biased to now, -1 if none */
	unsigned bias_revocations; /* biases revoked so far                 */
	unsigned reserved[4];      /* 0: the library zeroes them (room for more) */
};
/* bakery_lock_info's owner_dead: how the lock's last holder left it.
 * DIED: it died holding the lock.  UNREPAIRED: it had been told EOWNERDEAD
 * and left the lock (died, or its thread exited) without
 * bakery_consistent(): the repair failed, after an earlier death. */
#define BAKERY_OWNER_DEAD_DIED       1
#define BAKERY_OWNER_DEAD_UNREPAIRED 2
/* 0, ENOENT (no lock at this table index), EINVAL (index out of range). */
BAKERY_API int bakery_lock_info(bakery_t *b, unsigned index, struct bakery_lock_info *out);
/*
 * The slots in the doorway or waiting for the lock at table INDEX, in the
 * order the lock will let them in: first those that have taken their
 * ticket, as the algorithm orders tickets, then those still taking one (by
 * slot index).  Up to CAP slot indices into SLOTS (NULL if CAP is 0), the
 * number in line into *COUNT (which may exceed CAP).  A snapshot of
 * registers that move while it is read: right for display, not for
 * decisions.  0, ENOENT (no lock at this index), EINVAL, ENOMEM.
 */
BAKERY_API int bakery_lock_queue(bakery_t *b, unsigned index, unsigned *slots,
                                 unsigned cap, unsigned *count);
/* Index of an open lock handle's table entry (for bakery_lock_info).  0,
 * EINVAL, BAKERY_EREMOVED (the lock was removed since L was opened: the
 * entry may hold another lock). */
BAKERY_API int bakery_lock_index(bakery_lock_t *l, unsigned *index);

/*
 * bakery_lock_info of the lock of path handle P (bakery_path_open): its
 * holder, waiters, owner-died mark... into *OUT.  A lock that was taken
 * back while idle since the handle last used it is made again first, as
 * by a lock call.  Returns 0, EINVAL (NULL), or, for a lock made again,
 * the errors of bakery_path_open (ENOMEM, EAGAIN, BAKERY_ELOCKS).
 */
BAKERY_API int bakery_path_lock_info(bakery_path_t *p, struct bakery_lock_info *out);

#ifdef __cplusplus
}
#endif
#endif /* BAKERY_H */
