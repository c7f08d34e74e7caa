/* SPDX-License-Identifier: BSD-2-Clause
 * The ABI table: every name in abi_manifest.inc evaluated against one set of
 * headers. abi_table.c is compiled twice, against our headers
 * (abi_table_ours) and against Debian's (abi_table_debian); the two tables
 * have the same entries in the same order and must hold the same values.
 */
#ifndef ABI_TABLE_H
#define ABI_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum abi_category {
	ABI_CAT_GUARD,      /* which headers this table was built against */
	ABI_CAT_CONSTANT,   /* macro and enum values, their types, enum sizes */
	ABI_CAT_MACRO,      /* macros that must exist, function-like values */
	ABI_CAT_STRUCT,     /* struct/union size and alignment */
	ABI_CAT_FIELD,      /* member offset, size, type */
	ABI_CAT_FUNCTION,   /* extern and inline function types */
};

struct abi_entry {
	enum abi_category category;
	const char       *name;    /* e.g. "field fi_info.caps offset" */
	uint64_t          value;
	const char       *text;    /* string-valued entries, else NULL */
	const char       *expect;  /* libfabric's spelling, for type checks */
};

const struct abi_entry *abi_table_ours(size_t *count);
const struct abi_entry *abi_table_debian(size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* ABI_TABLE_H */
