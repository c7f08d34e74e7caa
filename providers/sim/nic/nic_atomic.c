/* SPDX-License-Identifier: BSD-2-Clause
 * Atomic arithmetic on target memory, for every libfabric op and datatype
 * the NIC accepts (fi_atomic(3)). One generic loop per (op, type) pair is
 * generated below; complex types support only the ops defined on them. */
#include <complex.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "nic_internal.h"

size_t nic_atomic_size(int datatype)
{
	switch (datatype) {
	case FI_INT8: case FI_UINT8: return 1;
	case FI_INT16: case FI_UINT16: return 2;
	case FI_INT32: case FI_UINT32: case FI_FLOAT: return 4;
	case FI_INT64: case FI_UINT64: case FI_DOUBLE: return 8;
	case FI_FLOAT_COMPLEX: return sizeof(float complex);
	case FI_DOUBLE_COMPLEX: return sizeof(double complex);
	case FI_LONG_DOUBLE: return sizeof(long double);
	case FI_LONG_DOUBLE_COMPLEX: return sizeof(long double complex);
	default: return 0;
	}
}

/* Arithmetic and comparison ops for real types. Each returns false for an
 * op that does not apply. */
#define REAL_OPS(T, INTEGER)                                                  \
	static bool apply_##T(int op, size_t n, T *d, const T *a, const T *c, \
			      T *r)                                           \
	{                                                                     \
		for (size_t i = 0; i < n; i++) {                              \
			T old = d[i], v = a ? a[i] : 0, w = c ? c[i] : 0;     \
			if (r)                                                \
				r[i] = old;                                   \
			switch (op) {                                         \
			case FI_MIN: d[i] = v < old ? v : old; break;         \
			case FI_MAX: d[i] = v > old ? v : old; break;         \
			case FI_SUM: d[i] = old + v; break;                   \
			case FI_PROD: d[i] = old * v; break;                  \
			case FI_LOR: d[i] = old || v; break;                  \
			case FI_LAND: d[i] = old && v; break;                 \
			case FI_LXOR: d[i] = (old && !v) || (!old && v); break; \
			case FI_ATOMIC_READ: break;                           \
			case FI_ATOMIC_WRITE: d[i] = v; break;                \
			case FI_CSWAP: if (w == old) d[i] = v; break;         \
			case FI_CSWAP_NE: if (w != old) d[i] = v; break;      \
			case FI_CSWAP_LE: if (w <= old) d[i] = v; break;      \
			case FI_CSWAP_LT: if (w < old) d[i] = v; break;       \
			case FI_CSWAP_GE: if (w >= old) d[i] = v; break;      \
			case FI_CSWAP_GT: if (w > old) d[i] = v; break;       \
			default:                                              \
				if (!INTEGER_OPS_##INTEGER(op, &d[i], old, v, w)) \
					return false;                         \
			}                                                     \
		}                                                             \
		return true;                                                  \
	}

/* Bitwise ops exist only for integers. */
#define INTEGER_OPS_1(op, dst, old, v, w)                              \
	((op) == FI_BOR ? (*(dst) = (old) | (v), true) :                 \
	 (op) == FI_BAND ? (*(dst) = (old) & (v), true) :                \
	 (op) == FI_BXOR ? (*(dst) = (old) ^ (v), true) :                \
	 (op) == FI_MSWAP ? (*(dst) = ((v) & (w)) | ((old) & ~(w)), true) : \
			    false)
#define INTEGER_OPS_0(op, dst, old, v, w) false

REAL_OPS(int8_t, 1)
REAL_OPS(uint8_t, 1)
REAL_OPS(int16_t, 1)
REAL_OPS(uint16_t, 1)
REAL_OPS(int32_t, 1)
REAL_OPS(uint32_t, 1)
REAL_OPS(int64_t, 1)
REAL_OPS(uint64_t, 1)
typedef long double long_double;
REAL_OPS(float, 0)
REAL_OPS(double, 0)
REAL_OPS(long_double, 0)

/* Complex numbers have no order: sum, product, logic, read, write and
 * (in)equality swaps only. */
#define COMPLEX_OPS(T)                                                        \
	static bool apply_##T(int op, size_t n, T *d, const T *a, const T *c, \
			      T *r)                                           \
	{                                                                     \
		for (size_t i = 0; i < n; i++) {                              \
			T old = d[i], v = a ? a[i] : 0, w = c ? c[i] : 0;     \
			if (r)                                                \
				r[i] = old;                                   \
			switch (op) {                                         \
			case FI_SUM: d[i] = old + v; break;                   \
			case FI_PROD: d[i] = old * v; break;                  \
			case FI_LOR: d[i] = old != 0 || v != 0; break;        \
			case FI_LAND: d[i] = old != 0 && v != 0; break;       \
			case FI_LXOR: d[i] = (old != 0) != (v != 0); break;   \
			case FI_ATOMIC_READ: break;                           \
			case FI_ATOMIC_WRITE: d[i] = v; break;                \
			case FI_CSWAP: if (w == old) d[i] = v; break;         \
			case FI_CSWAP_NE: if (w != old) d[i] = v; break;      \
			default: return false;                                \
			}                                                     \
		}                                                             \
		return true;                                                  \
	}

typedef float complex float_complex;
typedef double complex double_complex;
typedef long double complex long_double_complex;
COMPLEX_OPS(float_complex)
COMPLEX_OPS(double_complex)
COMPLEX_OPS(long_double_complex)

bool nic_atomic_apply(int datatype, int op, size_t count, void *dst,
		      const void *operand, const void *compare, void *result)
{
	/* Target memory may be unaligned for the type: work on copies. */
	size_t size = nic_atomic_size(datatype) * count;
	_Alignas(16) uint8_t d[NIC_ATOMIC_MAX_BYTES], a[NIC_ATOMIC_MAX_BYTES],
		c[NIC_ATOMIC_MAX_BYTES], r[NIC_ATOMIC_MAX_BYTES];
	bool ok;

	if (!size || size > NIC_ATOMIC_MAX_BYTES)
		return false;
	memcpy(d, dst, size);
	if (operand)
		memcpy(a, operand, size);
	if (compare)
		memcpy(c, compare, size);
#define CASE(ID, T)                                                          \
	case ID:                                                             \
		ok = apply_##T(op, count, (T *)d, operand ? (T *)a : NULL,   \
			       compare ? (T *)c : NULL, (T *)r);             \
		break;
	switch (datatype) {
	CASE(FI_INT8, int8_t)
	CASE(FI_UINT8, uint8_t)
	CASE(FI_INT16, int16_t)
	CASE(FI_UINT16, uint16_t)
	CASE(FI_INT32, int32_t)
	CASE(FI_UINT32, uint32_t)
	CASE(FI_INT64, int64_t)
	CASE(FI_UINT64, uint64_t)
	CASE(FI_FLOAT, float)
	CASE(FI_DOUBLE, double)
	CASE(FI_LONG_DOUBLE, long_double)
	CASE(FI_FLOAT_COMPLEX, float_complex)
	CASE(FI_DOUBLE_COMPLEX, double_complex)
	CASE(FI_LONG_DOUBLE_COMPLEX, long_double_complex)
	default:
		return false;
	}
#undef CASE
	if (!ok)
		return false;
	memcpy(dst, d, size);
	if (result)
		memcpy(result, r, size);
	return true;
}

size_t nic_atomic_max_count(const struct nic_world *world, int datatype,
			    bool compare)
{
	size_t size = nic_atomic_size(datatype);
	size_t room = NIC_ATOMIC_MAX_BYTES;

	/* Operand and compare values share one packet, after the fabsim
	 * atomic header. */
	if (world->mtu - NIC_ATOMIC_HDR_WIRE < room * (compare ? 2 : 1))
		room = (world->mtu - NIC_ATOMIC_HDR_WIRE) / (compare ? 2 : 1);
	return size ? room / size : 0;
}

bool nic_atomic_supported(int datatype, int op)
{
	_Alignas(16) uint8_t d[64] = { 0 }, a[64] = { 0 }, c[64] = { 0 };

	/* Trying it on scratch values is the one source of truth. */
	return nic_atomic_size(datatype) &&
	       nic_atomic_apply(datatype, op, 1, d, a, c, NULL);
}
