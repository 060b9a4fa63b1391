/* SPDX-License-Identifier: MIT */
/*
 * test_errors.c - bakery_strerror gives a fixed, non-empty string for every
 * library code (each its own), for errno values and for unknown values;
 * bakery_errname names them; the algorithm names and their parser agree.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

static const int library_codes[] = {
	BAKERY_EBADREGION, BAKERY_EVERSION, BAKERY_EALGO, BAKERY_ESLOTS, BAKERY_ELOCKS,
	BAKERY_EREMOVED, BAKERY_EREGIONS,
};
#define NCODES (sizeof(library_codes) / sizeof(library_codes[0]))

/* The errno values the API gives a meaning to. */
static const int contract_errnos[] = {
	EINVAL, ENAMETOOLONG, ENOENT, EEXIST, EACCES, EBUSY, ETIMEDOUT, EDEADLK, EPERM,
	EOWNERDEAD, ENOTRECOVERABLE, ENOMEM, EMFILE, EINTR, ECANCELED,
};

static void assert_message(int err)
{
	const char *m = bakery_strerror(err);
	char copy[256];

	ck_assert_msg(m != NULL, "no message for %d", err);
	ck_assert_msg(m[0] != '\0', "empty message for %d", err);
	/* asking again gives the same text (whether the first string outlives
	 * the second call is bug-strerror-fixed.c's business) */
	snprintf(copy, sizeof(copy), "%s", m);
	ck_assert_str_eq(bakery_strerror(err), copy);
}

START_TEST(library_codes_have_distinct_messages)
{
	/* the reserved block: BAKERY_ERRBASE down to BAKERY_ERRLAST */
	ck_assert_int_lt(BAKERY_ERRBASE, 0);
	ck_assert_int_eq(BAKERY_ERRBASE - (int)NCODES + 1, BAKERY_ERRLAST);
	for (size_t i = 0; i < NCODES; i++) {
		assert_message(library_codes[i]);
		ck_assert_ptr_eq(bakery_strerror(library_codes[i]), bakery_strerror(library_codes[i]));
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(bakery_strerror(library_codes[i]),
			                 bakery_strerror(library_codes[j]));
		/* not mistaken for an unknown value or for an errno */
		ck_assert_str_ne(bakery_strerror(library_codes[i]), bakery_strerror(BAKERY_ERRLAST - 1));
		for (size_t j = 0; j < sizeof(contract_errnos) / sizeof(contract_errnos[0]); j++)
			ck_assert_str_ne(bakery_strerror(library_codes[i]),
			                 bakery_strerror(contract_errnos[j]));
	}
}
END_TEST

START_TEST(errno_values_have_messages)
{
	for (size_t i = 0; i < sizeof(contract_errnos) / sizeof(contract_errnos[0]); i++)
		assert_message(contract_errnos[i]);
	for (int e = 1; e < 134; e++)
		assert_message(e);
	/* the ones that matter are told apart */
	ck_assert_str_ne(bakery_strerror(EOWNERDEAD), bakery_strerror(ENOTRECOVERABLE));
	ck_assert_str_ne(bakery_strerror(EBUSY), bakery_strerror(ETIMEDOUT));
	ck_assert_str_ne(bakery_strerror(EPERM), bakery_strerror(EDEADLK));
	/* a plain errno reads as the system's own message */
	ck_assert_str_eq(bakery_strerror(ENOENT), strerror(ENOENT));
	ck_assert_str_eq(bakery_strerror(EEXIST), strerror(EEXIST));
	assert_message(0);
}
END_TEST

START_TEST(unknown_values_have_a_message)
{
	static const int unknown[] = {
		-1, -4096, BAKERY_ERRBASE + 1, BAKERY_ERRLAST - 1, BAKERY_ERRLAST - 1000,
		INT_MIN, INT_MAX, 100000,
	};

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_message(unknown[i]);
		for (size_t j = 0; j < NCODES; j++)
			ck_assert_str_ne(bakery_strerror(unknown[i]), bakery_strerror(library_codes[j]));
	}
}
END_TEST

START_TEST(error_names)
{
	static const char *const library_names[] = {
		"BAKERY_EBADREGION", "BAKERY_EVERSION", "BAKERY_EALGO", "BAKERY_ESLOTS",
		"BAKERY_ELOCKS", "BAKERY_EREMOVED", "BAKERY_EREGIONS",
	};
	static const int unknown[] = {
		-1, -4096, BAKERY_ERRBASE + 1, BAKERY_ERRLAST - 1, INT_MIN, INT_MAX, 100000,
	};
	size_t listed = 0;

	for (size_t i = 0; i < NCODES; i++)
		ck_assert_str_eq(bakery_errname(library_codes[i]), library_names[i]);
	/* the list in bakery.h names each code once, with bakery_strerror's
	 * message, in the order of the values */
#define X(code, msg)                                                           \
	ck_assert_str_eq(bakery_errname(BAKERY_##code), "BAKERY_" #code);        \
	ck_assert_str_eq(bakery_strerror(BAKERY_##code), msg);                  \
	ck_assert_int_eq(BAKERY_##code, library_codes[listed]);                 \
	listed++;
	BAKERY_ERRNO_MAP(X)
#undef X
	ck_assert_uint_eq(listed, NCODES);
	/* every errno value bakery(3) documents, by the name it documents
	 * (ENOTSUP, not glibc's "EOPNOTSUPP" for the same value) */
#define N(code) ck_assert_str_eq(bakery_errname(code), #code);
	N(EACCES) N(EAGAIN) N(EBUSY) N(ECANCELED) N(EDEADLK) N(EEXIST) N(EINTR)
	N(EINVAL) N(EISDIR) N(ELOOP) N(EMFILE) N(ENAMETOOLONG) N(ENOENT)
	N(ENOMEM) N(ENOSPC) N(ENOTDIR) N(ENOTRECOVERABLE) N(ENOTSUP)
	N(EOWNERDEAD) N(EPERM) N(ETIMEDOUT) N(ENFILE) N(EFBIG)
#undef N
	ck_assert_str_eq(bakery_errname(0), "0");
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		ck_assert_str_eq(bakery_errname(unknown[i]), "UNKNOWN");
}
END_TEST

START_TEST(algorithm_names_round_trip)
{
	for (int a = BAKERY_ALGO_DEFAULT; a < BAKERY_ALGO_COUNT; a++) {
		const char *n = bakery_algo_name((enum bakery_algo)a);
		enum bakery_algo back = (enum bakery_algo)-1;

		ck_assert_ptr_nonnull(n);
		ck_assert_int_gt(strlen(n), 0);
		ck_assert_int_eq(bakery_algo_parse(n, &back), 0);
		ck_assert_int_eq(back, a);
		for (int b = BAKERY_ALGO_DEFAULT; b < a; b++)
			ck_assert_str_ne(n, bakery_algo_name((enum bakery_algo)b));
	}
	ck_assert_str_eq(bakery_algo_name(BAKERY_ALGO_LAMPORT), "lamport");
	ck_assert_str_eq(bakery_algo_name(BAKERY_ALGO_BOULANGERIE), "boulangerie");
	ck_assert_str_eq(bakery_algo_name(BAKERY_ALGO_BLACK_WHITE), "black-white");
	ck_assert_str_eq(bakery_algo_name(BAKERY_ALGO_JAYANTI), "jayanti");
	ck_assert_str_eq(bakery_algo_name(BAKERY_ALGO_DEFAULT), "default");
	ck_assert_ptr_null(bakery_algo_name((enum bakery_algo)BAKERY_ALGO_COUNT));
	ck_assert_ptr_null(bakery_algo_name((enum bakery_algo)-1));
}
END_TEST

START_TEST(algorithm_parse_aliases_and_errors)
{
	enum bakery_algo a = BAKERY_ALGO_DEFAULT;

	ck_assert_int_eq(bakery_algo_parse("black_white", &a), 0);
	ck_assert_int_eq(a, BAKERY_ALGO_BLACK_WHITE);
	a = BAKERY_ALGO_DEFAULT;
	ck_assert_int_eq(bakery_algo_parse("bw", &a), 0);
	ck_assert_int_eq(a, BAKERY_ALGO_BLACK_WHITE);
	a = BAKERY_ALGO_LAMPORT;
	ck_assert_int_eq(bakery_algo_parse("nonsense", &a), EINVAL);
	ck_assert_int_eq(a, BAKERY_ALGO_LAMPORT);          /* untouched on error */
	ck_assert_int_eq(bakery_algo_parse("", &a), EINVAL);
	ck_assert_int_eq(bakery_algo_parse("lamport ", &a), EINVAL);
	ck_assert_int_eq(bakery_algo_parse(NULL, &a), EINVAL);
	ck_assert_int_eq(bakery_algo_parse("lamport", NULL), EINVAL);
}
END_TEST

static Suite *errors_suite(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("strings");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, library_codes_have_distinct_messages);
	tcase_add_test(tc, errno_values_have_messages);
	tcase_add_test(tc, unknown_values_have_a_message);
	tcase_add_test(tc, error_names);
	tcase_add_test(tc, algorithm_names_round_trip);
	tcase_add_test(tc, algorithm_parse_aliases_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(errors_suite());
}
