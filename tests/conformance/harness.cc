// The conformance harness: provider selection, the World (fabric, nodes,
// endpoints), memory registration as mr_mode asks, and bounded progress.
#include "harness.h"

#include <sched.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace conf {

// ---- Configuration ------------------------------------------------------------

bool ReferenceBuild()
{
#ifdef CONFORMANCE_REFERENCE
	return true;
#else
	return false;
#endif
}

const std::string& Provider()
{
	static const std::string p = [] {
		const char* e = getenv("CONFORMANCE_PROVIDER");
		if (e && *e)
			return std::string(e);
		return std::string(ReferenceBuild() ? "sockets" : "sim");
	}();
	return p;
}

int TimeoutMs()
{
	static const int ms = [] {
		const char* e = getenv("CONFORMANCE_TIMEOUT_MS");
		int v = e ? atoi(e) : 0;
		return v > 0 ? v : 10000;
	}();
	return ms;
}

std::string Err(long code)
{
	if (code == 0)
		return "success";
	std::ostringstream o;
	o << code << " (" << fi_strerror((int)(code < 0 ? -code : code))
	  << ")";
	return o.str();
}

namespace {
// Prints what the binary runs against before the first test.
class Banner : public ::testing::Environment {
      public:
	void SetUp() override
	{
		uint32_t v = fi_version();
		printf("conformance: %s build, provider \"%s\", libfabric "
		       "%u.%u, headers %u.%u, FI_PROVIDER=%s, mr_mode hints %s, "
		       "timeout %d ms\n",
		       ReferenceBuild() ? "reference" : "fabsim",
		       Provider().c_str(), FI_MAJOR(v), FI_MINOR(v),
		       FI_MAJOR_VERSION, FI_MINOR_VERSION,
		       getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "(unset)",
		       BasicMrMode() ? "FI_MR_BASIC" : "bits", TimeoutMs());
		fflush(stdout);
	}
};
::testing::Environment* const banner =
	::testing::AddGlobalTestEnvironment(new Banner);
}  // namespace

// ---- Completions ------------------------------------------------------------

size_t EntrySize(fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(fi_cq_data_entry);
	default:
		return sizeof(fi_cq_tagged_entry);
	}
}

Completion FromEntry(fi_cq_format format, const void* entries, size_t i)
{
	Completion c;
	const uint8_t* p = (const uint8_t*)entries + i * EntrySize(format);
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT: {
		const fi_cq_entry* e = (const fi_cq_entry*)p;
		c.op_context = e->op_context;
		break;
	}
	case FI_CQ_FORMAT_MSG: {
		const fi_cq_msg_entry* e = (const fi_cq_msg_entry*)p;
		c.op_context = e->op_context;
		c.flags = e->flags;
		c.len = e->len;
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		const fi_cq_data_entry* e = (const fi_cq_data_entry*)p;
		c.op_context = e->op_context;
		c.flags = e->flags;
		c.len = e->len;
		c.buf = e->buf;
		c.data = e->data;
		break;
	}
	default: {
		const fi_cq_tagged_entry* e = (const fi_cq_tagged_entry*)p;
		c.op_context = e->op_context;
		c.flags = e->flags;
		c.len = e->len;
		c.buf = e->buf;
		c.data = e->data;
		c.tag = e->tag;
		break;
	}
	}
	return c;
}

std::string FlagsStr(uint64_t f)
{
	static const struct {
		uint64_t bit;
		const char* name;
	} names[] = {
		{FI_MSG, "MSG"}, {FI_RMA, "RMA"}, {FI_TAGGED, "TAGGED"},
		{FI_ATOMIC, "ATOMIC"}, {FI_READ, "READ"}, {FI_WRITE, "WRITE"},
		{FI_RECV, "RECV"}, {FI_SEND, "SEND"},
		{FI_REMOTE_READ, "REMOTE_READ"},
		{FI_REMOTE_WRITE, "REMOTE_WRITE"},
		{FI_MULTI_RECV, "MULTI_RECV"},
		{FI_REMOTE_CQ_DATA, "REMOTE_CQ_DATA"}, {FI_MORE, "MORE"},
		{FI_CLAIM, "CLAIM"},
	};
	std::string s;
	for (auto& n : names) {
		if (!(f & n.bit))
			continue;
		s += s.empty() ? "" : "|";
		s += n.name;
		f &= ~n.bit;
	}
	if (f) {
		char hex[32];
		snprintf(hex, sizeof(hex), "%s0x%" PRIx64, s.empty() ? "" : "|",
			 f);
		s += hex;
	}
	return s.empty() ? "0" : s;
}

std::string Describe(const Completion& c)
{
	std::ostringstream o;
	o << (c.error ? "error" : "ok") << " ctx=" << c.op_context
	  << " flags=" << FlagsStr(c.flags) << " len=" << c.len << " data=0x" << std::hex << c.data << " tag=0x"
	  << c.tag << std::dec;
	if (c.error)
		o << " err=" << c.err << " (" << fi_strerror(c.err)
		  << ") prov_errno=" << c.prov_errno << " olen=" << c.olen
		  << " strerror=\"" << c.strerror << "\"";
	return o.str();
}

long Cq::Poll()
{
	constexpr size_t kBatch = 16;
	alignas(16) uint8_t entries[kBatch * sizeof(fi_cq_tagged_entry)];
	fi_addr_t src[kBatch];
	for (fi_addr_t& a : src)
		a = kUntouchedAddr;
	ssize_t n = readfrom ? fi_cq_readfrom(cq, entries, kBatch, src)
			     : fi_cq_read(cq, entries, kBatch);
	if (n > 0) {
		for (ssize_t i = 0; i < n; i++) {
			Completion c = FromEntry(format, entries, i);
			if (readfrom)
				c.src = src[i];
			log.push_back(c);
		}
		return n;
	}
	if (n == -FI_EAGAIN)
		return 0;
	if (n != -FI_EAVAIL)
		return n;
	fi_cq_err_entry e;
	memset(&e, 0, sizeof(e));
	ssize_t r = fi_cq_readerr(cq, &e, 0);
	if (r == -FI_EAGAIN)
		return 0;
	if (r != 1)
		return r < 0 ? r : -FI_EOTHER;
	Completion c;
	c.error = true;
	c.op_context = e.op_context;
	c.flags = e.flags;
	c.len = e.len;
	c.buf = e.buf;
	c.data = e.data;
	c.tag = e.tag;
	c.olen = e.olen;
	c.err = e.err;
	c.prov_errno = e.prov_errno;
	char text[256] = "";
	const char* s = fi_cq_strerror(cq, e.prov_errno, e.err_data, text,
				       sizeof(text));
	c.strerror = s ? s : "(null)";
	log.push_back(c);
	return 1;
}

Completion Cq::Take()
{
	Completion c = log.front();
	log.pop_front();
	return c;
}

const char* LayoutName(Layout l)
{
	return l == Layout::kOneDomain ? "OneDomain" : "TwoDomains";
}

// ---- Memory ------------------------------------------------------------------

uint8_t Pattern(uint8_t seed, size_t i)
{
	return (uint8_t)(seed * 131u + i * 7u + (i >> 8) * 13u + (i >> 16));
}

void Buf::Fill(uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = Pattern(seed, i);
}

bool Buf::Check(uint8_t seed, size_t n, size_t from) const
{
	for (size_t i = 0; i < n; i++)
		if (p[from + i] != Pattern(seed, i))
			return false;
	return true;
}

fid_cntr* Node::counter(uint64_t event) const
{
	auto it = cntr.find(event);
	return it == cntr.end() ? nullptr : it->second;
}

// ---- World ------------------------------------------------------------------

World::~World()
{
	Close();
}

bool BasicMrMode()
{
	const char* e = getenv("CONFORMANCE_MR_MODE");
	return e && strcmp(e, "basic") == 0;
}

// fi_mr(3): FI_MR_BASIC stands for FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
// FI_MR_PROV_KEY, and the FI_LOCAL_MR mode bit for FI_MR_LOCAL.
bool World::mr_local() const
{
	return info && ((info->domain_attr->mr_mode & FI_MR_LOCAL) ||
			(info->mode & FI_LOCAL_MR));
}

bool World::virt_addr() const
{
	return info && ((info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ||
			info->domain_attr->mr_mode == FI_MR_BASIC);
}

bool World::prov_key() const
{
	return info && ((info->domain_attr->mr_mode & FI_MR_PROV_KEY) ||
			info->domain_attr->mr_mode == FI_MR_BASIC);
}

uint64_t World::BadKey(const Buf* b)
{
	size_t ks = info ? info->domain_attr->mr_key_size : 8;
	uint64_t mask = ks > 0 && ks < 8 ? (1ULL << (8 * ks)) - 1 : ~0ULL;
	for (uint64_t k = (b->key + 0x1000) & mask;; k = (k + 0x1001) & mask) {
		bool used = false;
		for (auto& o : bufs_)
			used |= o->mr && o->key == k;
		if (!used)
			return k;
	}
}

uint64_t World::NextKey()
{
	uint64_t k = next_key_++;
	size_t ks = info ? info->domain_attr->mr_key_size : 8;
	if (ks > 0 && ks < 8)
		k &= (1ULL << (8 * ks)) - 1;
	return k;
}

fi_context2* World::Ctx()
{
	ctxs_.emplace_back();
	memset(&ctxs_.back(), 0, sizeof(fi_context2));
	return &ctxs_.back();
}

fi_info* MakeHints(const Options& o)
{
	fi_info* hints = fi_allocinfo();
	if (!hints)
		return nullptr;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = o.caps;
	hints->mode = o.mode;
	hints->domain_attr->mr_mode = o.mr_mode;
	if (BasicMrMode()) {
		// A program written for libfabric <= 1.4: FI_MR_BASIC, and
		// the FI_LOCAL_MR mode bit it supports.
		hints->domain_attr->mr_mode = FI_MR_BASIC;
		hints->mode |= FI_LOCAL_MR;
	}
	hints->tx_attr->msg_order = o.msg_order;
	hints->rx_attr->msg_order = o.msg_order;
	hints->fabric_attr->prov_name = strdup(Provider().c_str());
	return hints;
}

static void Skip(const std::string& why)
{
	GTEST_SKIP() << why;
}

bool World::Open(const Options& o)
{
	opts = o;
	closed_ = false;
	fi_info* hints = MakeHints(o);
	if (!hints) {
		ADD_FAILURE() << "fi_allocinfo returned NULL";
		return false;
	}
	int ret = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &info);
	char caps[512];
	fi_tostr_r(caps, sizeof(caps), &o.caps, FI_TYPE_CAPS);
	fi_freeinfo(hints);
	if (ret == -FI_ENODATA) {
		info = nullptr;
		Skip("fi_getinfo found no FI_EP_RDM endpoint of provider \"" +
		     Provider() + "\" with caps " + caps +
		     " (the provider does not offer them)");
		return false;
	}
	if (ret) {
		info = nullptr;
		ADD_FAILURE() << "fi_getinfo: " << Err(ret);
		return false;
	}
	static bool told = false;
	if (!told) {
		told = true;
		char mm[256];
		fi_tostr_r(mm, sizeof(mm), &info->domain_attr->mr_mode,
			   FI_TYPE_MR_MODE);
		printf("conformance: fabric \"%s\", domain \"%s\", mr_mode "
		       "[%s], mode 0x%llx, addr_format %u, inject_size %zu, "
		       "tx/rx size %zu/%zu\n",
		       info->fabric_attr->name, info->domain_attr->name, mm,
		       (unsigned long long)info->mode, info->addr_format,
		       info->tx_attr->inject_size, info->tx_attr->size,
		       info->rx_attr->size);
	}
	ret = fi_fabric(info->fabric_attr, &fabric, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_fabric: " << Err(ret);
		return false;
	}
	for (int i = 0; i < o.nodes; i++)
		if (!OpenNode(i))
			return false;
	if (!o.enable)
		return true;
	// Exchange addresses: every node's name into every node's AV.
	for (auto& n : nodes) {
		size_t len = 0;
		ret = fi_getname(&n->ep->fid, nullptr, &len);
		if (ret != -FI_ETOOSMALL || len == 0) {
			ADD_FAILURE() << "fi_getname(NULL, 0) returned "
				      << Err(ret) << " len " << len
				      << ", expected -FI_ETOOSMALL and the size";
			return false;
		}
		n->name.assign(len, 0);
		ret = fi_getname(&n->ep->fid, n->name.data(), &len);
		if (ret) {
			ADD_FAILURE() << "fi_getname: " << Err(ret);
			return false;
		}
		n->name.resize(len);
	}
	for (auto& n : nodes) {
		n->peers.assign(nodes.size(), FI_ADDR_NOTAVAIL);
		for (size_t j = 0; j < nodes.size(); j++) {
			ret = fi_av_insert(n->av, nodes[j]->name.data(), 1,
					   &n->peers[j], 0, nullptr);
			if (ret != 1) {
				ADD_FAILURE() << "fi_av_insert of node " << j
					      << " into node " << n->index
					      << ": " << Err(ret);
				return false;
			}
		}
	}
	return true;
}

bool World::OpenNode(int i)
{
	nodes.emplace_back(new Node);
	Node& n = *nodes.back();
	n.index = i;
	int ret;
	if (opts.layout == Layout::kOneDomain && i > 0) {
		n.domain = nodes[0]->domain;
	} else {
		ret = fi_domain(fabric, info, &n.domain, nullptr);
		if (ret) {
			ADD_FAILURE() << "fi_domain: " << Err(ret);
			n.domain = nullptr;
			return false;
		}
	}
	fi_av_attr av_attr;
	memset(&av_attr, 0, sizeof(av_attr));
	av_attr.type = opts.av_type != FI_AV_UNSPEC
			       ? opts.av_type
			       : info->domain_attr->av_type;
	av_attr.count = opts.nodes;
	ret = fi_av_open(n.domain, &av_attr, &n.av, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_av_open: " << Err(ret);
		n.av = nullptr;
		return false;
	}
	for (Cq* cq : {&n.tx, &n.rx}) {
		fi_cq_attr cq_attr;
		memset(&cq_attr, 0, sizeof(cq_attr));
		cq_attr.format = opts.cq_format;
		cq_attr.wait_obj = opts.cq_wait;
		cq_attr.size = opts.cq_size;
		cq->format = opts.cq_format;
		cq->readfrom = opts.readfrom;
		cq->name = cq == &n.tx ? "tx cq" : "rx cq";
		ret = fi_cq_open(n.domain, &cq_attr, &cq->cq, nullptr);
		if (ret) {
			ADD_FAILURE() << "fi_cq_open: " << Err(ret);
			cq->cq = nullptr;
			return false;
		}
	}
	for (uint64_t ev : {FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ,
			    FI_REMOTE_WRITE}) {
		if (!(opts.cntr_events & ev))
			continue;
		fi_cntr_attr cattr;
		memset(&cattr, 0, sizeof(cattr));
		cattr.events = FI_CNTR_EVENTS_COMP;
		cattr.wait_obj = opts.cntr_wait;
		fid_cntr* c = nullptr;
		ret = fi_cntr_open(n.domain, &cattr, &c, nullptr);
		if (ret) {
			ADD_FAILURE() << "fi_cntr_open: " << Err(ret);
			return false;
		}
		n.cntr[ev] = c;
	}
	ret = fi_endpoint(n.domain, info, &n.ep, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_endpoint: " << Err(ret);
		n.ep = nullptr;
		return false;
	}
	ret = fi_ep_bind(n.ep, &n.av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(n.ep, &n.tx.cq->fid, opts.tx_bind);
	if (!ret)
		ret = fi_ep_bind(n.ep, &n.rx.cq->fid, opts.rx_bind);
	for (auto& kv : n.cntr)
		if (!ret)
			ret = fi_ep_bind(n.ep, &kv.second->fid, kv.first);
	if (ret) {
		ADD_FAILURE() << "fi_ep_bind: " << Err(ret);
		return false;
	}
	if (opts.enable) {
		ret = fi_enable(n.ep);
		if (ret) {
			ADD_FAILURE() << "fi_enable: " << Err(ret);
			return false;
		}
	}
	return true;
}

void World::Close()
{
	if (closed_)
		return;
	closed_ = true;
	auto close = [](fid* f, const char* what) {
		if (!f)
			return;
		int r = fi_close(f);
		EXPECT_EQ(r, 0) << "fi_close(" << what << "): " << Err(r);
	};
	for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
		close((*it)->ep ? &(*it)->ep->fid : nullptr, "endpoint");
		(*it)->ep = nullptr;
	}
	for (auto& b : bufs_) {
		close(b->mr ? &b->mr->fid : nullptr, "memory region");
		b->mr = nullptr;
	}
	for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
		Node& n = **it;
		close(n.tx.cq ? &n.tx.cq->fid : nullptr, "tx cq");
		close(n.rx.cq ? &n.rx.cq->fid : nullptr, "rx cq");
		n.tx.cq = n.rx.cq = nullptr;
		for (auto& kv : n.cntr)
			close(kv.second ? &kv.second->fid : nullptr, "counter");
		n.cntr.clear();
		close(n.av ? &n.av->fid : nullptr, "av");
		n.av = nullptr;
		bool shared = opts.layout == Layout::kOneDomain && n.index > 0;
		if (!shared)
			close(n.domain ? &n.domain->fid : nullptr, "domain");
		n.domain = nullptr;
	}
	nodes.clear();
	close(fabric ? &fabric->fid : nullptr, "fabric");
	fabric = nullptr;
	for (auto& b : bufs_)
		if (b->owned)
			free(b->p);
	bufs_.clear();
	if (info)
		fi_freeinfo(info);
	info = nullptr;
}

Buf* World::NewBuf(int n, size_t len, uint64_t access)
{
	std::unique_ptr<Buf> b(new Buf);
	void* p = nullptr;
	size_t alloc = len ? len : 1;
	if (posix_memalign(&p, 4096, alloc)) {
		ADD_FAILURE() << "out of memory for a " << len << " B buffer";
		return nullptr;
	}
	memset(p, 0, alloc);
	b->p = (uint8_t*)p;
	b->len = len;
	b->owned = true;
	bufs_.push_back(std::move(b));
	Buf* r = bufs_.back().get();
	if (mr_local() || (access & kRemoteAccess)) {
		int ret = Register(n, r, access);
		if (ret)
			ADD_FAILURE() << "registering a " << len
				      << " B buffer: " << Err(ret);
	}
	return r;
}

Buf* World::View(int n, Buf* parent, size_t off, size_t len, uint64_t access)
{
	std::unique_ptr<Buf> b(new Buf);
	b->p = parent->p + off;
	b->len = len;
	bufs_.push_back(std::move(b));
	Buf* r = bufs_.back().get();
	int ret = Register(n, r, access);
	if (ret)
		ADD_FAILURE() << "registering a " << len << " B view: " << Err(ret);
	return r;
}

int World::Register(int ni, Buf* b, uint64_t access, uint64_t flags)
{
	Node& n = node(ni);
	int mm = info->domain_attr->mr_mode;
	if (mm & FI_MR_RMA_EVENT)
		flags |= FI_RMA_EVENT;
	size_t len = b->len ? b->len : 1;
	int ret = fi_mr_reg(n.domain, b->p, len, access, 0,
			    prov_key() ? 0 : NextKey(), flags, &b->mr, nullptr);
	if (ret) {
		b->mr = nullptr;
		return ret;
	}
	if ((mm & FI_MR_ENDPOINT) && n.ep) {
		ret = fi_mr_bind(b->mr, &n.ep->fid, 0);
		if (ret)
			return ret;
	}
	if (mm & FI_MR_RMA_EVENT) {
		for (uint64_t ev : {FI_REMOTE_WRITE, FI_REMOTE_READ}) {
			fid_cntr* c = n.counter(ev);
			if (c && (ret = fi_mr_bind(b->mr, &c->fid, ev)))
				return ret;
		}
	}
	if (mm & (FI_MR_ENDPOINT | FI_MR_RMA_EVENT)) {
		ret = fi_mr_enable(b->mr);
		if (ret)
			return ret;
	}
	b->key = fi_mr_key(b->mr);
	b->desc = mr_local() ? fi_mr_desc(b->mr) : nullptr;
	b->base = virt_addr() ? (uint64_t)(uintptr_t)b->p : 0;
	return 0;
}

// ---- Progress -----------------------------------------------------------------

bool World::Deadline(std::chrono::steady_clock::time_point start) const
{
	auto el = std::chrono::steady_clock::now() - start;
	return std::chrono::duration_cast<std::chrono::milliseconds>(el)
		       .count() > TimeoutMs();
}

long World::PollAll()
{
	long total = 0;
	for (auto& n : nodes) {
		for (Cq* cq : {&n->tx, &n->rx}) {
			if (!cq->cq || cq->manual)
				continue;
			long r = cq->Poll();
			if (r < 0)
				return r;
			total += r;
		}
		for (auto& kv : n->cntr)
			(void)fi_cntr_read(kv.second);
	}
	return total;
}

::testing::AssertionResult World::WaitFor(Cq& cq, size_t want)
{
	auto start = std::chrono::steady_clock::now();
	long idle = 0;
	for (long i = 0; i < 20000000L; i++) {
		if (cq.log.size() >= want)
			return ::testing::AssertionSuccess();
		long r = PollAll();
		if (r == 0 && cq.manual)
			r = cq.Poll();
		if (r < 0)
			return ::testing::AssertionFailure()
			       << "reading CQs failed: " << Err(r);
		if (r == 0 && ++idle > 1000)
			sched_yield();
		if (r > 0)
			idle = 0;
		if (Deadline(start))
			break;
	}
	return ::testing::AssertionFailure()
	       << "timed out after " << TimeoutMs() << " ms waiting for " << want
	       << " completion(s) on " << cq.name << " (have "
	       << cq.log.size() << ")";
}

::testing::AssertionResult World::WaitCntr(fid_cntr* c, uint64_t value)
{
	auto start = std::chrono::steady_clock::now();
	uint64_t v = 0;
	for (long i = 0; i < 20000000L; i++) {
		v = fi_cntr_read(c);
		if (v >= value)
			return ::testing::AssertionSuccess();
		if (PollAll() < 0)
			return ::testing::AssertionFailure()
			       << "CQ read failed while waiting for a counter";
		if (i > 1000)
			sched_yield();
		if (Deadline(start))
			break;
	}
	return ::testing::AssertionFailure()
	       << "timed out waiting for counter to reach " << value
	       << " (at " << v << ", errors " << fi_cntr_readerr(c) << ")";
}

void World::Settle(int rounds)
{
	auto start = std::chrono::steady_clock::now();
	for (int i = 0; i < rounds; i++)
		PollAll();
	// Real providers also need a little real time for stray events.
	while (std::chrono::steady_clock::now() - start <
	       std::chrono::milliseconds(20)) {
		PollAll();
		sched_yield();
	}
}

Completion World::Expect(Cq& cq, void* ctx)
{
	::testing::AssertionResult r = WaitFor(cq, 1);
	if (!r) {
		ADD_FAILURE() << r.message();
		Completion c;
		c.error = true;
		c.err = FI_ETIMEDOUT;
		return c;
	}
	Completion c = cq.Take();
	EXPECT_FALSE(c.error) << cq.name << ": " << Describe(c);
	EXPECT_EQ(c.op_context, ctx) << cq.name << ": " << Describe(c);
	return c;
}

Completion World::ExpectError(Cq& cq)
{
	::testing::AssertionResult r = WaitFor(cq, 1);
	if (!r) {
		ADD_FAILURE() << r.message();
		Completion c;
		c.err = FI_ETIMEDOUT;
		return c;
	}
	Completion c = cq.Take();
	EXPECT_TRUE(c.error) << cq.name << ": expected an error completion, got "
			     << Describe(c);
	return c;
}

long PostRetry(World& w, const std::function<long()>& post)
{
	auto start = std::chrono::steady_clock::now();
	long r = -FI_EAGAIN;
	for (long i = 0; i < 20000000L; i++) {
		r = post();
		if (r != -FI_EAGAIN)
			return r;
		if (w.PollAll() < 0)
			return r;
		if (std::chrono::steady_clock::now() - start >
		    std::chrono::milliseconds(TimeoutMs()))
			break;
	}
	return r;
}

}  // namespace conf
