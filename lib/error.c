/*
 * error.c - bakery_strerror() and the algorithm names.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "private.h"

/* One table for the library's own codes: value, message. */
#define BAKERY_ERRORS(X)                                                          \
	X(BAKERY_EBADREGION, "not a valid libbakery region (bad magic, truncated or corrupted)") \
	X(BAKERY_EVERSION,   "region created by an incompatible libbakery layout version") \
	X(BAKERY_EALGO,      "lock exists with an algorithm this handle cannot take part in") \
	X(BAKERY_ESLOTS,     "no free participant slot in the region")              \
	X(BAKERY_ELOCKS,     "no free entry in the region's lock table")

const char *bakery_strerror(int err)
{
	switch (err) {
#define X(code, msg) case code: return msg;
	BAKERY_ERRORS(X)
#undef X
	case 0:
		return "success";
	/* the errno values the API gives a meaning of its own */
	case EOWNERDEAD:
		return "lock acquired, but its previous holder died in the critical section";
	case ENOTRECOVERABLE:
		return "lock is not recoverable: it was released without bakery_consistent()";
	case EDEADLK:
		return "the calling thread already holds this lock";
	case EPERM:
		return "the calling thread does not hold this lock";
	default:
		break;
	}
#ifdef HAVE_STRERRORDESC_NP
	/* glibc's own fixed text; strerror() would format unknown numbers
	 * into a buffer the next call overwrites */
	if (err > 0 && strerrordesc_np(err))
		return strerrordesc_np(err);
#else
	if (err > 0 && err < 134)
		return strerror(err);
#endif
	return "unknown error";
}

static const char *const algo_names[BAKERY_ALGO_COUNT] = {
	[BAKERY_ALGO_DEFAULT] = "default",
	[BAKERY_ALGO_LAMPORT] = "lamport",
	[BAKERY_ALGO_BOULANGERIE] = "boulangerie",
	[BAKERY_ALGO_BLACK_WHITE] = "black-white",
	[BAKERY_ALGO_JAYANTI] = "jayanti",
};

const char *bakery_algo_name(enum bakery_algo algo)
{
	return (unsigned)algo < BAKERY_ALGO_COUNT ? algo_names[algo] : NULL;
}

int bakery_algo_parse(const char *name, enum bakery_algo *out)
{
	if (!name || !out)
		return EINVAL;
	for (unsigned i = 0; i < BAKERY_ALGO_COUNT; i++)
		if (!strcasecmp(name, algo_names[i])) {
			*out = (enum bakery_algo)i;
			return 0;
		}
	if (!strcasecmp(name, "black_white") || !strcasecmp(name, "bw")) {
		*out = BAKERY_ALGO_BLACK_WHITE;
		return 0;
	}
	if (!strcasecmp(name, "b-bakery")) {
		*out = BAKERY_ALGO_JAYANTI;
		return 0;
	}
	return EINVAL;
}
