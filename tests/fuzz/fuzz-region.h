/* SPDX-License-Identifier: MIT */
/*
 * fuzz-region.h - the one entry point shared by the libFuzzer harness
 * (fuzz-libfuzzer.c, `make fuzz`) and the corpus replay run by `make check`
 * (replay.c): both feed a byte string through exactly the same code.
 */
#ifndef BAKERY_FUZZ_REGION_H
#define BAKERY_FUZZ_REGION_H

#include <stddef.h>
#include <stdint.h>

/* Inputs longer than this are cut: a region of the template configurations
 * is 12 KiB, and longer inputs only slow the fuzzer down. */
#define FUZZ_MAX_INPUT 16384

/*
 * Run one input.  Returns normally when every answer of the library was one
 * its API documents; prints what went wrong and calls abort() otherwise (a
 * crash inside the library is caught by the sanitizers, or by the replay's
 * parent watching the child's status).
 */
void fuzz_region_case(const uint8_t *data, size_t size);

#endif
