/* SPDX-License-Identifier: BSD-2-Clause
 * libFuzzer target: traces/fuzz/run_fuzz.sh builds and runs it. */
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tr_fuzz_one(data, size);
	return 0;
}
