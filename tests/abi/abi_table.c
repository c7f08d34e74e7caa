/* SPDX-License-Identifier: BSD-2-Clause
 * Evaluates every name of abi_manifest.inc against one set of libfabric
 * headers. Compiled twice: with -DABI_SIDE=ours (depends on //api:headers)
 * and with -DABI_SIDE=debian (no dependency, so <rdma/...> is
 * /usr/include/rdma). Each build exports abi_table_<side>().
 *
 * What each manifest line turns into (names are "<kind> <name> <what>"):
 *   ABI_CONST       value (as uint64_t, negative values sign-extended),
 *                   sizeof and signedness of its type, and "is a macro"
 *   ABI_STRCONST    the string, and "is a macro"
 *   ABI_MACRO(_FN)  "is a macro" (an expansion differs from the name)
 *   ABI_ENUMERATOR  value, and "is a macro" (must be 0: enum, not #define)
 *   ABI_ENUM        sizeof
 *   ABI_TYPEDEF     sizeof, type compatible with libfabric's spelling
 *   ABI_STRUCT      sizeof, alignment
 *   ABI_FIELD       offset, size, type compatible, type class
 *   ABI_FUNC        type compatible with libfabric's prototype
 *   ABI_INLINE      the same, after taking its address (a missing inline,
 *                   or a macro in its place, fails the build)
 * Type checks are 1 when __builtin_types_compatible_p accepts libfabric's
 * spelling of the type; on the Debian side they are 1 by construction.
 */
#include <string.h>

#include "tests/abi/abi_includes.h"
#include "tests/abi/abi_table.h"

#ifndef ABI_SIDE
#error "compile with -DABI_SIDE=ours or -DABI_SIDE=debian"
#endif

#define ABI_MAX_ENTRIES 8192

static struct abi_entry table[ABI_MAX_ENTRIES];
static size_t ntable;

static void add(enum abi_category cat, const char *name, uint64_t value,
		const char *text, const char *expect)
{
	if (ntable == ABI_MAX_ENTRIES)
		return; /* the test notices the count is off */
	table[ntable].category = cat;
	table[ntable].name = name;
	table[ntable].value = value;
	table[ntable].text = text;
	table[ntable].expect = expect;
	ntable++;
}

/* A name is a macro when its expansion, as text, is not the name itself;
 * for function-like macros the comparison is on a sample invocation. */
static uint64_t differs(const char *a, const char *b)
{
	return strcmp(a, b) != 0;
}

/* Through a volatile so the compiler cannot fold "address != NULL". */
static uintptr_t address_of(void (*fn)(void))
{
	void (*volatile keep)(void) = fn;

	return (uintptr_t)keep;
}

#define ADD(cat, name, value) add(cat, name, (uint64_t)(value), NULL, NULL)
#define ADD_TYPE(cat, name, value, type) \
	add(cat, name, (uint64_t)(value), NULL, type)

#define MEMBER(tag, path) (((struct tag *)0)->path)

/* Run-time part of the checks, for what needs a function (container_of,
 * FI_CHECK_OP on a real table). */
static void add_function_like_values(void)
{
	struct abi_probe {
		int  a;
		char pad[12];
		long b;
	} probe;
	int arr[7];
	struct fi_ops ops;
	struct fi_ops *opsp = &ops;

	ADD(ABI_CAT_MACRO, "value FI_VERSION(1, 17)", FI_VERSION(1, 17));
	ADD(ABI_CAT_MACRO, "value FI_VERSION(2, 0)", FI_VERSION(2, 0));
	ADD(ABI_CAT_MACRO, "value FI_MAJOR(FI_VERSION(1, 17))",
	    FI_MAJOR(FI_VERSION(1, 17)));
	ADD(ABI_CAT_MACRO, "value FI_MINOR(FI_VERSION(1, 17))",
	    FI_MINOR(FI_VERSION(1, 17)));
	ADD(ABI_CAT_MACRO, "value FI_VERSION_GE(1.17, 1.5)",
	    FI_VERSION_GE(FI_VERSION(1, 17), FI_VERSION(1, 5)));
	ADD(ABI_CAT_MACRO, "value FI_VERSION_GE(1.5, 1.17)",
	    FI_VERSION_GE(FI_VERSION(1, 5), FI_VERSION(1, 17)));
	ADD(ABI_CAT_MACRO, "value FI_VERSION_LT(1.5, 1.17)",
	    FI_VERSION_LT(FI_VERSION(1, 5), FI_VERSION(1, 17)));
	ADD(ABI_CAT_MACRO, "value FI_VERSION_LT(1.17, 1.17)",
	    FI_VERSION_LT(FI_VERSION(1, 17), FI_VERSION(1, 17)));
	ADD(ABI_CAT_MACRO, "value count_of(int[7])", count_of(arr));
	ADD(ABI_CAT_MACRO, "value container_of(&p.b, struct, b) == &p",
	    container_of(&probe.b, struct abi_probe, b) == &probe);

	memset(&ops, 0, sizeof(ops));
	ops.ops_set = (int (*)(struct fid *, const char *, uint64_t, void *,
			       void *))(uintptr_t)1;
	ops.size = sizeof(ops);
	ADD(ABI_CAT_MACRO, "value FI_CHECK_OP(full table)",
	    FI_CHECK_OP(opsp, struct fi_ops, ops_set) ? 1 : 0);
	ops.size = offsetof(struct fi_ops, ops_set);
	ADD(ABI_CAT_MACRO, "value FI_CHECK_OP(size == offsetof)",
	    FI_CHECK_OP(opsp, struct fi_ops, ops_set) ? 1 : 0);
	ops.size = sizeof(ops);
	ops.ops_set = NULL;
	ADD(ABI_CAT_MACRO, "value FI_CHECK_OP(slot NULL)",
	    FI_CHECK_OP(opsp, struct fi_ops, ops_set) ? 1 : 0);
	opsp = NULL;
	ADD(ABI_CAT_MACRO, "value FI_CHECK_OP(table NULL)",
	    FI_CHECK_OP(opsp, struct fi_ops, ops_set) ? 1 : 0);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wsign-compare"

static void build(void)
{
#ifdef FABSIM_RDMA_HEADERS
	ADD(ABI_CAT_GUARD, "FABSIM_RDMA_HEADERS defined", 1);
#else
	ADD(ABI_CAT_GUARD, "FABSIM_RDMA_HEADERS defined", 0);
#endif

#define ABI_CONST(n)                                                        \
	ADD(ABI_CAT_CONSTANT, "const " #n " value", (n));                   \
	ADD(ABI_CAT_CONSTANT, "const " #n " sizeof", sizeof(n));            \
	ADD(ABI_CAT_CONSTANT, "const " #n " signed", ((n) * 0 - 1) < 0);    \
	ADD(ABI_CAT_CONSTANT, "const " #n " is a macro",                    \
	    differs(#n, ABI_XSTR(n)));
#define ABI_STRCONST(n)                                                     \
	add(ABI_CAT_CONSTANT, "string " #n " value", 0, n, NULL);           \
	ADD(ABI_CAT_CONSTANT, "string " #n " is a macro",                   \
	    differs(#n, ABI_XSTR(n)));
#define ABI_MACRO(n)                                                        \
	ADD(ABI_CAT_MACRO, "macro " #n " is a macro",                       \
	    differs(#n, ABI_XSTR(n)));
#define ABI_MACRO_FN(n, args)                                               \
	ADD(ABI_CAT_MACRO, "macro " #n #args " is a macro",                 \
	    differs(ABI_STR(n args), ABI_XSTR(n args)));
#define ABI_ENUMERATOR(n)                                                   \
	ADD(ABI_CAT_CONSTANT, "enumerator " #n " value", (int64_t)(n));     \
	ADD(ABI_CAT_CONSTANT, "enumerator " #n " is a macro",               \
	    differs(#n, ABI_XSTR(n)));
#define ABI_ENUM(tag)                                                       \
	ADD(ABI_CAT_CONSTANT, "enum " #tag " sizeof", sizeof(enum tag));
#define ABI_TYPEDEF(n, ...)                                                 \
	ADD(ABI_CAT_CONSTANT, "typedef " #n " sizeof", sizeof(n));          \
	ADD_TYPE(ABI_CAT_CONSTANT, "typedef " #n " type",                   \
		 __builtin_types_compatible_p(n, __VA_ARGS__), #__VA_ARGS__);
#define ABI_STRUCT(tag)                                                     \
	ADD(ABI_CAT_STRUCT, "struct " #tag " sizeof", sizeof(struct tag));  \
	ADD(ABI_CAT_STRUCT, "struct " #tag " alignof", _Alignof(struct tag));
#define ABI_UNION(tag)                                                      \
	ADD(ABI_CAT_STRUCT, "union " #tag " sizeof", sizeof(union tag));    \
	ADD(ABI_CAT_STRUCT, "union " #tag " alignof", _Alignof(union tag));
#define ABI_FIELD_OFFSET(tag, path)                                         \
	ADD(ABI_CAT_FIELD, "field " #tag "." #path " offset",               \
	    offsetof(struct tag, path));
#define ABI_FIELD(tag, path, ...)                                           \
	ABI_FIELD_OFFSET(tag, path)                                         \
	ADD(ABI_CAT_FIELD, "field " #tag "." #path " sizeof",               \
	    sizeof(MEMBER(tag, path)));                                     \
	ADD_TYPE(ABI_CAT_FIELD, "field " #tag "." #path " type",            \
		 __builtin_types_compatible_p(__typeof__(MEMBER(tag, path)), \
					      __VA_ARGS__),                 \
		 #__VA_ARGS__);                                             \
	ADD(ABI_CAT_FIELD, "field " #tag "." #path " type class",           \
	    __builtin_classify_type(MEMBER(tag, path)));
#define ABI_FIELD_ANON(tag, path)                                           \
	ABI_FIELD_OFFSET(tag, path)                                         \
	ADD(ABI_CAT_FIELD, "field " #tag "." #path " sizeof",               \
	    sizeof(MEMBER(tag, path)));                                     \
	ADD(ABI_CAT_FIELD, "field " #tag "." #path " type class",           \
	    __builtin_classify_type(MEMBER(tag, path)));
#define ABI_FIELD_FLEX(tag, path, ...)                                      \
	ABI_FIELD_OFFSET(tag, path)                                         \
	ADD_TYPE(ABI_CAT_FIELD, "field " #tag "." #path " type",            \
		 __builtin_types_compatible_p(__typeof__(MEMBER(tag, path)), \
					      __VA_ARGS__),                 \
		 #__VA_ARGS__);
#define ABI_FUNC(n, ...)                                                    \
	ADD_TYPE(ABI_CAT_FUNCTION, "function " #n " type",                  \
		 __builtin_types_compatible_p(__typeof__(n), __VA_ARGS__),  \
		 #__VA_ARGS__);
#define ABI_INLINE(n, ...)                                                  \
	ADD(ABI_CAT_FUNCTION, "inline " #n " has an address",               \
	    address_of((void (*)(void))&n) != 0);                           \
	ADD_TYPE(ABI_CAT_FUNCTION, "inline " #n " type",                    \
		 __builtin_types_compatible_p(__typeof__(n), __VA_ARGS__),  \
		 #__VA_ARGS__);
#include "tests/abi/abi_manifest.inc"
#undef ABI_CONST
#undef ABI_STRCONST
#undef ABI_MACRO
#undef ABI_MACRO_FN
#undef ABI_ENUMERATOR
#undef ABI_ENUM
#undef ABI_TYPEDEF
#undef ABI_STRUCT
#undef ABI_UNION
#undef ABI_FIELD_OFFSET
#undef ABI_FIELD
#undef ABI_FIELD_ANON
#undef ABI_FIELD_FLEX
#undef ABI_FUNC
#undef ABI_INLINE

	add_function_like_values();
}

#pragma GCC diagnostic pop

const struct abi_entry *ABI_CAT(abi_table_, ABI_SIDE)(size_t *count)
{
	if (!ntable)
		build();
	*count = ntable;
	return table;
}
