/* SPDX-License-Identifier: MIT */
/*
 * bench.h - declarations shared by the parts of bakery-bench, the benchmark
 * that measures every libbakery algorithm side by side with the locks users
 * would otherwise pick (robust pthread mutex, POSIX semaphore, OFD lock,
 * flock, ticket lock).
 *
 *   mechs.c    one adapter per mechanism behind struct mech_ops
 *   procs.c    the shared control block, futex flags, forking and reaping,
 *              the background load
 *   measure.c  the measurements (uncontended, contended, blocked, recovery)
 *   holders.c  threads of several processes on a lock of k holders
 *   report.c   statistics, the tables on stdout, the targets and the CSV file
 *   main.c     options and the order of the runs
 */
#ifndef BAKERY_BENCH_H
#define BAKERY_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <semaphore.h>
#include <sys/types.h>

#include "bakery.h"
/* the independent check of mutual exclusion the tests use too, done inside
 * every contended critical section: it trusts nothing of the mechanism
 * under test (tests/common/occupancy.h) */
#include "occupancy.h"
/* and its sibling for locks of k holders (tests/common/rw_occupancy.h) */
#include "rw_occupancy.h"

#define BENCH_MAX_PROCS   64       /* most processes in one contended run   */
#define BENCH_SAMPLE_CAP  16384    /* wait-time samples kept per process    */
#define BENCH_SAMPLE_MASK 15u      /* time one acquisition in 16, at random */
#define BENCH_MAX_PLAN    3        /* process counts of one series of cases */
#define BENCH_MAX_BACKGROUND 8    /* CPU-bound processes of a loaded run   */
#define BENCH_MAX_THREADS 16       /* threads per process, k holders        */
#define BENCH_MAX_TRIALS  101      /* recovery trials per mechanism         */
#define BENCH_MAX_ROUNDS  9        /* contended runs per case               */
#define BENCH_MAX_MECHS   16       /* entries of mech_table                 */
#define BENCH_CACHE_LINE  64
#define BENCH_SETUP_TIMEOUT_NS (10 * INT64_C(1000000000))  /* children get ready */
#define BENCH_DRAIN_TIMEOUT_NS (20 * INT64_C(1000000000))  /* children end a run */

/* ------------------------------------------------------------ mechanisms -- */

struct mech;

/* Result of mech_ops.lock: acquired, acquired from a holder that died, or
 * failed (the error code is then in mech.err). */
enum { MECH_FAILED = -1, MECH_ACQUIRED = 0, MECH_OWNER_DIED = 1 };

struct mech_ops {
	const char *name;          /* short name in tables and CSV           */
	const char *what;          /* one-line description for the legend    */
	bool is_bakery;            /* a libbakery algorithm (slots matter)   */
	bool recovers;             /* a blocked waiter survives a SIGKILLed holder */
	bool tells_owner_died;     /* and is told the holder died (EOWNERDEAD) */
	enum bakery_algo algo;     /* libbakery algorithms only              */
	bool counts_holders;       /* can make a lock of k > 1 holders       */
	bool biased;               /* makes its lock BAKERY_LOCK_BIASED      */
	/* In the parent: create the shared object(s).  0 or an errno. */
	int (*create)(struct mech *m);
	/* In a child after fork: make the per-process handle.  0 or an errno. */
	int (*attach)(struct mech *m);
	/* MECH_ACQUIRED, MECH_OWNER_DIED (already made consistent), or
	 * MECH_FAILED with the error in m->err. */
	int (*lock)(struct mech *m);
	void (*unlock)(struct mech *m);
	/* In a child before it exits. */
	void (*detach)(struct mech *m);
	/* In the parent: remove the shared object(s). */
	void (*destroy)(struct mech *m);
};

/* One instance of a mechanism: what create() made, what attach() opened. */
struct mech {
	const struct mech_ops *ops;
	unsigned slots;            /* region capacity (libbakery only)       */
	unsigned holders;          /* k: holders at once (1: a mutex)        */
	char name[96];             /* the shm object / file name             */
	bakery_t *region;
	bakery_lock_t *lock;
	void *shm;                 /* robust mutex, ticket lock              */
	size_t shm_size;
	sem_t *sem;
	int fd;
	int err;                   /* why the last lock failed: an errno, or a
	                              BAKERY_E* code for libbakery */
};

extern const struct mech_ops *const mech_table[];
extern const unsigned mech_count;

/* A fresh instance with a unique object name; 0 or an errno. */
int mech_new(struct mech *m, const struct mech_ops *ops, unsigned slots);
/* The same, of HOLDERS units (a mechanism with counts_holders). */
int mech_new_holders(struct mech *m, const struct mech_ops *ops, unsigned slots,
                     unsigned holders);
void mech_free(struct mech *m);

/* --------------------------------------------------------- control block -- */


/* What one child process reports. */
struct child_result {
	uint64_t acquisitions;
	uint64_t owner_died;       /* acquisitions that reported a dead holder */
	uint64_t cpu_ns;           /* user + system time inside the measured part */
	uint64_t vcsw, ivcsw;      /* context switches inside the measured part */
	uint64_t sampled;          /* wait times timed (the reservoir keeps <= CAP) */
	uint64_t kept;             /* wait times in the reservoir            */
	uint64_t wait_max_ns;      /* largest timed wait                     */
	uint64_t acq_min, acq_max; /* k holders: the process's threads' fewest
	                              and most acquisitions */
	double value;              /* test-specific: best ns/op, a latency   */
	int64_t stamp_ns;          /* CLOCK_MONOTONIC time of the acquisition */
	int err;                   /* 0, or the error a call failed with (mech.err) */
} __attribute__((aligned(BENCH_CACHE_LINE)));

/* Phase words of the blocked-waiter and recovery scenarios (futex words). */
enum phase {
	PH_WAITER_READY,           /* the waiter has its handle and its slot  */
	PH_HELD,                   /* the holder holds the lock               */
	PH_WAITING,                /* the waiter is about to call lock        */
	PH_RELEASE,                /* the parent tells the holder to unlock   */
	PH_GO,                     /* the parent tells the late arriver to go */
	PH_ACQUIRED,               /* the late arriver holds the lock          */
	PH_COUNT
};

struct control {
	uint32_t ready __attribute__((aligned(BENCH_CACHE_LINE)));
	uint32_t go __attribute__((aligned(BENCH_CACHE_LINE)));
	uint32_t stop __attribute__((aligned(BENCH_CACHE_LINE)));
	uint32_t phase[PH_COUNT] __attribute__((aligned(BENCH_CACHE_LINE)));
	int64_t run_ns;            /* length of an uncontended run           */
	int64_t work_lo_ns, work_hi_ns;  /* contended: work outside the lock
	                              between passages, uniform in [lo, hi];
	                              0 = none (back to back) */
	uint32_t ping __attribute__((aligned(BENCH_CACHE_LINE)));  /* hand-over floor */
	struct occupancy occ;
	struct rw_occupancy rwocc; /* k holders: at most k inside            */
	unsigned threads;          /* k holders: threads per process         */
	struct child_result res[BENCH_MAX_PROCS];
	uint64_t samples[BENCH_MAX_PROCS][BENCH_SAMPLE_CAP];
};

/* ---------------------------------------------------------------- procs -- */

/* A shared anonymous mapping that children inherit; NULL on failure. */
struct control *control_new(void);
void control_reset(struct control *c);
void control_free(struct control *c);

int64_t now_ns(void);
void sleep_ns(int64_t ns);
/* Share (0..1) of all CPUs' time spent on other work during the next
 * INTERVAL_NS (we sleep meanwhile), from /proc/stat; -1 if unknown. */
double cpus_busy(int64_t interval_ns);

/* This process's CPU time and context switches so far. */
struct usage {
	uint64_t cpu_ns;           /* user + system                          */
	uint64_t vcsw, ivcsw;      /* voluntary (slept), involuntary (preempted) */
};
struct usage usage_self(void);
/* Into R: this process's CPU time and context switches since SINCE. */
void usage_into(struct child_result *r, const struct usage *since);

/* Futex-backed flags: set to a value and wake, wait until it is reached. */
void flag_set(uint32_t *word, uint32_t value);
void flag_wait(uint32_t *word, uint32_t value);
/* As flag_wait, giving up after TIMEOUT_NS; true if reached. */
bool flag_wait_for(uint32_t *word, uint32_t value, int64_t timeout_ns);
/* Sleep while WORD holds SEEN (returns at once if it no longer does;
 * may return early: the caller re-reads). */
void flag_wait_change(uint32_t *word, uint32_t seen);
/* Add one and wake (a counter of arrived children). */
void flag_inc(uint32_t *word);

/* Fork a child that runs FN(m, c, id) and _exits; its pid or -1. */
typedef void (*child_fn)(struct mech *m, struct control *c, unsigned id);
pid_t spawn(child_fn fn, struct mech *m, struct control *c, unsigned id);
/* Spawn up to N_WANT children running FN, wait until each has counted
 * ARRIVALS_EACH arrivals in c->ready (one per child, or one per thread of
 * each), start them together, let them run for DURATION_S and tell them
 * to stop.  The number spawned; the run's length in *ELAPSED_NS. */
unsigned run_children(child_fn fn, struct mech *m, struct control *c, pid_t *pids,
                      unsigned n_want, unsigned arrivals_each, double duration_s,
                      int64_t *elapsed_ns);
/* Reap the children by TIMEOUT_NS from now, SIGKILLing what is left
 * then; true if all exited by themselves with status 0. */
bool reap(const pid_t *pids, unsigned n, int64_t timeout_ns);

/* The critical section's body: swap our pid in, count, swap it out. */
/* The contended critical section's check, as process ME. */
void occupancy_visit(struct occupancy *o, int32_t me);

/* -------------------------------------------------------------- results -- */

enum test {
	T_UNCONTENDED,
	T_CONTENDED,
	T_BLOCKED,
	T_WAKE,                    /* holder unlocks, a sleeping waiter takes over */
	T_RECOVERY_WAITER,         /* holder SIGKILLed, a sleeping waiter takes over */
	T_RECOVERY_LATE,           /* holder SIGKILLed, then a late arrival locks */
	T_CONTENDED_WORK,          /* contended, with work outside the lock   */
	T_HANDOVER,                /* two processes pass a futex word back and forth */
	T_STOPPED,                 /* a waiter stopped in line: when does the next get in */
	T_HOLDERS,                 /* threads of several processes take a lock of k holders */
	T_CONTENDED_LOADED,        /* contended, beside CPU-bound processes at nice 19 */
	T_SCALING,                 /* contended, 2 to 64 processes: cost per acquisition */
	T_UNC_AFTER,               /* uncontended, after another process slept in the lock */
};

enum status { ST_OK, ST_NA, ST_VIOLATION, ST_ERROR, ST_HANG };

struct result {
	enum test test;
	const struct mech_ops *mech;
	unsigned slots;            /* 0 for non-libbakery mechanisms         */
	unsigned procs;
	unsigned holders;          /* k holders: k; else 1                   */
	unsigned threads;          /* k holders: threads per process; else 1 */
	enum status status;
	double ns_per_op;          /* uncontended                            */
	double acq_per_s, jain, max_min, cpu_ns_per_acq;   /* contended     */
	double vcsw_per_acq, ivcsw_per_acq;                 /* contended     */
	double handoff_ratio;      /* contended: share of acquisitions that changed holder */
	double wait_p50_ns, wait_p99_ns, wait_max_ns;      /* contended     */
	double cpu_ms_per_s;       /* blocked waiter: its CPU per second     */
	double latency_ns;         /* wake-up, recovery: median of the trials */
	double latency_max_ns;     /* wake-up, recovery: worst trial          */
	unsigned trials;
};

struct results {
	struct result *v;
	unsigned n, cap;
};

void result_init(struct result *r, enum test test, const struct mech_ops *mech,
                 unsigned slots, unsigned procs);
struct result *results_add(struct results *rs, enum test test,
                           const struct mech_ops *mech, unsigned slots, unsigned procs);
const struct result *results_find(const struct results *rs, enum test test,
                                  const char *mech, unsigned slots, unsigned procs);
struct result *results_get(struct results *rs, enum test test,
                           const char *mech, unsigned slots, unsigned procs);
/* The k-holder run of MECH with PROCS processes of THREADS threads, K
 * holders, or NULL. */
const struct result *results_find_holders(const struct results *rs, const char *mech,
                                          unsigned procs, unsigned threads, unsigned k);

/* -------------------------------------------------------------- options -- */

struct options {
	bool quick;
	double duration_s;         /* one contended run                     */
	unsigned rounds;           /* contended runs per case, median kept  */
	double blocked_s;          /* the blocked waiter's wait             */
	double unc_run_s;          /* one uncontended run                   */
	unsigned unc_runs;         /* uncontended rounds, best kept         */
	unsigned trials;           /* recovery trials                       */
	unsigned procs[3];         /* contended process counts              */
	unsigned nprocs;
	unsigned scaling[3];       /* process counts beyond them (scaling)  */
	unsigned nscaling;
	unsigned holders_procs[3]; /* k holders: processes ...              */
	unsigned nholders;
	unsigned holders_threads;  /* ... of this many threads each         */
	unsigned holders_k;        /* the k measured against k = 1          */
	double holders_s;          /* one k-holder run                      */
	unsigned background;       /* CPU-bound processes at nice 19 (loaded) */
	unsigned loaded_rounds;    /* loaded runs per case, median kept     */
	unsigned slots_small, slots_large;
	const char *csv_path;
	const char *only;          /* comma-separated mechanism names, or NULL */
	const char *tests;         /* comma-separated test names, or NULL     */
	double busy_start, busy_end;  /* share of the CPUs used by others, or -1 */
};

/* -------------------------------------------------------------- measure -- */

/* One round of the uncontended loop of OPS; AFTER: in a lock in which
 * another process has slept first (T_UNC_AFTER), past the passages after
 * which its mark wears off (AFTER_PASSES of the measured process). */
#define AFTER_PASSES 4096
void measure_uncontended(const struct options *o, struct control *c,
                         const struct mech_ops *ops, unsigned slots, struct results *rs,
                         bool after);
/* One run into R (initialised by result_init; R->test says whether with
 * work outside the lock). */
void measure_contended(const struct options *o, struct control *c, struct result *r);
/* One run of PROCS processes of R->threads threads on a lock of
 * R->holders holders (holders.c). */
void measure_holders(const struct options *o, struct control *c, struct result *r);
/* Start N CPU-bound processes at nice 19 (the loaded runs' background);
 * stop them.  PIDS holds at least N. */
void background_start(pid_t *pids, unsigned n);
void background_stop(pid_t *pids, unsigned n);
/* The futex hand-over floor: two processes pass the turn back and forth
 * with FUTEX_WAKE and FUTEX_WAIT; latency_ns is one hand-over. */
void measure_handover(const struct options *o, struct control *c, struct result *r);
void measure_blocked(const struct options *o, struct control *c,
                     const struct mech_ops *ops, unsigned slots, struct results *rs);
/* A waiter is SIGSTOPped while asleep in line, a later one queues behind
 * it, the holder releases: latency_ns is the release to the later one's
 * acquisition, INFINITY if it got in only once the stopped one was
 * continued (after BENCH_STOPPED_WAIT_NS). */
#define BENCH_STOPPED_WAIT_NS (500 * INT64_C(1000000))
void measure_stopped(const struct options *o, struct control *c,
                     const struct mech_ops *ops, unsigned slots, struct results *rs);
/* Wake-up after a release, and both recovery scenarios. */
void measure_recovery(const struct options *o, struct control *c,
                      const struct mech_ops *ops, unsigned slots, struct results *rs);

/* --------------------------------------------------------------- report -- */

double jain_index(const uint64_t *x, unsigned n);
/* Weighted percentiles over the children's reservoirs. */
void wait_percentiles(const struct control *c, unsigned procs, double *p50, double *p99);
double median(double *v, unsigned n);

void report_header(FILE *f, const struct options *o);
void report_tables(FILE *f, const struct options *o, const struct results *rs);
int report_csv(const char *path, const struct options *o, const struct results *rs);

#endif
