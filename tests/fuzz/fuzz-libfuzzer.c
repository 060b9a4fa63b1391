/* SPDX-License-Identifier: MIT */
/*
 * fuzz-libfuzzer.c - the libFuzzer entry point around fuzz_region_case().
 * Built only by tests/fuzz/run-fuzzer.sh (`make fuzz`), with clang's
 * -fsanitize=fuzzer,address,undefined; `make check` replays the corpus
 * through the same entry with replay.c instead.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz-region.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_region_case(data, size);
	return 0;
}
