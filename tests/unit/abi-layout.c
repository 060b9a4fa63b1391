/* SPDX-License-Identifier: MIT */
/*
 * abi-layout.c - the layout of every public struct of bakery.h, as this
 * compiler builds it: one line per struct and one per member,
 *
 *   struct NAME SIZE
 *   member NAME.MEMBER OFFSET SIZE
 *
 * and one per value of the enums the mirrors name, `value NAME VALUE`.
 * python/tests/test_abi.py compares them with the ctypes mirrors of
 * python/bakery/_native.py (a mirror that drifted would make the library
 * write past a Python buffer).  The lists below must name every member: the
 * program fails when a hole between two listed members, or after the last,
 * is wider than padding can be (a member missing here).
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bakery.h"

struct member {
	const char *name;
	size_t offset, size, align;
};

#define MEMBER(type, m)                                                     \
	{ #m, offsetof(struct type, m), sizeof(((struct type *)0)->m),          \
	  _Alignof(__typeof__(((struct type *)0)->m)) }
#define END { NULL, 0, 0, 0 }

static const struct member config[] = {
	MEMBER(bakery_config, slots),
	MEMBER(bakery_config, locks),
	MEMBER(bakery_config, mode),
	MEMBER(bakery_config, reserved),
	END
};

static const struct member lock_config[] = {
	MEMBER(bakery_lock_config, algo),
	MEMBER(bakery_lock_config, holders),
	MEMBER(bakery_lock_config, flags),
	MEMBER(bakery_lock_config, reserved),
	END
};

static const struct member region_info[] = {
	MEMBER(bakery_region_info, version),
	MEMBER(bakery_region_info, slots),
	MEMBER(bakery_region_info, locks),
	MEMBER(bakery_region_info, slots_used),
	MEMBER(bakery_region_info, locks_used),
	MEMBER(bakery_region_info, size),
	MEMBER(bakery_region_info, creator_pid),
	MEMBER(bakery_region_info, creator_uid),
	MEMBER(bakery_region_info, created_ns),
	MEMBER(bakery_region_info, mode),
	MEMBER(bakery_region_info, reserved),
	END
};

static const struct member slot_info[] = {
	MEMBER(bakery_slot_info, index),
	MEMBER(bakery_slot_info, state),
	MEMBER(bakery_slot_info, alive),
	MEMBER(bakery_slot_info, pid),
	MEMBER(bakery_slot_info, tid),
	MEMBER(bakery_slot_info, start_time),
	MEMBER(bakery_slot_info, pass),
	MEMBER(bakery_slot_info, lock),
	MEMBER(bakery_slot_info, shared),
	MEMBER(bakery_slot_info, reserved),
	END
};

static const struct member lock_info[] = {
	MEMBER(bakery_lock_info, index),
	MEMBER(bakery_lock_info, name),
	MEMBER(bakery_lock_info, algo),
	MEMBER(bakery_lock_info, holder),
	MEMBER(bakery_lock_info, waiters),
	MEMBER(bakery_lock_info, participants),
	MEMBER(bakery_lock_info, owner_dead),
	MEMBER(bakery_lock_info, not_recoverable),
	MEMBER(bakery_lock_info, acquisitions),
	MEMBER(bakery_lock_info, recoveries),
	MEMBER(bakery_lock_info, owner_deaths),
	MEMBER(bakery_lock_info, aborts),
	MEMBER(bakery_lock_info, capacity),
	MEMBER(bakery_lock_info, holding),
	MEMBER(bakery_lock_info, readers),
	MEMBER(bakery_lock_info, reader_deaths),
	MEMBER(bakery_lock_info, passes),
	MEMBER(bakery_lock_info, state),
	MEMBER(bakery_lock_info, flags),
	MEMBER(bakery_lock_info, bias_slot),
	MEMBER(bakery_lock_info, bias_revocations),
	MEMBER(bakery_lock_info, reserved),
	END
};

#define STRUCT(type, list) { #type, sizeof(struct type), _Alignof(struct type), list }

static const struct layout {
	const char *name;
	size_t size, align;
	const struct member *members;
} structs[] = {
	STRUCT(bakery_config, config),
	STRUCT(bakery_lock_config, lock_config),
	STRUCT(bakery_region_info, region_info),
	STRUCT(bakery_slot_info, slot_info),
	STRUCT(bakery_lock_info, lock_info),
};

#define VALUE(name) { #name, name }

static const struct value {
	const char *name;
	long value;
} values[] = {
	VALUE(BAKERY_SLOT_FREE),
	VALUE(BAKERY_SLOT_ACTIVE),
	VALUE(BAKERY_SLOT_RECOVERING),
	VALUE(BAKERY_LOCK_OK),
	VALUE(BAKERY_LOCK_NOT_RECOVERABLE),
	VALUE(BAKERY_LOCK_OWNER_DIED),
	VALUE(BAKERY_LOCK_REMOVING),
};

/* Print S; false if its members leave a hole padding cannot explain. */
static bool print_struct(const struct layout *s)
{
	size_t end = 0;
	bool whole = true;

	printf("struct %s %zu\n", s->name, s->size);
	for (const struct member *m = s->members; m->name; m++) {
		printf("member %s.%s %zu %zu\n", s->name, m->name, m->offset, m->size);
		if (m->offset < end || m->offset - end >= m->align) {
			fprintf(stderr, "abi-layout: struct %s: a member before %s is not listed\n",
			        s->name, m->name);
			whole = false;
		}
		end = m->offset + m->size;
	}
	if (s->size - end >= s->align) {
		fprintf(stderr, "abi-layout: struct %s: a member at its end is not listed\n", s->name);
		whole = false;
	}
	return whole;
}

int main(void)
{
	bool whole = true;

	for (size_t i = 0; i < sizeof(structs) / sizeof(structs[0]); i++)
		whole &= print_struct(&structs[i]);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		printf("value %s %ld\n", values[i].name, values[i].value);
	return whole ? 0 : 1;
}
