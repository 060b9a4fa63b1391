/* SPDX-License-Identifier: MIT */
/*
 * run_job.c - one job of `bakery run` or `bakery flock`: open the lock,
 * take it and the job's lifetime lock, run the command, and give the lock
 * up as the command's ending says (run.h).
 *
 * Owner died: when the previous holder died inside its critical section,
 * the command runs anyway, with BAKERY_OWNER_DEAD=1 in its environment so
 * that it can repair what it protects.  Its exit status 0 says "repaired":
 * only then is the lock marked consistent.  Any other ending passes the
 * owner-died state on to the next job, which is told that a repair
 * failed, as does a command that dies of a signal: the lock is never left
 * unusable by the tool.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run.h"

/* Slots of a region that `bakery run` creates: every job waiting for a lock
 * holds one, and 64 (the library default) is met by a loop of background
 * jobs.  The cost is memory (2.7 MiB of /dev/shm against 720 KiB, all
 * reserved when the region is created), not time: the algorithms scan only
 * the slots that joined a lock. */
#define RUN_REGION_SLOTS 256u

/* ---------------------------------------------------------- opening -- */

/* The existing lock NAME's entry into *LI: true, or false if none. */
static bool lock_find(bakery_t *b, const char *name, struct bakery_lock_info *li)
{
	struct bakery_region_info r;

	if (bakery_region_info(b, &r))
		return false;
	for (unsigned i = 0; i < r.locks; i++)
		if (bakery_lock_info(b, i, li) == 0 && !strcmp(li->name, name))
			return true;
	return false;
}

/* Say on stderr what happened to the lock: `bakery run` does; `bakery
 * flock` is silent as flock(1) is, unless --verbose: a cron job's
 * mail must not change because its lock is a bakery lock.  Failures of
 * the tool itself are always reported (cli_fail). */
static __attribute__((format(printf, 3, 4)))
void job_say(const struct cli *c, const struct run_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->quiet && !o->verbose)
		return;
	va_start(ap, fmt);
	cli_vsay(c, fmt, ap);
	va_end(ap);
}

int run_conflict(const struct cli *c, const struct run_opts *o, const char *why)
{
	job_say(c, o, "%s", why);
	return o->codes.conflict;
}

static int lock_open_fail(struct cli *c, bakery_t *b, const struct run_opts *o, int err)
{
	struct bakery_lock_info li;

	if (err == EAGAIN)
		return run_conflict(c, o, "lock not acquired: the region's lock table is held by a "
		                "stopped process");
	if (err == BAKERY_EALGO && lock_find(b, o->lock, &li) && o->holders &&
	    li.capacity != o->holders)
		return cli_fail(c, "the lock admits %u holder%s; --holders %u cannot take part "
		                "in it", li.capacity, li.capacity == 1 ? "" : "s", o->holders);
	if (err == BAKERY_EALGO && lock_find(b, o->lock, &li) && o->biased &&
	    !(li.flags & BAKERY_LOCK_BIASED))
		return cli_fail(c, "the lock is not biased (it was created without --biased); "
		                "--biased cannot take part in it");
	if (err == BAKERY_EALGO && lock_find(b, o->lock, &li))
		return cli_fail(c, "the lock uses %s; --algo %s cannot take part in it",
		                bakery_algo_name(li.algo), bakery_algo_name(o->algo));
	/* the bias's revocation needs the expedited membarrier (bakery.h) */
	if (err == ENOTSUP && (o->biased || (lock_find(b, o->lock, &li) &&
	                                     (li.flags & BAKERY_LOCK_BIASED))))
		return cli_fail(c, "%s: a biased lock needs "
		                "membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which this system "
		                "refuses (its kernel or a seccomp profile)",
		                o->biased ? "--biased" : "the lock is biased");
	return cli_fail(c, "%s", bakery_strerror(err));
}

/* Open the lock O->lock of the region B (EAGAIN tried again: run_retry). */
static int lock_open(bakery_t *b, const struct run_opts *o, bakery_lock_t **l)
{
	struct bakery_lock_config cfg;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.algo = o->algo;
	cfg.holders = o->holders;
	cfg.flags = o->biased ? BAKERY_LOCK_BIASED : 0;
	do
		err = bakery_lock_open_config(b, o->lock, &cfg, l);
	while (run_retry(o, err));
	return err;
}

int run_named_open(struct cli *c, const struct run_opts *o, struct run_lock *k)
{
	const struct bakery_config cfg = { .slots = RUN_REGION_SLOTS };
	int err;

	memset(k, 0, sizeof(*k));
	if ((err = cli_open(c, o->region, BAKERY_CREATE | (o->any_owner ? BAKERY_ANY_OWNER : 0),
	                    &cfg, &k->b)))
		return err;
	if ((err = lock_open(k->b, o, &k->l))) {
		err = lock_open_fail(c, k->b, o, err);
		run_lock_close(k);
		return err;
	}
	k->region = o->region;
	k->name = o->lock;
	return 0;
}

/* ---------------------------------------------------------- locking -- */

/* A shared passage refused (ENOTSUP): why, from what K's lock is. */
static int no_shared_mode(struct cli *c, const struct run_lock *k)
{
	struct bakery_lock_info li;

	if (run_lock_info(k, &li))
		return cli_fail(c, "this lock has no shared mode");
	if (li.capacity > 1)
		return cli_fail(c, "this lock has no shared mode: it admits %u holders at once, "
		                "and shared mode is for locks of one", li.capacity);
	return cli_fail(c, "this lock has no shared mode: its algorithm, %s, has none",
	                bakery_algo_name(li.algo));
}

/* The lock call's error ERR on K as a message and an exit code. */
static int lock_fail(struct cli *c, const struct run_lock *k, const struct run_opts *o, int err)
{
	char why[96];

	if (err == EBUSY && o->wait == RUN_WAIT_NONE)
		return run_conflict(c, o, "lock is busy (--nonblock)");
	if (err == ETIMEDOUT || err == EBUSY) {
		snprintf(why, sizeof(why), "lock not acquired: timed out after %g s of waiting",
		         o->timeout);
		return run_conflict(c, o, why);
	}
	if (err == EAGAIN)
		return run_conflict(c, o, "lock not acquired: a stopped process holds up the "
		                "region's tables");
	if (err == BAKERY_ESLOTS && o->wait != RUN_WAIT_FOREVER)
		/* not a conflict: the lock was not even tried */
		return cli_fail(c, "lock not tried: every slot of region %s is taken by other "
		                "jobs, waiting or holding (%s; `bakery status %s` shows them)",
		                k->region, o->wait == RUN_WAIT_NONE ? "--nonblock" : "timed out",
		                k->region);
	if (err == ENOTSUP && o->shared)
		return no_shared_mode(c, k);
	if (err == ENOTRECOVERABLE)
		return cli_fail(c, "lock is not recoverable: a holder died and the repair "
		                "failed (`bakery reset` makes it usable again)");
	return cli_fail(c, "%s", bakery_strerror(err));
}

/* The lifetime lock could not be taken (ERR): the bakery lock was given
 * back; a signal that would have ended the wrapper ends it now. */
static int life_fail(struct cli *c, const struct run_opts *o, int err, int signo)
{
	char why[160];

	if (err == EINTR) {
		signal(signo, SIG_DFL);
		raise(signo);
		return 128 + signo;
	}
	if (err == EBUSY || err == ETIMEDOUT) {
		snprintf(why, sizeof(why), "lock not acquired: processes of a previous job still "
		         "run (%s)", err == EBUSY ? "--nonblock" : "timed out");
		return run_conflict(c, o, why);
	}
	return cli_fail(c, "the job's lifetime lock: %s", strerror(err));
}

/* Has a failed repair (not a death) left the lock owner-died?  The lock
 * is held: its state does not move under us. */
static bool repair_failed(const struct run_lock *k)
{
	struct bakery_lock_info li;

	return run_lock_info(k, &li) == 0 && li.owner_dead == BAKERY_OWNER_DEAD_UNREPAIRED;
}

static void tell_owner_dead(const struct cli *c, const struct run_opts *o, bool failed)
{
	/* (silent or not, the command gets OWNER_DEAD_ENV) */
	job_say(c, o, "%s; running the command with " OWNER_DEAD_ENV "=1%s",
	        failed ? "a holder died holding the lock, and the last job told so did not "
	                 "repair it (it failed or died)"
	               : "the previous holder died holding the lock",
	        o->shared ? " (a reader: it cannot repair)" : "");
}

/* What becomes of the lock after the command: only a command that ended by
 * itself, and repaired if it had to, lets the lock go as consistent. */
static enum run_verdict verdict_of(struct cli *c, const struct run_opts *o, bool owner_dead,
                                   int code, bool signaled)
{
	if (signaled && o->sigpipe_ok && code == 128 + SIGPIPE)
		signaled = false;      /* its reader went away: a normal end */
	if (signaled && o->shared) {
		/* a dead reader changed nothing: its share comes back and the
		 * lock is not marked owner-died (counted in reader_deaths) */
		job_say(c, o, "the command died of signal %d: its reader's share is given back",
		        code - 128);
		return RUN_ABANDON;
	}
	if (o->shared)
		return RUN_RELEASE;    /* a reader repairs nothing: its status says nothing */
	if (signaled) {
		job_say(c, o, "the command died of signal %d: lock left owner-died for the next "
		        "holder", code - 128);
		return RUN_ABANDON;
	}
	if (owner_dead && code != 0) {
		job_say(c, o, "the previous holder had died and the command exited with status "
		        "%d: lock left owner-died for the next holder", code);
		return RUN_ABANDON;
	}
	return RUN_RELEASE;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Both locks are held: run the command and give them up. */
static int job_run(struct cli *c, const struct run_opts *o, struct run_holder *h,
                   struct run_life *life, bool owner_dead)
{
	bool signaled;
	int code;

	if (o->verbose)
		cli_say(c, "running %s", o->argv[0]);
	if (o->no_fork) {
		/* the bakery lock cannot outlive the exec: the lifetime lock,
		 * which goes with the command, keeps the next job out; a mark
		 * found stays for the next job, as the repair cannot be seen */
		run_hold_finish(h, owner_dead ? RUN_ABANDON : RUN_RELEASE);
		return run_exec_in_place(c, o, owner_dead);
	}
	code = run_exec(c, o, owner_dead, &signaled);
	run_life_close(life);   /* first: the next job takes it right after */
	run_hold_finish(h, verdict_of(c, o, owner_dead, code, signaled));
	return code;
}

static int job_locked(struct cli *c, const struct run_lock *k, const struct run_opts *o)
{
	struct run_life life = { .fd = -1 };
	struct run_holder h;
	int err, signo = 0;
	bool owner_dead;

	if ((err = run_life_open(&life, k->region, k->name, run_lock_units(k), o)))
		return cli_fail(c, "the job's lifetime lock: %s", strerror(err));
	err = run_hold_start(&h, k, o);
	if (err != 0 && err != EOWNERDEAD) {
		run_life_close(&life);
		return lock_fail(c, k, o, err);
	}
	owner_dead = err == EOWNERDEAD;
	if ((err = run_life_take(&life, o, &signo))) {
		run_life_close(&life);
		run_hold_finish(&h, RUN_GIVE_BACK);
		return life_fail(c, o, err, signo);
	}
	if (o->verbose)
		cli_say(c, "got the lock in %.6f s", seconds_since(&o->started));
	if (owner_dead)
		tell_owner_dead(c, o, repair_failed(k));
	return job_run(c, o, &h, &life, owner_dead);
}

int run_job(struct cli *c, struct run_opts *o)
{
	struct run_lock k;
	int err;

	run_start_clock(o);
	err = o->file ? run_file_open(c, o, &k) : run_named_open(c, o, &k);
	if (err)
		return err;
	err = job_locked(c, &k, o);
	run_lock_close(&k);
	run_die_as_command();
	return err;
}
