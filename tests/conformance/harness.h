// Black-box conformance harness for reliable-datagram (FI_EP_RDM) and
// connected (FI_EP_MSG) programs.
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
//
// CONFORMANCE_EP_TYPE=msg runs the same tests over connected endpoints
// (FI_EP_MSG). There is no AV. Each node listens as a server does: a
// passive endpoint (fi_passive_ep, fi_pep_bind to the node's listening EQ,
// fi_listen, fi_getname), and the node's domain is opened on that address
// (fi_getinfo with the listener's host as node and FI_SOURCE), so that
// connections it accepts land in its domain. Then for every pair of nodes
// i < j, node j connects to node i's listener (fi_connect), node i accepts
// the FI_CONNREQ (fi_endpoint with the event's fi_info, fi_accept), and both
// wait for FI_CONNECTED, each endpoint on an event queue of the pair's own.
// A node then has one endpoint per peer, all bound to the node's CQs and
// counters:
// world.node(i).Ep(j) is node i's endpoint connected to node j, and
// world.node(i).ep the one connected to its default peer (node 1 for node 0,
// node 0 for the others), so two-node tests read the same in both modes.
// peer(j) is FI_ADDR_UNSPEC (fi_msg(3): the destination address is "ignored
// for connected endpoints").
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
// The endpoint type under test: FI_EP_MSG when CONFORMANCE_EP_TYPE=msg,
// otherwise FI_EP_RDM.
fi_ep_type EpType();
bool MsgMode();
const char* EpTypeName();  // "FI_EP_RDM" or "FI_EP_MSG"
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

// Skips the running test in MSG mode (or outside it), printing the reason:
// for what is inherently about AVs or connectionless addressing, or
// inherently about connections.
#define CONF_SKIP_IF_MSG(why)                                               \
	do {                                                                \
		if (::conf::MsgMode())                                      \
			GTEST_SKIP() << "[FI_EP_MSG] " << why;              \
	} while (0)
#define CONF_SKIP_UNLESS_MSG(why)                                           \
	do {                                                                \
		if (!::conf::MsgMode())                                     \
			GTEST_SKIP() << "[" << ::conf::EpTypeName() << "] " \
				     << why;                                \
	} while (0)

// fi_strerror of a negative or positive code, for messages.
std::string Err(long code);

// Whether a failed fi_cntr_open (returning ret) means the provider offers
// no counters, which fi_domain(3) leaves to it: it reports none
// (domain_attr->cntr_cnt 0) and fi_cntr_open answers -FI_ENOSYS
// (fi_errno(3): "Function not implemented"). Then *why is the reason to
// print when skipping. Either alone is not enough: providers that report
// cntr_cnt 0 (tcp) still open counters, and they are tested.
bool NoCounters(const fi_info* info, long ret, std::string* why);

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

// The capabilities a test asks for unless it says otherwise: FI_MSG |
// FI_TAGGED for RDM; FI_MSG for MSG, where FI_TAGGED is only optional
// (DefaultOptionalCaps), because connected providers often lack it (tcp).
uint64_t DefaultCaps();
uint64_t DefaultOptionalCaps();
// The mode bits a test's program supports unless it says otherwise:
// FI_CONTEXT | FI_CONTEXT2, and FI_RX_CQ_DATA under RxCqDataMode().
uint64_t DefaultMode();

struct Options {
	// fi_getinfo hints.
	uint64_t caps = DefaultCaps();
	// Asked for too, but dropped when no provider offers caps | these:
	// tests check w.info->caps before using them.
	uint64_t optional_caps = DefaultOptionalCaps();
	uint64_t mode = DefaultMode();
	int mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		      FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_RMA_EVENT;
	uint64_t msg_order = 0;     // tx and rx msg_order hint
	// For fi_av_open (UNSPEC: the domain's); RDM only.
	fi_av_type av_type = FI_AV_UNSPEC;

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
	// RDM: fi_enable and exchange addresses. MSG: connect every pair;
	// when false each node gets one endpoint, bound to an EQ of its own
	// and to its CQs and counters, neither enabled nor connected.
	bool enable = true;
	// false: open domains, CQs and counters only (MSG tests that make
	// their own connections).
	bool endpoints = true;
};

// CONFORMANCE_MR_MODE=basic: ask as a libfabric 1.4 program does
// (mr_mode FI_MR_BASIC, mode FI_LOCAL_MR); used to run the RMA tests with
// virtual addresses and provider keys on reference providers.
bool BasicMrMode();
// CONFORMANCE_RX_CQ_DATA=1: the program also supports the FI_RX_CQ_DATA
// mode (fi_getinfo(3): remote CQ data "will consume a receive buffer at
// the target", RMA writes included), which some providers require before
// they offer remote CQ data (verbs). Tests that write with remote CQ data
// then post a receive for it (World::rx_cq_data).
bool RxCqDataMode();

// The hints the suite passes to fi_getinfo for these options (caller frees),
// with or without o.optional_caps.
fi_info* MakeHints(const Options& o, bool with_optional = true);
// fi_getinfo with MakeHints(o); on -FI_ENODATA asks again without the
// optional caps. Returns fi_getinfo's result; *out is the whole list.
int GetInfo(const Options& o, fi_info** out, bool* with_optional = nullptr);

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

// ---- Event queues (FI_EP_MSG) ------------------------------------------------------

// One event read from an EQ (fi_eq_read, or fi_eq_readerr on -FI_EAVAIL).
struct EqEvent {
	bool error = false;
	uint32_t event = 0;         // FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN...
	fid_t fid = nullptr;
	fi_info* info = nullptr;    // FI_CONNREQ: the taker frees it
	ssize_t bytes = 0;          // what fi_eq_read returned
	std::vector<uint8_t> data;  // CM data beyond the fi_eq_cm_entry
	// Error entries only.
	void* context = nullptr;
	int err = 0;
	int prov_errno = 0;
	std::vector<uint8_t> err_data;
	std::string strerror;       // fi_eq_strerror, taken when read
};
const char* EventName(uint32_t event);

// An EQ with the log of what was read from it.
struct Eq {
	fid_eq* eq = nullptr;
	std::deque<EqEvent> log;
	std::string name = "eq";
	// Reads what is available (one fi_eq_read, plus fi_eq_readerr on
	// -FI_EAVAIL). Returns events read, or a negative fabric errno other
	// than -FI_EAGAIN.
	long Poll();
};

// ---- Nodes and the world ----------------------------------------------------------

struct Node {
	int index = 0;
	// The fi_info the node's domain and endpoints are opened with: the
	// World's (RDM), or one naming the node's listening address (MSG).
	fi_info* info = nullptr;
	bool own_info = false;
	fid_domain* domain = nullptr;
	fid_av* av = nullptr;                // RDM only
	Cq tx, rx;
	std::map<uint64_t, fid_cntr*> cntr;  // by bind flag
	// RDM: the endpoint. MSG: the endpoint connected to default_peer.
	fid_ep* ep = nullptr;
	int default_peer = -1;               // MSG
	std::map<int, fid_ep*> conns;        // MSG: endpoints to other peers
	Eq* eq = nullptr;                    // MSG: the EQ ep is bound to
	fid_pep* pep = nullptr;              // MSG: the node's listener
	Eq* listen_eq = nullptr;             // MSG: the EQ pep is bound to
	std::vector<uint8_t> listen_name;    // MSG: fi_getname of pep
	std::vector<uint8_t> name;           // fi_getname of ep
	std::vector<fi_addr_t> peers;        // RDM: fi_addr of node j in the AV
	fi_addr_t peer(int j) const { return peers.at(j); }
	// The endpoint that talks to node j: ep (RDM), or the one connected
	// to node j (MSG).
	fid_ep* Ep(int j) const;
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
	// The provider requires FI_RX_CQ_DATA (info->mode or rx_attr->mode).
	bool rx_cq_data() const;

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

	// ---- Connections (FI_EP_MSG) ----
	// What is made here belongs to the World and is closed by Close:
	// endpoints first, passive endpoints after the memory regions, EQs
	// after everything that can be bound to them. A test that closes one
	// itself uses CloseEp/ClosePep, or Forget.
	Eq* NewEq(const std::string& name);
	// fi_endpoint on node's domain (with `with`, default the node's info),
	// bound to eq (unless NULL) and to the node's CQs and counters, not
	// enabled. NULL after a test failure.
	fid_ep* NewEp(int node, Eq* eq, fi_info* with = nullptr,
		      const std::string& name = "");
	// fi_passive_ep (with `with`, default this->info) + fi_pep_bind(eq)
	// + fi_listen + fi_getname into *name. NULL after a test failure.
	fid_pep* Listen(Eq* eq, std::vector<uint8_t>* name,
			const std::string& what = "listener",
			fi_info* with = nullptr);
	// Waits (bounded) for the oldest event on eq whose fid is fid (any
	// fid when NULL), error events included, and removes it from the
	// log. Polls every EQ and CQ of the World meanwhile.
	::testing::AssertionResult WaitEvent(Eq* eq, EqEvent* out,
					     fid_t fid = nullptr);
	// Connects a new endpoint of node c to a new endpoint of node l: node
	// c fi_connects to node l's listener, node l accepts the FI_CONNREQ,
	// and both see FI_CONNECTED, each endpoint bound to an EQ of its own
	// (*eq_l, *eq_c) and to its node's CQs and counters, and enabled
	// before fi_connect/fi_accept. False after a test failure.
	// bind_l/bind_c, when given, bind node l's/c's endpoint to its CQs
	// and counters instead (the EQ is bound first either way).
	using BindFn = std::function<int(fid_ep*)>;
	bool Connect(int l, int c, fid_ep** ep_l, fid_ep** ep_c,
		     Eq** eq_l = nullptr, Eq** eq_c = nullptr,
		     const BindFn& bind_l = nullptr,
		     const BindFn& bind_c = nullptr);
	int CloseEp(fid_ep* ep);    // fi_close, and the World forgets it
	int ClosePep(fid_pep* pep);
	void Forget(const void* fid);  // the test closed it itself
	// A name for an endpoint, EQ or passive endpoint, for messages.
	std::string NameOf(const void* fid) const;
	std::string DescribeEvent(const EqEvent& e) const;
	// Reads every EQ once into its log; <0 on hard error.
	long PollEqs();

      private:
	bool Deadline(std::chrono::steady_clock::time_point start) const;
	bool OpenNode(int i);
	bool OpenMsgEndpoints();
	fi_info* InfoAt(const std::vector<uint8_t>& addr, const fi_info* like);
	// MSG: the fi_info node i listens with (see Open).
	fi_info* ListenInfo(int i) const;
	std::vector<fi_info*> devices_;  // MSG: entries of info's list
	bool ConnectNodes(int l, int c, fid_ep** ep_l, fid_ep** ep_c,
			  Eq** eq_l, Eq** eq_c, bool track,
			  const BindFn& bind_l = nullptr,
			  const BindFn& bind_c = nullptr);
	fid_ep* OpenEp(int node, Eq* eq, fi_info* with,
		       const std::string& name, bool track,
		       const BindFn& bind = nullptr);
	int BindNode(fid_ep* ep, Node& n, Eq* eq);
	std::deque<std::unique_ptr<Buf>> bufs_;
	std::deque<fi_context2> ctxs_;
	std::deque<Eq> eqs_;
	std::vector<fid_pep*> peps_;
	std::vector<fid_ep*> eps_;  // endpoints made by NewEp/Connect
	std::map<const void*, std::string> names_;
	uint64_t next_key_ = 0x51;
	bool closed_ = false;
	bool with_optional_ = true;  // info has opts.optional_caps
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

// fi_cancel is optional: a provider that cannot take back a posted
// operation answers -FI_ENOSYS (fi_errno(3): "Function not implemented"),
// as libfabric's verbs provider does. Cancels ctx on ep, asserting 0, or
// skips the test on -FI_ENOSYS.
#define CONF_CANCEL(ep, ctx)                                                \
	do {                                                                \
		long r_ = fi_cancel(&(ep)->fid, (ctx));                     \
		if (r_ == -FI_ENOSYS)                                       \
			GTEST_SKIP() << "[" << ::conf::Provider()           \
				     << "] fi_cancel is not implemented: "  \
				     << ::conf::Err(r_);                    \
		ASSERT_EQ(r_, 0) << "fi_cancel: " << ::conf::Err(r_);       \
	} while (0)

// Makes a posted receive complete in error, for tests about error entries
// rather than about cancelling: the receive with context rc, posted on
// node r's endpoint to node s with a buffer of posted_len bytes, is
// cancelled (FI_ECANCELED, fi_endpoint(3)); where the provider does not
// implement fi_cancel (-FI_ENOSYS), node s sends it a message 16 B longer
// than its buffer instead (FI_ETRUNC: fi_cq(3) "the received message has
// overrun the available buffer space and has been truncated"). Returns the
// err the error entry must carry, 0 after a test failure.
int FailReceive(World& w, int r, int s, fi_context2* rc, size_t posted_len);

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
