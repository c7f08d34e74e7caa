/* SPDX-License-Identifier: BSD-2-Clause
 * One fuzzing input through everything that reads untrusted bytes: the packet parser under every
 * link type, the tag header and marker decoders, and the pcap/pcapng reader with the analyzer
 * behind `trace summary` and `trace check`. Shared by the libFuzzer target and the bounded smoke
 * test that runs in `bazel test`. */
#ifndef TR_FUZZ_ENTRY_H
#define TR_FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the number of records the reader produced (for coverage statistics); never fails. */
int tr_fuzz_one(const uint8_t *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif
