// Atomics (fi_atomic(3)): fi_atomicvalid/fi_fetch_atomicvalid/
// fi_compare_atomicvalid/fi_query_atomic, and fi_atomic/fi_fetch_atomic/
// fi_compare_atomic for every common operation on INT32, UINT32, INT64,
// UINT64, FLOAT and DOUBLE with count > 1, checking the arithmetic against
// the man page's definitions. Each supported (op, type) pair is run;
// unsupported ones must say -FI_EOPNOTSUPP.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "harness.h"

namespace conf {
namespace {

enum class Kind { kBase, kFetch, kCompare };

const fi_op kBaseOps[] = {FI_MIN, FI_MAX, FI_SUM, FI_PROD, FI_LOR, FI_LAND,
			  FI_BOR, FI_BAND, FI_LXOR, FI_BXOR, FI_ATOMIC_WRITE};
const fi_op kFetchOps[] = {FI_MIN,  FI_MAX,  FI_SUM,  FI_PROD,
			   FI_LOR,  FI_LAND, FI_BOR,  FI_BAND,
			   FI_LXOR, FI_BXOR, FI_ATOMIC_READ, FI_ATOMIC_WRITE};
const fi_op kCompareOps[] = {FI_CSWAP,    FI_CSWAP_NE, FI_CSWAP_LE, FI_CSWAP_LT,
			     FI_CSWAP_GE, FI_CSWAP_GT, FI_MSWAP};

const char* OpName(fi_op op)
{
	static const char* const n[] = {
		"MIN", "MAX", "SUM", "PROD", "LOR", "LAND", "BOR", "BAND",
		"LXOR", "BXOR", "ATOMIC_READ", "ATOMIC_WRITE", "CSWAP",
		"CSWAP_NE", "CSWAP_LE", "CSWAP_LT", "CSWAP_GE", "CSWAP_GT",
		"MSWAP"};
	return op < sizeof(n) / sizeof(n[0]) ? n[op] : "?";
}

// The man page's definition of each operation, element by element:
// addr is the target, buf the operand, cmp the compare operand.
template <class T>
T Apply(fi_op op, T addr, T buf, T cmp)
{
	switch (op) {
	case FI_MIN:
		return buf < addr ? buf : addr;
	case FI_MAX:
		return buf > addr ? buf : addr;
	case FI_SUM:
		return addr + buf;
	case FI_PROD:
		return addr * buf;
	case FI_LOR:
		return (T)(addr || buf);
	case FI_LAND:
		return (T)(addr && buf);
	case FI_LXOR:
		return (T)((addr && !buf) || (!addr && buf));
	case FI_ATOMIC_READ:
		return addr;
	case FI_ATOMIC_WRITE:
		return buf;
	case FI_CSWAP:
		return cmp == addr ? buf : addr;
	case FI_CSWAP_NE:
		return cmp != addr ? buf : addr;
	case FI_CSWAP_LE:
		return cmp <= addr ? buf : addr;
	case FI_CSWAP_LT:
		return cmp < addr ? buf : addr;
	case FI_CSWAP_GE:
		return cmp >= addr ? buf : addr;
	case FI_CSWAP_GT:
		return cmp > addr ? buf : addr;
	default:
		break;
	}
	if constexpr (std::is_integral<T>::value) {
		switch (op) {
		case FI_BOR:
			return addr | buf;
		case FI_BAND:
			return addr & buf;
		case FI_BXOR:
			return addr ^ buf;
		case FI_MSWAP:
			return (buf & cmp) | (addr & ~cmp);
		default:
			break;
		}
	}
	return addr;
}

bool Defined(fi_op op, bool integral)
{
	bool bitwise = op == FI_BOR || op == FI_BAND || op == FI_BXOR ||
		       op == FI_MSWAP;
	return integral || !bitwise;
}

constexpr size_t kCount = 4;

// Operands chosen so that every comparison goes both ways across the four
// elements (compare ==, <, > and == the target).
template <class T>
struct Operands {
	T init[kCount], buf[kCount], cmp[kCount];
	Operands()
	{
		bool s = std::is_signed<T>::value || std::is_floating_point<T>::value;
		T i[kCount] = {(T)10, (T)(s ? -20 : 20), (T)30, (T)(s ? -40 : 40)};
		T b[kCount] = {(T)3, (T)(s ? -25 : 25), (T)(s ? -7 : 7), (T)40};
		T c[kCount] = {(T)10, (T)(s ? -50 : 5), (T)99, (T)(s ? -40 : 40)};
		for (size_t k = 0; k < kCount; k++) {
			init[k] = i[k];
			buf[k] = b[k];
			cmp[k] = c[k];
		}
	}
};

struct TypeCase {
	fi_datatype dt;
	const char* name;
};

class AtomicTest : public RdmTest, public ::testing::WithParamInterface<TypeCase> {
      protected:
	void SetUp() override
	{
		Options o;
		o.caps = FI_MSG | FI_ATOMIC;
		Open(o);
		if (!w.info)
			return;
		target = w.NewBuf(1, 4096, kLocalAccess | kRemoteAccess);
		operand = w.NewBuf(0, 64);
		compare = w.NewBuf(0, 64);
		result = w.NewBuf(0, 64);
	}
	// The count the valid call allows, or 0 when unsupported (which must
	// be reported as -FI_EOPNOTSUPP).
	size_t Valid(Kind k, fi_op op)
	{
		fid_ep* ep = w.node(0).ep;
		fi_datatype dt = GetParam().dt;
		size_t count = 0;
		int r = k == Kind::kBase    ? fi_atomicvalid(ep, dt, op, &count)
			: k == Kind::kFetch ? fi_fetch_atomicvalid(ep, dt, op, &count)
					    : fi_compare_atomicvalid(ep, dt, op,
								     &count);
		EXPECT_TRUE(r == 0 || r == -FI_EOPNOTSUPP)
			<< OpName(op) << ": " << Err(r);
		if (r == 0) {
			EXPECT_GE(count, 1u) << OpName(op);
		}
		return r == 0 ? count : 0;
	}
	template <class T>
	void Run(Kind k, fi_op op);
	template <class T>
	void RunAll(Kind k);
	void RunKind(Kind k);

	Buf *target = nullptr, *operand = nullptr, *compare = nullptr,
	    *result = nullptr;
	int ran = 0;
};

template <class T>
void AtomicTest::Run(Kind k, fi_op op)
{
	SCOPED_TRACE(std::string(OpName(op)) + " on " + GetParam().name);
	size_t max = Valid(k, op);
	if (max == 0) {
		std::printf("%s %s: -FI_EOPNOTSUPP\n", OpName(op),
			    GetParam().name);
		return;
	}
	size_t n = std::min(max, kCount);
	Operands<T> v;
	memcpy(target->p, v.init, sizeof(v.init));
	memcpy(operand->p, v.buf, sizeof(v.buf));
	memcpy(compare->p, v.cmp, sizeof(v.cmp));
	memset(result->p, 0xa5, sizeof(T) * kCount);
	Node& a = w.node(0);
	fi_datatype dt = GetParam().dt;
	fi_context2* ctx = w.Ctx();
	long r = PostRetry(w, [&]() -> long {
		switch (k) {
		case Kind::kBase:
			return fi_atomic(a.ep, operand->p, n, operand->desc,
					 a.peer(1), target->raddr(), target->key,
					 dt, op, ctx);
		case Kind::kFetch:
			return fi_fetch_atomic(a.ep, operand->p, n, operand->desc,
					       result->p, result->desc, a.peer(1),
					       target->raddr(), target->key, dt,
					       op, ctx);
		default:
			return fi_compare_atomic(
				a.ep, operand->p, n, operand->desc, compare->p,
				compare->desc, result->p, result->desc,
				a.peer(1), target->raddr(), target->key, dt, op,
				ctx);
		}
	});
	ASSERT_EQ(r, 0) << Err(r);
	Completion c = w.Expect(a.tx, ctx);
	// fi_cq(3): FI_ATOMIC with FI_WRITE for a base atomic. A fetch or
	// compare atomic both reads and writes the target; the page does not
	// say which flag it gets: FI_READ (ofi_rxm, shm) or FI_WRITE (sockets)
	// are both accepted.
	if (k == Kind::kBase) {
		CONF_EXPECT_KIND(c, FI_ATOMIC | FI_WRITE);
	} else {
		uint64_t kind = c.flags & kKindMask;
		EXPECT_TRUE(kind == (FI_ATOMIC | FI_READ) ||
			    kind == (FI_ATOMIC | FI_WRITE))
			<< Describe(c);
	}
	T got[kCount], old[kCount];
	memcpy(got, target->p, sizeof(got));
	memcpy(old, result->p, sizeof(old));
	for (size_t i = 0; i < kCount; i++) {
		T want = i < n ? Apply<T>(op, v.init[i], v.buf[i], v.cmp[i])
			       : v.init[i];
		EXPECT_EQ(got[i], want) << "target element " << i;
		if (k != Kind::kBase && i < n) {
			EXPECT_EQ(old[i], v.init[i])
				<< "fetched element " << i
				<< " is not the initial value";
		}
	}
	ran++;
}

template <class T>
void AtomicTest::RunAll(Kind k)
{
	bool integral = std::is_integral<T>::value;
	auto each = [&](const fi_op* ops, size_t n) {
		for (size_t i = 0; i < n; i++)
			if (Defined(ops[i], integral))
				Run<T>(k, ops[i]);
	};
	if (k == Kind::kBase)
		each(kBaseOps, sizeof(kBaseOps) / sizeof(kBaseOps[0]));
	else if (k == Kind::kFetch)
		each(kFetchOps, sizeof(kFetchOps) / sizeof(kFetchOps[0]));
	else
		each(kCompareOps, sizeof(kCompareOps) / sizeof(kCompareOps[0]));
}

void AtomicTest::RunKind(Kind k)
{
	switch (GetParam().dt) {
	case FI_INT32:
		RunAll<int32_t>(k);
		break;
	case FI_UINT32:
		RunAll<uint32_t>(k);
		break;
	case FI_INT64:
		RunAll<int64_t>(k);
		break;
	case FI_UINT64:
		RunAll<uint64_t>(k);
		break;
	case FI_FLOAT:
		RunAll<float>(k);
		break;
	default:
		RunAll<double>(k);
		break;
	}
	if (ran == 0 && !HasFailure())
		GTEST_SKIP() << "the provider supports none of these operations "
				"on "
			     << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(Types, AtomicTest,
			 ::testing::Values(TypeCase{FI_INT32, "INT32"},
					   TypeCase{FI_UINT32, "UINT32"},
					   TypeCase{FI_INT64, "INT64"},
					   TypeCase{FI_UINT64, "UINT64"},
					   TypeCase{FI_FLOAT, "FLOAT"},
					   TypeCase{FI_DOUBLE, "DOUBLE"}),
			 [](const ::testing::TestParamInfo<TypeCase>& i) {
				 return std::string(i.param.name);
			 });

TEST_P(AtomicTest, BaseAtomics)
{
	RunKind(Kind::kBase);
}

TEST_P(AtomicTest, FetchAtomics)
{
	RunKind(Kind::kFetch);
}

TEST_P(AtomicTest, CompareAtomics)
{
	RunKind(Kind::kCompare);
}

// fi_atomic(3) lists which operations each function family takes; the
// valid calls report the others as unsupported.
TEST_P(AtomicTest, ValidCallsRejectOperationsOfOtherFamilies)
{
	size_t count = 0;
	fid_ep* ep = w.node(0).ep;
	fi_datatype dt = GetParam().dt;
	EXPECT_EQ(fi_atomicvalid(ep, dt, FI_ATOMIC_READ, &count), -FI_EOPNOTSUPP);
	EXPECT_EQ(fi_atomicvalid(ep, dt, FI_CSWAP, &count), -FI_EOPNOTSUPP);
	EXPECT_EQ(fi_fetch_atomicvalid(ep, dt, FI_CSWAP, &count),
		  -FI_EOPNOTSUPP);
	EXPECT_EQ(fi_compare_atomicvalid(ep, dt, FI_SUM, &count),
		  -FI_EOPNOTSUPP);
}

// fi_query_atomic agrees with the valid calls and gives the type's size.
TEST_P(AtomicTest, QueryAtomicAgreesWithValid)
{
	fid_domain* d = w.node(0).domain;
	fi_datatype dt = GetParam().dt;
	size_t size = dt == FI_INT32 || dt == FI_UINT32 || dt == FI_FLOAT ? 4 : 8;
	struct {
		fi_op op;
		uint64_t flags;
		Kind kind;
	} cases[] = {{FI_SUM, 0, Kind::kBase},
		     {FI_ATOMIC_READ, FI_FETCH_ATOMIC, Kind::kFetch},
		     {FI_CSWAP, FI_COMPARE_ATOMIC, Kind::kCompare}};
	for (auto& c : cases) {
		SCOPED_TRACE(OpName(c.op));
		size_t count = Valid(c.kind, c.op);
		fi_atomic_attr attr;
		memset(&attr, 0, sizeof(attr));
		int r = fi_query_atomic(d, dt, c.op, &attr, c.flags);
		if (r == -FI_ENOSYS)
			GTEST_SKIP() << "fi_query_atomic is not implemented";
		if (count == 0) {
			EXPECT_EQ(r, -FI_EOPNOTSUPP) << Err(r);
			continue;
		}
		ASSERT_EQ(r, 0) << Err(r);
		EXPECT_EQ(attr.size, size);
		EXPECT_GE(attr.count, 1u);
	}
}

// ---- Message forms, inject, errors (UINT64) -------------------------------------

class AtomicOpsTest : public RdmTest {
      protected:
	void SetUp() override
	{
		Options o;
		o.caps = FI_MSG | FI_ATOMIC;
		o.nodes = 3;
		Open(o);
		if (!w.info)
			return;
		target = w.NewBuf(1, 4096, kLocalAccess | kRemoteAccess);
		operand = w.NewBuf(0, 64);
		compare = w.NewBuf(0, 64);
		result = w.NewBuf(0, 64);
	}
	// The count the valid call allows for UINT64 (0: unsupported).
	size_t Count(fi_op op, Kind k)
	{
		size_t count = 0;
		fid_ep* ep = w.node(0).ep;
		int r = k == Kind::kBase ? fi_atomicvalid(ep, FI_UINT64, op, &count)
			: k == Kind::kFetch
				? fi_fetch_atomicvalid(ep, FI_UINT64, op, &count)
				: fi_compare_atomicvalid(ep, FI_UINT64, op, &count);
		return r == 0 ? count : 0;
	}
	// Elements per operation: 2, or 1 where the provider allows only one
	// (fi_atomic(3): the valid calls return "the maximum number of
	// elements"); 0 when unsupported.
	size_t Elements(fi_op op, Kind k)
	{
		size_t n = std::min<size_t>(Count(op, k), 2);
		if (n == 1)
			printf("UINT64 %s takes one element: one element per "
			       "operation\n",
			       OpName(op));
		return n;
	}
	uint64_t* T() { return (uint64_t*)target->p; }
	uint64_t* Op() { return (uint64_t*)operand->p; }
	Buf *target = nullptr, *operand = nullptr, *compare = nullptr,
	    *result = nullptr;
};

TEST_F(AtomicOpsTest, MessageForms)
{
	size_t n = std::min({Elements(FI_SUM, Kind::kBase),
			     Elements(FI_SUM, Kind::kFetch),
			     Elements(FI_CSWAP, Kind::kCompare)});
	if (n == 0)
		GTEST_SKIP() << "UINT64 SUM/CSWAP not supported";
	// With one element the second stays as it was.
	bool two = n == 2;
	Node& a = w.node(0);
	T()[0] = 100;
	T()[1] = 200;
	Op()[0] = 1;
	Op()[1] = 2;
	fi_ioc ioc = {operand->p, n};
	fi_ioc rioc = {result->p, n};
	fi_ioc cioc = {compare->p, n};
	fi_rma_ioc rma = {target->raddr(), n, target->key};
	void* d = operand->desc;
	void* rd = result->desc;
	void* cd = compare->desc;
	fi_context2* c1 = w.Ctx();
	fi_msg_atomic m = {&ioc, &d, 1, a.peer(1), &rma, 1, FI_UINT64, FI_SUM,
			   c1, 0};
	CONF_POST(fi_atomicmsg(a.ep, &m, FI_COMPLETION));
	w.Expect(a.tx, c1);
	EXPECT_EQ(T()[0], 101u);
	EXPECT_EQ(T()[1], two ? 202u : 200u);
	fi_context2* c2 = w.Ctx();
	m.context = c2;
	CONF_POST(fi_fetch_atomicmsg(a.ep, &m, &rioc, &rd, 1, FI_COMPLETION));
	w.Expect(a.tx, c2);
	EXPECT_EQ(((uint64_t*)result->p)[0], 101u);
	EXPECT_EQ(T()[0], 102u);
	((uint64_t*)compare->p)[0] = 102;  // matches: swapped
	((uint64_t*)compare->p)[1] = 1;    // does not: kept
	Op()[0] = 7;
	Op()[1] = 8;
	fi_context2* c3 = w.Ctx();
	m.context = c3;
	m.op = FI_CSWAP;
	CONF_POST(fi_compare_atomicmsg(a.ep, &m, &cioc, &cd, 1, &rioc, &rd, 1,
				       FI_COMPLETION));
	w.Expect(a.tx, c3);
	EXPECT_EQ(T()[0], 7u);
	EXPECT_EQ(((uint64_t*)result->p)[0], 102u);
	if (two) {
		EXPECT_EQ(T()[1], 204u);
		EXPECT_EQ(((uint64_t*)result->p)[1], 204u);
	} else {
		EXPECT_EQ(T()[1], 200u);
	}
}

TEST_F(AtomicOpsTest, AtomicvWithTwoLocalSegments)
{
	size_t max = Count(FI_SUM, Kind::kBase);
	if (max == 0)
		GTEST_SKIP() << "UINT64 SUM not supported";
	if (max < 2)
		GTEST_SKIP() << "UINT64 SUM takes at most " << max
			     << " element: two segments of one need 2";
	if (w.info->tx_attr->iov_limit < 2)
		GTEST_SKIP() << "iov_limit < 2";
	Node& a = w.node(0);
	T()[0] = 1;
	T()[1] = 1;
	Op()[0] = 10;
	Op()[4] = 20;
	fi_ioc ioc[2] = {{operand->p, 1}, {operand->p + 32, 1}};
	void* d[2] = {operand->desc, operand->desc};
	fi_context2* ctx = w.Ctx();
	CONF_POST(fi_atomicv(a.ep, ioc, d, 2, a.peer(1), target->raddr(),
			     target->key, FI_UINT64, FI_SUM, ctx));
	w.Expect(a.tx, ctx);
	EXPECT_EQ(T()[0], 11u);
	EXPECT_EQ(T()[1], 21u);
}

TEST_F(AtomicOpsTest, InjectAtomicHasNoCompletion)
{
	size_t n = Elements(FI_SUM, Kind::kBase);
	if (n == 0)
		GTEST_SKIP() << "UINT64 SUM not supported";
	if (w.info->tx_attr->inject_size < 8 * n)
		GTEST_SKIP() << "inject_size < " << 8 * n;
	Node& a = w.node(0);
	T()[0] = 5;
	T()[1] = 6;
	Op()[0] = 1;
	Op()[1] = 1;
	CONF_POST(fi_inject_atomic(a.ep, operand->p, n, a.peer(1),
				   target->raddr(), target->key, FI_UINT64,
				   FI_SUM));
	Op()[0] = Op()[1] = 1000;  // ours again at return
	uint64_t* t = T();
	uint64_t second = n == 2 ? 7 : 6;  // one element: the second stays
	EXPECT_TRUE(w.WaitUntil([&] { return t[0] == 6 && t[1] == second; },
				"the injected atomic to land"))
		<< "target holds " << t[0] << ", " << t[1]
		<< " (1005, 1006 would mean the operand was read after the "
		   "call returned)";
	w.Settle();
	EXPECT_TRUE(a.tx.log.empty()) << "fi_inject_atomic reported";
}

TEST_F(AtomicOpsTest, UnknownKeyIsRefused)
{
	CONF_SKIP_IF_DEVIATION("rma.bad_key");
	if (Count(FI_SUM, Kind::kBase) == 0)
		GTEST_SKIP() << "UINT64 SUM not supported";
	Node& a = w.node(0);
	Op()[0] = 1;
	fi_context2* ctx = w.Ctx();
	CONF_POST(fi_atomic(a.ep, operand->p, 1, operand->desc, a.peer(1),
			    target->raddr(), w.BadKey(target), FI_UINT64,
			    FI_SUM, ctx));
	Completion c = w.ExpectError(a.tx);
	EXPECT_NE(c.err, 0) << Describe(c);
	EXPECT_EQ(T()[0], 0u) << "the atomic landed";
}

TEST_F(AtomicOpsTest, OutOfBoundsIsRefused)
{
	CONF_SKIP_IF_DEVIATION("rma.bounds");
	size_t n = Elements(FI_SUM, Kind::kBase);
	if (n == 0)
		GTEST_SKIP() << "UINT64 SUM not supported";
	Node& a = w.node(0);
	Buf* mem = w.NewBuf(1, 8192);
	Buf* region = w.View(1, mem, 0, 4096, kLocalAccess | kRemoteAccess);
	Op()[0] = Op()[1] = 1;
	fi_context2* ctx = w.Ctx();
	// Two elements straddle the region's end; one lies just past it.
	CONF_POST(fi_atomic(a.ep, operand->p, n, operand->desc, a.peer(1),
			    region->raddr(4096 - 8 * (n - 1)), region->key,
			    FI_UINT64, FI_SUM, ctx));
	Completion c = w.ExpectError(a.tx);
	EXPECT_NE(c.err, 0) << Describe(c);
	EXPECT_EQ(mem->p[4096], 0) << "wrote past the region";
}

// fi_atomic(3) ERRORS: more elements than the valid call allows is
// -FI_EMSGSIZE.
TEST_F(AtomicOpsTest, CountAboveTheLimitReturnsEMSGSIZE)
{
	CONF_SKIP_IF_DEVIATION("atomic.count_limit");
	size_t max = 0;
	if (fi_atomicvalid(w.node(0).ep, FI_UINT64, FI_SUM, &max) != 0)
		GTEST_SKIP() << "UINT64 SUM not supported";
	if (max > (1u << 16))
		GTEST_SKIP() << "the limit (" << max << ") is too large to "
			     << "exceed in a test";
	Node& a = w.node(0);
	size_t n = max + 1;
	Buf* big = w.NewBuf(1, n * 8, kLocalAccess | kRemoteAccess);
	Buf* src = w.NewBuf(0, n * 8);
	long r = PostRetry(w, [&] {
		return fi_atomic(a.ep, src->p, n, src->desc, a.peer(1),
				 big->raddr(), big->key, FI_UINT64, FI_SUM,
				 w.Ctx());
	});
	EXPECT_EQ(r, -FI_EMSGSIZE) << "count " << n << " with a limit of "
				   << max << ": " << Err(r);
}

}  // namespace
}  // namespace conf
