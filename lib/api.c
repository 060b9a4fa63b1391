/* SPDX-License-Identifier: MIT */
/*
 * api.c - the region calls of the public API: bakery_open, bakery_close,
 * bakery_unlink, bakery_recover, bakery_region_size and
 * bakery_region_layout.  The top layer: it puts together the mapping
 * (region.c), the participants' slots (registry.c) and the per-lock half
 * of recovery (lock_recovery.c), which it registers in each handle.
 */
#include "config.h"

#include <sys/stat.h>

#include "lock_recovery.h"
#include "region.h"
#include "registry.h"

/* The object's identity (registry.c tells two handles of one object apart
 * from two regions by it, not by the names they were opened by). */
static int identity_record(struct bakery *b)
{
	struct stat st;

	if (fstat(b->fd, &st) < 0)
		return errno;
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	return 0;
}

static int api_close(bakery_t *b);

static int api_open(const char *name, unsigned flags, const struct bakery_config *cfg,
                    bakery_t **out)
{
	struct bakery *b;
	int err;

	if (!out ||
	    (flags & ~(BAKERY_CREATE | BAKERY_EXCL | BAKERY_NORECOVER | BAKERY_RDONLY |
	               BAKERY_ANY_OWNER)) ||
	    ((flags & BAKERY_EXCL) && !(flags & BAKERY_CREATE)) ||
	    ((flags & BAKERY_RDONLY) && (flags & BAKERY_CREATE)))
		return EINVAL;
	err = bakery__region_open(name, flags, cfg, &b);
	if (err)
		return err;
	if ((err = identity_record(b))) {
		bakery__region_close(b);
		return err;
	}
	b->recovery = &bakery__lock_recovery;
	/* whoever opens the region proves and clears deaths (unless told not
	 * to: BAKERY_NORECOVER; a BAKERY_RDONLY handle cannot write) */
	if (!(flags & (BAKERY_NORECOVER | BAKERY_RDONLY)))
		bakery__registry_reap(b, BAKERY_NO_SLOT);
	/* lost already (cut short, or a page /dev/shm could not give): say
	 * so now rather than hand out a handle that answers nothing else */
	if (region_lost(b)) {
		err = region_lost_error(b);
		api_close(b);
		return err;
	}
	*out = b;
	return 0;
}

static int api_close(bakery_t *b)
{
	if (!b || b->closed)
		return EINVAL;
	if (bakery__registry_holds_lock(b))
		return EBUSY;
	bakery__slot_release_self(b);
	bakery__region_close(b);
	return 0;
}

int bakery_unlink(const char *name)
{
	return bakery__region_unlink(name);
}

int bakery_region_size(const struct bakery_config *cfg, uint64_t *size)
{
	if (!size)
		return EINVAL;
	return bakery__region_size(cfg, size);
}

int bakery_region_layout(const char *name, unsigned *version)
{
	if (!version)
		return EINVAL;
	return bakery__region_layout(name, version);
}

static int api_recover(bakery_t *b, unsigned *reclaimed)
{
	unsigned self = BAKERY_NO_SLOT, n;

	if (!b || b->closed)
		return EINVAL;
	if (b->rdonly)
		return EPERM;
	if (region_lost(b))
		return region_lost_error(b);
	/* a slot of our own lets us finish proxy passages; not required (and
	 * kept ours meanwhile: registry.c may revoke an idle one) */
	if (bakery__slot_self(b, &self) || bakery__slot_busy_begin(b))
		self = BAKERY_NO_SLOT;
	n = bakery__registry_reap(b, self);
	if (self != BAKERY_NO_SLOT)
		bakery__slot_busy_end(b);
	if (reclaimed)
		*reclaimed = n;
	return 0;
}

/*
 * The calls that use the C library's cancellation points (open, close,
 * fopen, pread...) run with cancellation disabled (private.h): a thread
 * cancelled in them would leave a flock, a descriptor or a slot behind.
 */
int bakery_open(const char *name, unsigned flags, const struct bakery_config *cfg, bakery_t **out)
{
	int old = cancel_off(), err = api_open(name, flags, cfg, out);

	cancel_restore(old);
	return err;
}

int bakery_close(bakery_t *b)
{
	int old = cancel_off(), err = api_close(b);

	cancel_restore(old);
	return err;
}

int bakery_recover(bakery_t *b, unsigned *reclaimed)
{
	int old = cancel_off(), err = api_recover(b, reclaimed);

	cancel_restore(old);
	return err;
}
