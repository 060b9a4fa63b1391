/* SPDX-License-Identifier: MIT */
/*
 * test_version.c - the header's BAKERY_VERSION_* macros, bakery_version()
 * and configure.ac's AC_INIT version (config.h's PACKAGE_VERSION) agree.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "unit.h"

START_TEST(macros_match_configure)
{
	char from_macros[64];

	snprintf(from_macros, sizeof(from_macros), "%d.%d.%d", BAKERY_VERSION_MAJOR,
	         BAKERY_VERSION_MINOR, BAKERY_VERSION_PATCH);
	ck_assert_str_eq(from_macros, PACKAGE_VERSION);
}
END_TEST

START_TEST(library_reports_configure_version)
{
	ck_assert_ptr_nonnull(bakery_version());
	ck_assert_str_eq(bakery_version(), PACKAGE_VERSION);
	ck_assert_ptr_eq(bakery_version(), bakery_version());
}
END_TEST

START_TEST(version_number_orders_versions)
{
	ck_assert_int_eq(BAKERY_VERSION_NUMBER,
	                 BAKERY_VERSION_AT(BAKERY_VERSION_MAJOR, BAKERY_VERSION_MINOR,
	                                   BAKERY_VERSION_PATCH));
	ck_assert_int_lt(BAKERY_VERSION_AT(0, 9, 999), BAKERY_VERSION_AT(1, 0, 0));
	ck_assert_int_lt(BAKERY_VERSION_AT(1, 2, 3), BAKERY_VERSION_AT(1, 3, 0));
	ck_assert_int_lt(BAKERY_VERSION_AT(1, 2, 3), BAKERY_VERSION_AT(1, 2, 4));
}
END_TEST

static Suite *version_suite(void)
{
	Suite *s = suite_create("version");
	TCase *tc = tcase_create("version");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, macros_match_configure);
	tcase_add_test(tc, library_reports_configure_version);
	tcase_add_test(tc, version_number_orders_versions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(version_suite());
}
