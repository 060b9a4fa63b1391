/* SPDX-License-Identifier: MIT */
/*
 * error.c - bakery_strerror() and bakery_errname().  The library's own
 * codes come from one list, BAKERY_ERRNO_MAP (bakery.h).  (The names of the
 * algorithms are read from their table: algo/table.c.)
 */
#include "config.h"

#include <string.h>

#include "private.h"

/* BAKERY_ERRNO_MAP lists the codes in the order of their values. */
enum {
#define X(code, msg) POSITION_##code,
	BAKERY_ERRNO_MAP(X)
#undef X
	POSITION_COUNT
};
#define X(code, msg) _Static_assert(BAKERY_##code == BAKERY_ERRBASE - POSITION_##code, \
                                    "BAKERY_ERRNO_MAP out of order at " #code);
BAKERY_ERRNO_MAP(X)
#undef X
_Static_assert(BAKERY_ERRLAST == BAKERY_ERRBASE - POSITION_COUNT + 1,
               "BAKERY_ERRLAST is not the last code of BAKERY_ERRNO_MAP");

const char *bakery_strerror(int err)
{
	switch (err) {
#define X(code, msg) case BAKERY_##code: return msg;
	BAKERY_ERRNO_MAP(X)
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
		return "not permitted: the calling thread does not hold this lock, the "
		       "region belongs to another user, or the handle is read-only";
	case ENOSPC:
		return "no space left in shared memory (/dev/shm is full)";
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

/* The names of the errno values the API documents (bakery(3), RETURN
 * VALUE), from our own table so that every C library gives the same ones:
 * glibc's strerrorname_np names Linux's one value of ENOTSUP and
 * EOPNOTSUPP "EOPNOTSUPP", and a C library without it has no names. */
static const char *documented_errno_name(int err)
{
	switch (err) {
#define E(code) case code: return #code;
	E(EINVAL) E(ENAMETOOLONG) E(ENOENT) E(EEXIST) E(EACCES) E(EBUSY)
	E(EAGAIN) E(ETIMEDOUT) E(EDEADLK) E(EPERM) E(EOWNERDEAD)
	E(ENOTRECOVERABLE) E(ENOMEM) E(EMFILE) E(ENFILE) E(ENOTSUP) E(ENOSPC)
	E(EFBIG) E(EINTR) E(ECANCELED) E(ENOTDIR) E(EISDIR) E(ELOOP)
#undef E
	default:
		return NULL;
	}
}

const char *bakery_errname(int err)
{
	const char *name;

	switch (err) {
#define X(code, msg) case BAKERY_##code: return "BAKERY_" #code;
	BAKERY_ERRNO_MAP(X)
#undef X
	case 0:
		return "0";
	default:
		break;
	}
	name = documented_errno_name(err);
#ifdef HAVE_STRERRORNAME_NP
	if (!name && err > 0)
		name = strerrorname_np(err);
#endif
	return name ? name : "UNKNOWN";
}
