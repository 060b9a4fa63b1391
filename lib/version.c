/* SPDX-License-Identifier: MIT */
/*
 * version.c - bakery_version(): the version of the library actually loaded,
 * built from the header's macros so that the two cannot disagree.
 */
#include "config.h"

#include "bakery.h"

#define BAKERY_STRINGIFY_(x) #x
#define BAKERY_STRINGIFY(x) BAKERY_STRINGIFY_(x)

BAKERY_API const char *bakery_version(void)
{
	return BAKERY_STRINGIFY(BAKERY_VERSION_MAJOR) "." BAKERY_STRINGIFY(BAKERY_VERSION_MINOR)
	       "." BAKERY_STRINGIFY(BAKERY_VERSION_PATCH);
}
