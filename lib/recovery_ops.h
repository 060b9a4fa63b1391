/* SPDX-License-Identifier: MIT */
/*
 * recovery_ops.h - the per-lock half of crash recovery, as the slot layers
 * (revoke.c, registry.c) see it: registered in each handle at open (api.c:
 * lock_recovery.c's), so that the layers that prove deaths and own the
 * slots reach per-lock state without calling up into the lock layer.
 * SLOT's token is held by the caller, except for slot_idle.
 */
#ifndef BAKERY_RECOVERY_OPS_H
#define BAKERY_RECOVERY_OPS_H

#include "handle.h"

struct recovery_ops {
	/* Clear SLOT's part in every lock (DEAD: its owner died holding the
	 * token; record an owner death where it held the lock). */
	void (*clear_slot)(struct bakery *b, unsigned slot, bool dead);
	/* Drive SLOT's pending proxy passages without blocking, as the
	 * finisher HELPER; true when none is left. */
	bool (*finish_proxies)(struct bakery *b, unsigned slot, unsigned helper);
	/* Is a proxy passage of SLOT still pending in some lock? */
	bool (*proxies_pending)(struct bakery *b, unsigned slot);
	/* Does SLOT's owner hold a lock? */
	bool (*holds_lock)(struct bakery *b, unsigned slot);
	/* Is SLOT out of every lock: no stage, doorway, ticket, proxy
	 * passage or pass of it (a slot that may be revoked)? */
	bool (*slot_idle)(struct bakery *b, unsigned slot);
};

#endif /* BAKERY_RECOVERY_OPS_H */
