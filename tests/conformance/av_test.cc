// Address vectors (fi_av(3)) of both types: fi_av_insert, fi_av_insertsvc,
// fi_av_lookup, fi_av_remove, fi_av_straddr; many entries; bad entries.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <set>
#include <string>

#include "harness.h"

namespace conf {
namespace {

bool IsSockaddr(uint32_t fmt)
{
	return fmt == FI_SOCKADDR || fmt == FI_SOCKADDR_IN ||
	       fmt == FI_SOCKADDR_IN6;
}

// The address `name` with another port (sockaddr formats only): distinct,
// well-formed addresses of endpoints that do not exist.
std::vector<uint8_t> WithPort(const std::vector<uint8_t>& name, uint16_t port)
{
	std::vector<uint8_t> a = name;
	sockaddr* sa = (sockaddr*)a.data();
	if (sa->sa_family == AF_INET)
		((sockaddr_in*)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((sockaddr_in6*)sa)->sin6_port = htons(port);
	return a;
}

uint16_t PortOf(const std::vector<uint8_t>& name)
{
	const sockaddr* sa = (const sockaddr*)name.data();
	if (sa->sa_family == AF_INET)
		return ntohs(((const sockaddr_in*)sa)->sin_port);
	return ntohs(((const sockaddr_in6*)sa)->sin6_port);
}

class AvTest : public RdmTest, public ::testing::WithParamInterface<fi_av_type> {
      protected:
	void SetUp() override
	{
		CONF_SKIP_IF_MSG("address vectors serve connectionless "
				 "endpoints; connected ones use none");
		Options o;
		o.av_type = GetParam();
		Open(o);
	}
	void TearDown() override
	{
		for (fid_av* av : extra_)
			EXPECT_EQ(fi_close(&av->fid), 0);
		RdmTest::TearDown();
	}
	// A fresh AV of the parameter's type on node 0's domain.
	fid_av* NewAv(uint64_t flags = 0, size_t count = 0)
	{
		fi_av_attr attr;
		memset(&attr, 0, sizeof(attr));
		attr.type = GetParam();
		attr.count = count;
		attr.flags = flags;
		fid_av* av = nullptr;
		int r = fi_av_open(w.node(0).domain, &attr, &av, nullptr);
		EXPECT_EQ(r, 0) << "fi_av_open: " << Err(r);
		if (av)
			extra_.push_back(av);
		return av;
	}
	// Synthetic addresses need a sockaddr format.
	bool Synthetic()
	{
		return IsSockaddr(w.info->addr_format);
	}
	std::vector<fid_av*> extra_;
};

INSTANTIATE_TEST_SUITE_P(Types, AvTest,
			 ::testing::Values(FI_AV_MAP, FI_AV_TABLE),
			 [](const ::testing::TestParamInfo<fi_av_type>& i) {
				 return std::string(i.param == FI_AV_MAP ? "Map"
									 : "Table");
			 });

TEST_P(AvTest, InsertReturnsCountAndAddresses)
{
	fid_av* av = NewAv();
	ASSERT_NE(av, nullptr);
	std::vector<uint8_t> names = w.node(0).name;
	names.insert(names.end(), w.node(1).name.begin(), w.node(1).name.end());
	ASSERT_EQ(w.node(0).name.size(), w.node(1).name.size());
	fi_addr_t fa[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
	EXPECT_EQ(fi_av_insert(av, names.data(), 2, fa, 0, nullptr), 2);
	EXPECT_NE(fa[0], FI_ADDR_NOTAVAIL);
	EXPECT_NE(fa[1], FI_ADDR_NOTAVAIL);
	EXPECT_NE(fa[0], fa[1]);
	if (GetParam() == FI_AV_TABLE) {
		EXPECT_EQ(fa[0], 0u) << "FI_AV_TABLE indices start at 0";
		EXPECT_EQ(fa[1], 1u);
	}
}

TEST_P(AvTest, InsertZeroAddressesReturnsZero)
{
	fid_av* av = NewAv();
	ASSERT_NE(av, nullptr);
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	EXPECT_EQ(fi_av_insert(av, w.node(1).name.data(), 0, &fa, 0, nullptr),
		  0);
}

TEST_P(AvTest, TableIndicesAccumulateAcrossCalls)
{
	if (!Synthetic())
		GTEST_SKIP() << "addr_format " << w.info->addr_format
			     << " is not a sockaddr: cannot make addresses";
	fid_av* av = NewAv();
	ASSERT_NE(av, nullptr);
	std::set<fi_addr_t> seen;
	uint16_t base = PortOf(w.node(0).name) ^ 0x4000;
	int index = 0;
	for (int call = 0; call < 3; call++) {
		std::vector<uint8_t> buf;
		size_t n = call + 2;
		for (size_t i = 0; i < n; i++) {
			auto a = WithPort(w.node(0).name, base + index + i);
			buf.insert(buf.end(), a.begin(), a.end());
		}
		std::vector<fi_addr_t> fa(n, FI_ADDR_NOTAVAIL);
		ASSERT_EQ(fi_av_insert(av, buf.data(), n, fa.data(), 0, nullptr),
			  (int)n);
		for (size_t i = 0; i < n; i++) {
			if (GetParam() == FI_AV_TABLE) {
				EXPECT_EQ(fa[i], (fi_addr_t)(index + i));
			}
			EXPECT_TRUE(seen.insert(fa[i]).second)
				<< "fi_addr reused";
		}
		index += n;
	}
}

TEST_P(AvTest, InsertedAddressCarriesTraffic)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	Buf* s = w.NewBuf(0, 16);
	Buf* r = w.NewBuf(1, 16);
	s->Fill(1);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 16, s->desc, a.peer(1), sc));
	w.Expect(a.tx, sc);
	w.Expect(b.rx, rc);
	EXPECT_TRUE(r->Check(1, 16));
}

TEST_P(AvTest, LookupReturnsTheInsertedAddress)
{
	Node& a = w.node(0);
	const std::vector<uint8_t>& name = w.node(1).name;
	std::vector<uint8_t> out(name.size() + 16, 0xcc);
	size_t len = out.size();
	CONF_OK(fi_av_lookup(a.av, a.peer(1), out.data(), &len));
	ASSERT_EQ(len, name.size());
	EXPECT_EQ(memcmp(out.data(), name.data(), len), 0)
		<< "fi_av_lookup does not return what fi_getname gave";
}

// fi_av(3): a too small buffer gets a truncated address and addrlen is set
// to the size needed. The page names no error code: the suite accepts 0
// (as fi_av(3) implies) or -FI_ETOOSMALL (as fi_getname does).
TEST_P(AvTest, LookupIntoSmallBufferReportsNeededSize)
{
	Node& a = w.node(0);
	const std::vector<uint8_t>& name = w.node(1).name;
	uint8_t out[2] = {0, 0xcc};
	size_t len = 1;
	int r = fi_av_lookup(a.av, a.peer(1), out, &len);
	EXPECT_TRUE(r == 0 || r == -FI_ETOOSMALL) << Err(r);
	EXPECT_EQ(len, name.size());
	EXPECT_EQ(out[0], name[0]) << "the truncated address";
	EXPECT_EQ(out[1], 0xcc) << "wrote past the buffer";
}

TEST_P(AvTest, RemoveThenReinsert)
{
	Node& a = w.node(0);
	Node& b = w.node(1);
	fi_addr_t old = a.peer(1);
	CONF_OK(fi_av_remove(a.av, &old, 1, 0));
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	ASSERT_EQ(fi_av_insert(a.av, b.name.data(), 1, &fa, 0, nullptr), 1)
		<< "fi_av(3): removal then re-insertion must be supported";
	ASSERT_NE(fa, FI_ADDR_NOTAVAIL);
	a.peers[1] = fa;
	Buf* s = w.NewBuf(0, 16);
	Buf* r = w.NewBuf(1, 16);
	s->Fill(2);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(b.ep, r->p, 16, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 16, s->desc, fa, sc));
	w.Expect(a.tx, sc);
	w.Expect(b.rx, rc);
	EXPECT_TRUE(r->Check(2, 16));
}

TEST_P(AvTest, StraddrPrintsAndReportsLength)
{
	const std::vector<uint8_t>& name = w.node(1).name;
	char buf[256];
	memset(buf, 0x7f, sizeof(buf));
	size_t len = sizeof(buf);
	const char* s = fi_av_straddr(w.node(0).av, name.data(), buf, &len);
	ASSERT_EQ(s, buf) << "fi_av_straddr returns buf";
	size_t n = strnlen(buf, sizeof(buf));
	ASSERT_LT(n, sizeof(buf)) << "no terminating NUL";
	EXPECT_GT(n, 0u);
	EXPECT_GE(len, n) << "len is the size needed for the string";
	// Too small a buffer: truncated, len still the full size needed.
	char small[4];
	memset(small, 0x7f, sizeof(small));
	size_t slen = sizeof(small);
	fi_av_straddr(w.node(0).av, name.data(), small, &slen);
	EXPECT_GE(slen, n) << "len must report the size needed";
	EXPECT_EQ(memcmp(small, buf, 3), 0) << "truncated copy differs";
}

// An address of the wrong family cannot be inserted: the count is short
// and its fi_addr is FI_ADDR_NOTAVAIL (fi_av(3) RETURN VALUES).
TEST_P(AvTest, BadEntryGetsAddrNotAvail)
{
	CONF_SKIP_IF_DEVIATION("av.bad_entry");
	if (!Synthetic())
		GTEST_SKIP() << "addr_format is not a sockaddr";
	fid_av* av = NewAv();
	ASSERT_NE(av, nullptr);
	size_t len = w.node(1).name.size();
	std::vector<uint8_t> buf = w.node(1).name;
	std::vector<uint8_t> bad = w.node(0).name;
	((sockaddr*)bad.data())->sa_family = AF_UNIX;
	buf.insert(buf.end(), bad.begin(), bad.end());
	fi_addr_t fa[2] = {FI_ADDR_NOTAVAIL, 0x1234};
	int r = fi_av_insert(av, buf.data(), 2, fa, 0, nullptr);
	EXPECT_EQ(r, 1) << "one good and one bad address: " << Err(r);
	EXPECT_NE(fa[0], FI_ADDR_NOTAVAIL);
	EXPECT_EQ(fa[1], FI_ADDR_NOTAVAIL);
	(void)len;
}

// fi_av_insertsvc with the peer's numeric host and port behaves as
// fi_av_insert of its address.
TEST_P(AvTest, InsertsvcFromHostAndPort)
{
	if (!Synthetic())
		GTEST_SKIP() << "addr_format is not a sockaddr";
	const std::vector<uint8_t>& name = w.node(1).name;
	const sockaddr* sa = (const sockaddr*)name.data();
	char host[INET6_ADDRSTRLEN];
	const void* ip = sa->sa_family == AF_INET
				 ? (const void*)&((const sockaddr_in*)sa)->sin_addr
				 : (const void*)&((const sockaddr_in6*)sa)->sin6_addr;
	ASSERT_NE(inet_ntop(sa->sa_family, ip, host, sizeof(host)), nullptr);
	std::string svc = std::to_string(PortOf(name));
	fid_av* av = NewAv();
	ASSERT_NE(av, nullptr);
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	int r = fi_av_insertsvc(av, host, svc.c_str(), &fa, 0, nullptr);
	ASSERT_EQ(r, 1) << host << ":" << svc << ": " << Err(r);
	ASSERT_NE(fa, FI_ADDR_NOTAVAIL);
	std::vector<uint8_t> out(name.size() + 16);
	size_t len = out.size();
	CONF_OK(fi_av_lookup(av, fa, out.data(), &len));
	const sockaddr* got = (const sockaddr*)out.data();
	EXPECT_EQ(got->sa_family, sa->sa_family);
	EXPECT_EQ(PortOf(out), PortOf(name));
	if (sa->sa_family == AF_INET) {
		EXPECT_EQ(((const sockaddr_in*)got)->sin_addr.s_addr,
			  ((const sockaddr_in*)sa)->sin_addr.s_addr);
	}
}

// fi_av_insertsym: nodecnt x svccnt addresses, every service of a node
// before the next node, nodes and ports counted up from the ones given.
TEST_P(AvTest, InsertsymCountsServicesWithinNodes)
{
	CONF_SKIP_IF_DEVIATION("av.insertsym_order");
	if (!Synthetic())
		GTEST_SKIP() << "addr_format is not a sockaddr";
	const std::vector<uint8_t>& name = w.node(0).name;
	const sockaddr_in* sa = (const sockaddr_in*)name.data();
	if (sa->sin_family != AF_INET)
		GTEST_SKIP() << "not an IPv4 address";
	char host[INET_ADDRSTRLEN];
	ASSERT_NE(inet_ntop(AF_INET, &sa->sin_addr, host, sizeof(host)),
		  nullptr);
	uint16_t port = PortOf(name);
	std::string svc = std::to_string(port);
	fid_av* av = NewAv();
	ASSERT_NE(av, nullptr);
	fi_addr_t fa[4];
	int r = fi_av_insertsym(av, host, 2, svc.c_str(), 2, fa, 0, nullptr);
	if (r == -FI_ENOSYS)
		GTEST_SKIP() << "fi_av_insertsym: " << Err(r);
	ASSERT_EQ(r, 4) << host << ":" << svc << ": " << Err(r);
	for (int i = 0; i < 4; i++) {
		ASSERT_NE(fa[i], FI_ADDR_NOTAVAIL) << i;
		std::vector<uint8_t> out(name.size() + 16);
		size_t len = out.size();
		CONF_OK(fi_av_lookup(av, fa[i], out.data(), &len));
		const sockaddr_in* got = (const sockaddr_in*)out.data();
		EXPECT_EQ(ntohl(got->sin_addr.s_addr),
			  ntohl(sa->sin_addr.s_addr) + i / 2)
			<< "entry " << i;
		EXPECT_EQ(ntohs(got->sin_port), port + i % 2) << "entry " << i;
	}
}

// Thousands of entries in one insert; every one looks up correctly, and
// the AV still carries real traffic afterwards.
TEST_P(AvTest, ThousandsOfEntries)
{
	if (!Synthetic())
		GTEST_SKIP() << "addr_format is not a sockaddr";
	constexpr size_t kN = 4096;
	Node& a = w.node(0);
	uint16_t p0 = PortOf(w.node(0).name), p1 = PortOf(w.node(1).name);
	std::vector<std::vector<uint8_t>> addrs;
	std::vector<uint8_t> buf;
	for (uint32_t port = 1024; addrs.size() < kN; port++) {
		if (port == p0 || port == p1)
			continue;
		addrs.push_back(WithPort(w.node(0).name, (uint16_t)port));
		buf.insert(buf.end(), addrs.back().begin(), addrs.back().end());
	}
	std::vector<fi_addr_t> fa(kN, FI_ADDR_NOTAVAIL);
	size_t before_table = 2;  // the World put nodes 0 and 1 in first
	ASSERT_EQ(fi_av_insert(a.av, buf.data(), kN, fa.data(), 0, nullptr),
		  (int)kN);
	std::set<fi_addr_t> distinct(fa.begin(), fa.end());
	EXPECT_EQ(distinct.size(), kN);
	EXPECT_EQ(distinct.count(FI_ADDR_NOTAVAIL), 0u);
	for (size_t i = 0; i < kN; i += 97) {
		if (GetParam() == FI_AV_TABLE) {
			EXPECT_EQ(fa[i], before_table + i);
		}
		std::vector<uint8_t> out(addrs[i].size());
		size_t len = out.size();
		ASSERT_EQ(fi_av_lookup(a.av, fa[i], out.data(), &len), 0);
		EXPECT_EQ(out, addrs[i]) << "entry " << i;
	}
	Buf* s = w.NewBuf(0, 8);
	Buf* r = w.NewBuf(1, 8);
	s->Fill(3);
	fi_context2 *rc = w.Ctx(), *sc = w.Ctx();
	CONF_POST(fi_recv(w.node(1).ep, r->p, 8, r->desc, FI_ADDR_UNSPEC, rc));
	CONF_POST(fi_send(a.ep, s->p, 8, s->desc, a.peer(1), sc));
	w.Expect(a.tx, sc);
	w.Expect(w.node(1).rx, rc);
	EXPECT_TRUE(r->Check(3, 8));
}

// fi_av(3): with FI_EVENT, inserting before an EQ is bound fails with
// -FI_ENOEQ.
TEST_P(AvTest, AsyncAvWithoutEqReturnsENOEQ)
{
	fi_av_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.type = GetParam();
	attr.flags = FI_EVENT;
	fid_av* av = nullptr;
	int r = fi_av_open(w.node(0).domain, &attr, &av, nullptr);
	if (r)
		GTEST_SKIP() << "the provider does not open FI_EVENT AVs: "
			     << Err(r);
	extra_.push_back(av);
	fi_addr_t fa;
	EXPECT_EQ(fi_av_insert(av, w.node(1).name.data(), 1, &fa, 0, nullptr),
		  -FI_ENOEQ);
}

}  // namespace
}  // namespace conf
