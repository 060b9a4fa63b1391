/* SPDX-License-Identifier: MIT */
/*
 * bug-strerror-fixed.c - bakery.h: bakery_strerror returns "a fixed
 * string".  A caller may keep the pointer: a later call, for any value, must
 * not change or free the text it got before.  Checked for values in the errno
 * range that the C library has no name for (41 and 58 on Linux, 134..4095).
 *
 * A regression test: such values used to go to strerror(), whose
 * "Unknown error N" lives in a buffer the next call rewrites.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "unit.h"

START_TEST(earlier_message_survives_later_calls)
{
	static const int unnamed[] = { 41, 58, 200, 1000, 4095 };

	for (size_t i = 0; i < sizeof(unnamed) / sizeof(unnamed[0]); i++) {
		const char *m = bakery_strerror(unnamed[i]);
		char copy[256];

		snprintf(copy, sizeof(copy), "%s", m);
		bakery_strerror(unnamed[i] + 1);
		bakery_strerror(BAKERY_EBADREGION);
		ck_assert_msg(strcmp(m, copy) == 0,
		              "message of %d changed from \"%s\" to \"%s\"", unnamed[i], copy, m);
	}
}
END_TEST

static Suite *strerror_fixed_suite(void)
{
	Suite *s = suite_create("strerror-fixed");
	TCase *tc = tcase_create("strerror-fixed");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, earlier_message_survives_later_calls);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(strerror_fixed_suite());
}
