// Black-box conformance harness for reliable-datagram (FI_EP_RDM) programs.
//
// Only the public libfabric API is used, exactly as an application would use
// it, so the same sources build twice (see BUILD): against Debian's headers
// and libfabric.so.1 with a software provider (the "reference" build, which
// proves the tests right), and against fabsim's headers and library with the
// sim provider.
//
// The provider comes from CONFORMANCE_PROVIDER (default "sockets" in the
// reference build, "sim" in the fabsim build) and is requested the way
// programs request one: hints->fabric_attr->prov_name.
//
// A test opens a World: one fabric, N nodes (domain, AV, transmit CQ, receive
// CQ, optional counters, one endpoint each), on one domain per node or all on
// a single domain. Every node's address (fi_getname) is inserted into every
// node's AV, so world.node(i).peer(j) is the fi_addr_t of node j as seen by
// node i. Completions are collected per CQ by a progress helper that polls
// every CQ (manual progress) and never waits longer than a bounded number of
// rounds and a bounded wall time.
#ifndef CONFORMANCE_HARNESS_H
#define CONFORMANCE_HARNESS_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

// The reference build must see the distribution's headers, the fabsim build
// ours; a mix-up would make the suite prove nothing.
#if defined(CONFORMANCE_REFERENCE) && defined(FABSIM_RDMA_HEADERS)
#error "reference build compiled against fabsim's headers"
#endif
#if !defined(CONFORMANCE_REFERENCE) && !defined(FABSIM_RDMA_HEADERS)
#error "fabsim build compiled against the distribution's headers"
#endif

namespace conf {

// API version the suite asks for (the headers' own, as programs do).
constexpr uint32_t kApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

// The provider under test (hints->fabric_attr->prov_name).
const std::string& Provider();
bool ReferenceBuild();
// Wall-clock bound of every wait, in milliseconds (CONFORMANCE_TIMEOUT_MS,
// default 10000).
int TimeoutMs();

// Skips the running test when the provider under test is a reference
// provider with a known, documented deviation from the man pages (see
// deviations.cc). Never matches the fabsim build. Use as
//   CONF_SKIP_IF_DEVIATION("rma.bad_key_error_code");
const char* Deviation(const char* id);
#define CONF_SKIP_IF_DEVIATION(id)                                          \
	do {                                                                \
		if (const char* why_ = ::conf::Deviation(id))               \
			GTEST_SKIP() << "[" << ::conf::Provider()           \
				     << "] known deviation " << (id) << ": " \
				     << why_;                               \
	} while (0)

// fi_strerror of a negative or positive code, for messages.
std::string Err(long code);

// ---- Completions ------------------------------------------------------------

// One completion in a format-independent shape. Fields the CQ format does
// not carry are zero; src is FI_ADDR_NOTAVAIL unless read with readfrom.
struct Completion {
	bool error = false;
	void* op_context = nullptr;
	uint64_t flags = 0;
	size_t len = 0;
	void* buf = nullptr;
	uint64_t data = 0;
	uint64_t tag = 0;
	fi_addr_t src = FI_ADDR_NOTAVAIL;
	// Error entries only.
	int err = 0;
	int prov_errno = 0;
	size_t olen = 0;
	std::string strerror;  // fi_cq_strerror, taken when read
};
std::string Describe(const Completion& c);
// What Cq::Poll puts in the src_addr array before fi_cq_readfrom, to tell
// "left untouched" from a real address in messages.
constexpr fi_addr_t kUntouchedAddr = 0x5ca1ab1e0000deadULL;
std::string FlagsStr(uint64_t flags);

// A CQ with the log of what was read from it.
struct Cq {
	fid_cq* cq = nullptr;
	fi_cq_format format = FI_CQ_FORMAT_TAGGED;
	bool readfrom = false;  // use fi_cq_readfrom (FI_SOURCE)
	bool manual = false;    // the test reads it itself: the poller skips it
	std::deque<Completion> log;
	const char* name = "cq";

	// Reads what is available (one fi_cq_read[from] call, plus
	// fi_cq_readerr on -FI_EAVAIL). Returns entries read, or a negative
	// fabric errno other than -FI_EAGAIN.
	long Poll();
	// Removes and returns the oldest completion (the log must not be empty).
	Completion Take();
};

// Size in bytes of one entry of a CQ format.
size_t EntrySize(fi_cq_format format);
// Converts entry i of an array read with the given format.
Completion FromEntry(fi_cq_format format, const void* entries, size_t i);

// ---- Options ------------------------------------------------------------------

enum class Layout { kTwoDomains, kOneDomain };
const char* LayoutName(Layout l);

struct Options {
	// fi_getinfo hints.
	uint64_t caps = FI_MSG | FI_TAGGED;
	uint64_t mode = FI_CONTEXT | FI_CONTEXT2;
	int mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		      FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_RMA_EVENT;
	uint64_t msg_order = 0;     // tx and rx msg_order hint
	fi_av_type av_type = FI_AV_UNSPEC;  // for fi_av_open (UNSPEC: domain's)

	// Objects.
	int nodes = 2;
	Layout layout = Layout::kTwoDomains;
	fi_cq_format cq_format = FI_CQ_FORMAT_TAGGED;
	fi_wait_obj cq_wait = FI_WAIT_NONE;
	size_t cq_size = 0;
	bool readfrom = false;     // read CQs with fi_cq_readfrom
	uint64_t tx_bind = FI_TRANSMIT;  // fi_ep_bind flags of the tx CQ
	uint64_t rx_bind = FI_RECV;      // fi_ep_bind flags of the rx CQ
	// One counter per listed event is opened on every node and bound with
	// that flag: any of FI_SEND, FI_RECV, FI_READ, FI_WRITE,
	// FI_REMOTE_READ, FI_REMOTE_WRITE.
	uint64_t cntr_events = 0;
	fi_wait_obj cntr_wait = FI_WAIT_NONE;
	bool enable = true;        // fi_enable and exchange addresses
};

// CONFORMANCE_MR_MODE=basic: ask as a libfabric 1.4 program does
// (mr_mode FI_MR_BASIC, mode FI_LOCAL_MR); used to run the RMA tests with
// virtual addresses and provider keys on reference providers.
bool BasicMrMode();

// The hints the suite passes to fi_getinfo for these options (caller frees).
fi_info* MakeHints(const Options& o);

// ---- Memory -----------------------------------------------------------------

// A page-aligned buffer, registered when the domain's mr_mode requires it
// (FI_MR_LOCAL) or remote access is asked for.
struct Buf {
	uint8_t* p = nullptr;
	size_t len = 0;
	fid_mr* mr = nullptr;
	void* desc = nullptr;  // what to pass as desc (NULL if not required)
	uint64_t key = 0;      // remote key (fi_mr_key)
	uint64_t base = 0;     // remote address of p[0]: VA or 0 (offset)
	bool owned = false;    // p was allocated by the World
	uint64_t raddr(size_t off = 0) const { return base + off; }
	void Fill(uint8_t seed);          // deterministic pattern
	bool Check(uint8_t seed, size_t n, size_t from = 0) const;
};
uint8_t Pattern(uint8_t seed, size_t i);

// Access flags for a buffer only used locally.
constexpr uint64_t kLocalAccess = FI_SEND | FI_RECV | FI_READ | FI_WRITE;
constexpr uint64_t kRemoteAccess = FI_REMOTE_READ | FI_REMOTE_WRITE;

// ---- Nodes and the world ----------------------------------------------------------

struct Node {
	int index = 0;
	fid_domain* domain = nullptr;
	fid_av* av = nullptr;
	Cq tx, rx;
	std::map<uint64_t, fid_cntr*> cntr;  // by bind flag
	fid_ep* ep = nullptr;
	std::vector<uint8_t> name;           // fi_getname
	std::vector<fi_addr_t> peers;        // fi_addr of node j in this AV
	fi_addr_t peer(int j) const { return peers.at(j); }
	fid_cntr* counter(uint64_t event) const;
};

class World {
      public:
	World() = default;
	World(const World&) = delete;
	World& operator=(const World&) = delete;
	~World();

	// Opens everything; GTEST_SKIPs (returns false) when fi_getinfo
	// finds no provider for the hints, fails the test on any other error.
	bool Open(const Options& opts);
	void Close();  // reverse order; checks every fi_close returns 0

	fi_info* info = nullptr;  // the chosen fi_info (owned)
	fid_fabric* fabric = nullptr;
	std::vector<std::unique_ptr<Node>> nodes;
	Options opts;

	Node& node(int i) { return *nodes.at(i); }
	bool mr_local() const;
	bool virt_addr() const;
	bool prov_key() const;

	// Memory.
	Buf* NewBuf(int node, size_t len, uint64_t access = kLocalAccess);
	// A registered window [off, off + len) of parent (which stays
	// unregistered or registered on its own).
	Buf* View(int node, Buf* parent, size_t off, size_t len, uint64_t access);
	// Registers b (already allocated) on node with access; returns the
	// fi_* error of fi_mr_reg/bind/enable (0 on success).
	int Register(int node, Buf* b, uint64_t access, uint64_t flags = 0);
	uint64_t NextKey();
	// A key no buffer of this World is registered with.
	uint64_t BadKey(const Buf* b);

	// Contexts: stable fi_context2 objects, one per operation.
	fi_context2* Ctx();

	// Progress.
	long PollAll();  // polls every non-manual CQ once; <0 on hard error
	// Polls until cq holds n entries. Fails (ADD_FAILURE) on timeout.
	::testing::AssertionResult WaitFor(Cq& cq, size_t n);
	// Polls until counter reaches value (fi_cntr_read).
	::testing::AssertionResult WaitCntr(fid_cntr* c, uint64_t value);
	// Polls until pred() holds (bounded); used for memory contents.
	template <class P>
	::testing::AssertionResult WaitUntil(P pred, const char* what);
	// Drives progress for a short, bounded number of rounds.
	void Settle(int rounds = 2000);

	// Completes one operation: waits for one entry on cq, checks it is a
	// success whose op_context is ctx, returns it.
	Completion Expect(Cq& cq, void* ctx);
	// Waits for one error entry on cq and returns it.
	Completion ExpectError(Cq& cq);

      private:
	bool Deadline(std::chrono::steady_clock::time_point start) const;
	bool OpenNode(int i);
	std::deque<std::unique_ptr<Buf>> bufs_;
	std::deque<fi_context2> ctxs_;
	uint64_t next_key_ = 0x51;
	bool closed_ = false;
};

template <class P>
::testing::AssertionResult World::WaitUntil(P pred, const char* what)
{
	auto start = std::chrono::steady_clock::now();
	for (long i = 0; i < 20000000L; i++) {
		if (pred())
			return ::testing::AssertionSuccess();
		if (PollAll() < 0)
			return ::testing::AssertionFailure()
			       << "CQ read failed while waiting for " << what;
		if (Deadline(start))
			break;
	}
	return ::testing::AssertionFailure()
	       << "timed out waiting for " << what;
}

// Base fixture: owns a World, closes it in TearDown.
class RdmTest : public ::testing::Test {
      protected:
	void TearDown() override { w.Close(); }
	// Opens the world; on skip or failure the caller returns (macro).
	bool Open(const Options& o) { return w.Open(o); }
	World w;
};

// Opens the world from a test body; returns from the test on skip/failure.
#define CONF_OPEN(opts)                                                     \
	do {                                                                \
		if (!w.Open(opts) || HasFatalFailure() || IsSkipped())      \
			return;                                             \
	} while (0)

// Asserts a call returned 0 (fabric errno printed on failure).
#define CONF_OK(call)                                                      \
	do {                                                               \
		long r_ = (long)(call);                                    \
		ASSERT_EQ(r_, 0) << #call << ": " << ::conf::Err(r_);      \
	} while (0)

// Posts a data-transfer call, retrying while it returns -FI_EAGAIN (with
// progress), bounded. Expands to the final return value.
long PostRetry(World& w, const std::function<long()>& post);

// Posts with PostRetry and asserts 0.
#define CONF_POST(call)                                                     \
	do {                                                                \
		long r_ = ::conf::PostRetry(w, [&]() -> long { return (call); }); \
		ASSERT_EQ(r_, 0) << #call << ": " << ::conf::Err(r_);       \
	} while (0)

// The completion flags that say what kind of operation completed.
constexpr uint64_t kKindMask = FI_SEND | FI_RECV | FI_MSG | FI_TAGGED |
			       FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE |
			       FI_REMOTE_READ | FI_REMOTE_WRITE;
// flags & kKindMask, printed readably on mismatch.
#define CONF_EXPECT_KIND(c, kind)                                           \
	EXPECT_EQ(::conf::FlagsStr((c).flags & ::conf::kKindMask),          \
		  ::conf::FlagsStr(kind))                                   \
		<< ::conf::Describe(c)
// The same for a tagged completion, which may also carry FI_MSG: fi_cq(3)
// calls FI_MSG "a message-based operation", which a tagged message also is
// (the sockets provider sets both).
#define CONF_EXPECT_TAGGED_KIND(c, kind)                                    \
	EXPECT_EQ(::conf::FlagsStr((c).flags & ::conf::kKindMask & ~FI_MSG), \
		  ::conf::FlagsStr(kind))                                   \
		<< ::conf::Describe(c)

}  // namespace conf

#endif
