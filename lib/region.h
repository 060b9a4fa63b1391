/* SPDX-License-Identifier: MIT */
/*
 * region.h - region.c: names, creating, opening and unlinking a region,
 * and the handle's references.
 */
#ifndef BAKERY_REGION_H
#define BAKERY_REGION_H

#include "handle.h"

BAKERY_HIDDEN int bakery__name_check(const char *name, size_t max);
/* Map the region NAME (bakery_open's flags and config, already checked):
 * a new handle with one reference, the user's. */
BAKERY_HIDDEN int bakery__region_open(const char *name, unsigned flags,
                                      const struct bakery_config *cfg, struct bakery **out);
/* Mark the handle closed and drop the user's reference. */
BAKERY_HIDDEN void bakery__region_close(struct bakery *b);
BAKERY_HIDDEN int bakery__region_unlink(const char *name);
/* The layout version in the header of the region NAME, read without
 * attaching (bakery_region_layout). */
BAKERY_HIDDEN int bakery__region_layout(const char *name, unsigned *version);
/* The bytes of shared memory a region created with CFG takes. */
BAKERY_HIDDEN int bakery__region_size(const struct bakery_config *cfg, uint64_t *size);
/* References: the user's handle and each thread slot hold one; the last
 * put unmaps and frees the handle. */
BAKERY_HIDDEN void bakery__region_get(struct bakery *b);
BAKERY_HIDDEN void bakery__region_put(struct bakery *b);
/* How many handles this process has closed so far (a full barrier orders
 * each handle's `closed` flag before its count): one load, on every lock
 * call (registry.h).  Written by region.c only. */
BAKERY_HIDDEN extern unsigned long bakery__closes;
static inline unsigned long bakery__region_closes(void)
{
	return uatomic_read(&bakery__closes);
}
/* FN for every open handle (fork child only: no locking). */
BAKERY_HIDDEN void bakery__region_for_each(void (*fn)(struct bakery *b));

#endif /* BAKERY_REGION_H */
