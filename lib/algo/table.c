/* SPDX-License-Identifier: MIT */
/*
 * table.c - the table of algorithms: the one list of them, and the one
 * place their names (struct algo_ops.id, .name) are read and their
 * features (.modes, .doorway_biased) told to callers.  Above every
 * algorithm file, which knows nothing of the others.
 */
#include "config.h"

#include <strings.h>

#include "table.h"

static const struct algo_ops *const algos[] = {
	&bakery__algo_lamport,
	&bakery__algo_boulangerie,
	&bakery__algo_black_white,
	&bakery__algo_jayanti,
};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))
_Static_assert(NALGOS == BAKERY_ALGO_COUNT - 1, "an algorithm of enum bakery_algo is not in the table");

/* BAKERY_ALGO_DEFAULT is no algorithm, but has a name for the tools */
#define DEFAULT_NAME "default"

/* Other spellings bakery_algo_parse takes. */
static const struct {
	const char *name;
	enum bakery_algo id;
} aliases[] = {
	{ "black_white", BAKERY_ALGO_BLACK_WHITE },
	{ "bw",          BAKERY_ALGO_BLACK_WHITE },
	{ "b-bakery",    BAKERY_ALGO_JAYANTI },
};

const struct algo_ops *bakery__algo_ops_of(enum bakery_algo algo)
{
	for (unsigned i = 0; i < NALGOS; i++)
		if (algos[i]->id == algo)
			return algos[i];
	return NULL;
}

const char *bakery_algo_name(enum bakery_algo algo)
{
	const struct algo_ops *ops = bakery__algo_ops_of(algo);

	if (algo == BAKERY_ALGO_DEFAULT)
		return DEFAULT_NAME;
	return ops ? ops->name : NULL;
}

unsigned bakery_algo_features(enum bakery_algo algo)
{
	const struct algo_ops *ops = bakery__algo_ops_of(algo);

	if (!ops)
		return 0;       /* BAKERY_ALGO_DEFAULT too: no algorithm */
	return ((ops->modes & ALGO_SHARED) ? BAKERY_ALGO_HAS_SHARED : 0) |
	       ((ops->modes & ALGO_HOLDERS) ? BAKERY_ALGO_HAS_HOLDERS : 0) |
	       (ops->doorway_biased ? BAKERY_ALGO_HAS_BIAS : 0);
}

int bakery_algo_parse(const char *name, enum bakery_algo *out)
{
	if (!name || !out)
		return EINVAL;
	if (!strcasecmp(name, DEFAULT_NAME)) {
		*out = BAKERY_ALGO_DEFAULT;
		return 0;
	}
	for (unsigned i = 0; i < NALGOS; i++)
		if (!strcasecmp(name, algos[i]->name)) {
			*out = algos[i]->id;
			return 0;
		}
	for (unsigned i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcasecmp(name, aliases[i].name)) {
			*out = aliases[i].id;
			return 0;
		}
	return EINVAL;
}
