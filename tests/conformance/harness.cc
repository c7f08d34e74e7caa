// The conformance harness: provider selection, the World (fabric, nodes,
// endpoints, connections), memory registration as mr_mode asks, and
// bounded progress.
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

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

fi_ep_type EpType()
{
	static const fi_ep_type t = [] {
		const char* e = getenv("CONFORMANCE_EP_TYPE");
		return e && (strcmp(e, "msg") == 0 || strcmp(e, "MSG") == 0 ||
			     strcmp(e, "FI_EP_MSG") == 0)
			       ? FI_EP_MSG
			       : FI_EP_RDM;
	}();
	return t;
}

bool MsgMode()
{
	return EpType() == FI_EP_MSG;
}

const char* EpTypeName()
{
	return MsgMode() ? "FI_EP_MSG" : "FI_EP_RDM";
}

uint64_t DefaultCaps()
{
	return MsgMode() ? FI_MSG : FI_MSG | FI_TAGGED;
}

uint64_t DefaultMode()
{
	return FI_CONTEXT | FI_CONTEXT2 | (RxCqDataMode() ? FI_RX_CQ_DATA : 0);
}

uint64_t DefaultOptionalCaps()
{
	return MsgMode() ? FI_TAGGED : 0;
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

bool NoCounters(const fi_info* info, long ret, std::string* why)
{
	if (ret != -FI_ENOSYS || !info || info->domain_attr->cntr_cnt != 0)
		return false;
	*why = "provider \"" + Provider() +
	       "\" offers no counters (domain_attr->cntr_cnt is 0 and "
	       "fi_cntr_open returns " +
	       Err(ret) + ")";
	return true;
}

namespace {
// Prints what the binary runs against before the first test.
class Banner : public ::testing::Environment {
      public:
	void SetUp() override
	{
		uint32_t v = fi_version();
		printf("conformance: %s build, provider \"%s\", %s, libfabric "
		       "%u.%u, headers %u.%u, FI_PROVIDER=%s, mr_mode hints %s, "
		       "%stimeout %d ms\n",
		       ReferenceBuild() ? "reference" : "fabsim",
		       Provider().c_str(), EpTypeName(), FI_MAJOR(v), FI_MINOR(v),
		       FI_MAJOR_VERSION, FI_MINOR_VERSION,
		       getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "(unset)",
		       BasicMrMode() ? "FI_MR_BASIC" : "bits",
		       RxCqDataMode() ? "mode hints with FI_RX_CQ_DATA, " : "",
		       TimeoutMs());
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

fid_ep* Node::Ep(int j) const
{
	if (!MsgMode() || j == default_peer)
		return ep;
	auto it = conns.find(j);
	if (it == conns.end()) {
		ADD_FAILURE() << "node " << index << " has no connection to node "
			      << j;
		return nullptr;
	}
	return it->second;
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

bool RxCqDataMode()
{
	const char* e = getenv("CONFORMANCE_RX_CQ_DATA");
	return e && strcmp(e, "1") == 0;
}

bool World::rx_cq_data() const
{
	return info && ((info->mode & FI_RX_CQ_DATA) ||
			(info->rx_attr && (info->rx_attr->mode & FI_RX_CQ_DATA)));
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

fi_info* MakeHints(const Options& o, bool with_optional)
{
	fi_info* hints = fi_allocinfo();
	if (!hints)
		return nullptr;
	hints->ep_attr->type = EpType();
	hints->caps = o.caps | (with_optional ? o.optional_caps : 0);
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

int GetInfo(const Options& o, fi_info** out, bool* with_optional)
{
	*out = nullptr;
	int ret = -FI_ENODATA;
	for (bool optional : {true, false}) {
		if (!optional && !(o.optional_caps & ~o.caps))
			break;
		fi_info* hints = MakeHints(o, optional);
		if (!hints)
			return -FI_ENOMEM;
		ret = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, out);
		fi_freeinfo(hints);
		if (with_optional)
			*with_optional = optional;
		if (ret != -FI_ENODATA)
			break;
		*out = nullptr;
	}
	return ret;
}

static void Skip(const std::string& why)
{
	GTEST_SKIP() << why;
}

// Network use is loopback only: a connected endpoint of a reference
// provider listens and connects on the loopback interface when it offers
// one (sim's addresses are simulated and never reach a network).
static bool IsLoopback(const fi_info* i)
{
	if (!i->src_addr || i->src_addrlen < sizeof(sockaddr))
		return false;
	const sockaddr* sa = (const sockaddr*)i->src_addr;
	if (sa->sa_family == AF_INET &&
	    i->src_addrlen >= sizeof(sockaddr_in))
		return (ntohl(((const sockaddr_in*)sa)->sin_addr.s_addr) >>
			24) == 127;
	if (sa->sa_family == AF_INET6 &&
	    i->src_addrlen >= sizeof(sockaddr_in6))
		return IN6_IS_ADDR_LOOPBACK(
			&((const sockaddr_in6*)sa)->sin6_addr);
	return false;
}

static std::string AddrStr(const void* addr, size_t len)
{
	if (!addr || len < sizeof(sockaddr))
		return "(none)";
	const sockaddr* sa = (const sockaddr*)addr;
	char host[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
		const sockaddr_in* in = (const sockaddr_in*)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		return std::string(host) + ":" +
		       std::to_string(ntohs(in->sin_port));
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
		const sockaddr_in6* in = (const sockaddr_in6*)sa;
		inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
		return "[" + std::string(host) + "]:" +
		       std::to_string(ntohs(in->sin6_port));
	}
	return "(family " + std::to_string(sa->sa_family) + ")";
}

bool World::Open(const Options& o)
{
	opts = o;
	closed_ = false;
	int ret = GetInfo(o, &info, &with_optional_);
	char caps[512];
	fi_tostr_r(caps, sizeof(caps), &o.caps, FI_TYPE_CAPS);
	if (ret == -FI_ENODATA) {
		info = nullptr;
		Skip(std::string("fi_getinfo found no ") + EpTypeName() +
		     " endpoint of provider \"" + Provider() +
		     "\" with caps " + caps +
		     " (the provider does not offer them)");
		return false;
	}
	if (ret) {
		info = nullptr;
		ADD_FAILURE() << "fi_getinfo: " << Err(ret);
		return false;
	}
	if (MsgMode() && !IsLoopback(info)) {
		for (fi_info* i = info->next; i; i = i->next) {
			if (!IsLoopback(i))
				continue;
			fi_info* one = fi_dupinfo(i);
			if (!one) {
				ADD_FAILURE() << "fi_dupinfo returned NULL";
				return false;
			}
			fi_freeinfo(info);
			info = one;
			break;
		}
	}
	// MSG without a loopback entry: the list's devices (entries of the
	// same fabric and mr_mode, one per domain name). Node i listens on
	// device i (wrapping), so that with several NICs -- verbs on the
	// simulated ones -- connections of the TwoDomains layout cross the
	// wire between two of them. A provider with one domain (sim, whose
	// listeners each land on a new simulated host) is unchanged.
	devices_.clear();
	if (MsgMode() && !IsLoopback(info)) {
		for (fi_info* i = info; i; i = i->next) {
			auto same = [](const char* a, const char* b) {
				return a && b && strcmp(a, b) == 0;
			};
			bool fits = same(i->fabric_attr->name,
					 info->fabric_attr->name) &&
				    i->domain_attr->mr_mode ==
					    info->domain_attr->mr_mode;
			for (fi_info* d : devices_)
				fits = fits && !same(d->domain_attr->name,
						     i->domain_attr->name);
			if (fits)
				devices_.push_back(i);
		}
	}
	static bool told = false;
	if (!told) {
		told = true;
		char mm[256], got[512];
		fi_tostr_r(mm, sizeof(mm), &info->domain_attr->mr_mode,
			   FI_TYPE_MR_MODE);
		fi_tostr_r(got, sizeof(got), &info->caps, FI_TYPE_CAPS);
		printf("conformance: fabric \"%s\", domain \"%s\", src_addr "
		       "%s, caps [%s], mr_mode [%s], mode 0x%llx, addr_format "
		       "%u, inject_size %zu, tx/rx size %zu/%zu\n",
		       info->fabric_attr->name, info->domain_attr->name,
		       AddrStr(info->src_addr, info->src_addrlen).c_str(), got,
		       mm, (unsigned long long)info->mode, info->addr_format,
		       info->tx_attr->inject_size, info->tx_attr->size,
		       info->rx_attr->size);
		if (devices_.size() > 1) {
			printf("conformance: nodes listen on %zu devices in "
			       "turn:",
			       devices_.size());
			for (fi_info* d : devices_)
				printf(" \"%s\" (%s)", d->domain_attr->name,
				       AddrStr(d->src_addr, d->src_addrlen)
					       .c_str());
			printf("\n");
		}
	}
	ret = fi_fabric(info->fabric_attr, &fabric, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_fabric: " << Err(ret);
		return false;
	}
	for (int i = 0; i < o.nodes; i++)
		if (!OpenNode(i))
			return false;
	if (!o.endpoints)
		return true;
	if (MsgMode() && !OpenMsgEndpoints())
		return false;
	if (!o.enable)
		return true;
	// Every node's name (fi_getname).
	for (auto& n : nodes) {
		if (!n->ep)
			continue;
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
	if (MsgMode()) {
		// fi_msg(3): the destination address is "ignored for
		// connected endpoints".
		for (auto& n : nodes)
			n->peers.assign(nodes.size(), FI_ADDR_UNSPEC);
		return true;
	}
	// Exchange addresses: every node's name into every node's AV.
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
	n.info = info;
	if (MsgMode()) {
		// A server's way: listen first, then open the domain on the
		// listener's address, where its connection requests arrive.
		std::string s = "node " + std::to_string(i);
		bool shared = opts.layout == Layout::kOneDomain && i > 0;
		n.listen_eq = NewEq(s + "'s listening EQ");
		if (!n.listen_eq)
			return false;
		fi_info* at = shared ? nodes[0]->info : ListenInfo(i);
		n.pep = Listen(n.listen_eq, &n.listen_name, s + "'s listener",
			       at);
		if (!n.pep)
			return false;
		if (shared) {
			n.info = nodes[0]->info;
		} else {
			n.info = InfoAt(n.listen_name, at);
			if (!n.info)
				return false;
			n.own_info = true;
		}
	}
	if (opts.layout == Layout::kOneDomain && i > 0) {
		n.domain = nodes[0]->domain;
	} else {
		ret = fi_domain(fabric, n.info, &n.domain, nullptr);
		if (ret) {
			ADD_FAILURE() << "fi_domain: " << Err(ret);
			n.domain = nullptr;
			return false;
		}
	}
	if (!MsgMode()) {
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
		std::string why;
		if (ret && NoCounters(n.info, ret, &why)) {
			Skip("the test counts with counters, and the " + why);
			return false;
		}
		if (ret) {
			ADD_FAILURE() << "fi_cntr_open: " << Err(ret);
			return false;
		}
		n.cntr[ev] = c;
	}
	if (MsgMode() || !opts.endpoints)
		return true;  // MSG: OpenMsgEndpoints
	ret = fi_endpoint(n.domain, n.info, &n.ep, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_endpoint: " << Err(ret);
		n.ep = nullptr;
		return false;
	}
	names_[n.ep] = "node " + std::to_string(i) + "'s endpoint";
	ret = BindNode(n.ep, n, nullptr);
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
		for (auto& kv : (*it)->conns)
			close(kv.second ? &kv.second->fid : nullptr,
			      "endpoint");
		(*it)->conns.clear();
	}
	for (auto it = eps_.rbegin(); it != eps_.rend(); ++it)
		close(&(*it)->fid, "endpoint");
	eps_.clear();
	for (auto& b : bufs_) {
		close(b->mr ? &b->mr->fid : nullptr, "memory region");
		b->mr = nullptr;
	}
	for (auto it = peps_.rbegin(); it != peps_.rend(); ++it)
		close(&(*it)->fid, "passive endpoint");
	peps_.clear();
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
		if (n.own_info && n.info)
			fi_freeinfo(n.info);
		n.info = nullptr;
	}
	nodes.clear();
	for (auto it = eqs_.rbegin(); it != eqs_.rend(); ++it) {
		close(it->eq ? &it->eq->fid : nullptr, "event queue");
		it->eq = nullptr;
		for (EqEvent& e : it->log)
			if (e.info)
				fi_freeinfo(e.info);
	}
	eqs_.clear();
	names_.clear();
	close(fabric ? &fabric->fid : nullptr, "fabric");
	fabric = nullptr;
	for (auto& b : bufs_)
		if (b->owned)
			free(b->p);
	bufs_.clear();
	devices_.clear();
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

int FailReceive(World& w, int r, int s, fi_context2* rc, size_t posted_len)
{
	long ret = fi_cancel(&w.node(r).Ep(s)->fid, rc);
	if (ret == 0)
		return FI_ECANCELED;
	if (ret != -FI_ENOSYS) {
		ADD_FAILURE() << "fi_cancel: " << Err(ret);
		return 0;
	}
	printf("conformance: fi_cancel returns %s: the error entry comes "
	       "from a truncated receive instead\n",
	       Err(ret).c_str());
	size_t n = posted_len + 16;
	Buf* b = w.NewBuf(s, n);
	if (!b)
		return 0;
	b->Fill(0x7e);
	ret = PostRetry(w, [&] {
		return fi_send(w.node(s).Ep(r), b->p, n, b->desc,
			       w.node(s).peer(r), w.Ctx());
	});
	if (ret) {
		ADD_FAILURE() << "fi_send of the " << n << " B message that "
			      << "overruns a " << posted_len
			      << " B receive: " << Err(ret);
		return 0;
	}
	return FI_ETRUNC;
}

// ---- Event queues and connections (FI_EP_MSG) -----------------------------------

const char* EventName(uint32_t event)
{
	switch (event) {
	case FI_NOTIFY:
		return "FI_NOTIFY";
	case FI_CONNREQ:
		return "FI_CONNREQ";
	case FI_CONNECTED:
		return "FI_CONNECTED";
	case FI_SHUTDOWN:
		return "FI_SHUTDOWN";
	case FI_MR_COMPLETE:
		return "FI_MR_COMPLETE";
	case FI_AV_COMPLETE:
		return "FI_AV_COMPLETE";
	case FI_JOIN_COMPLETE:
		return "FI_JOIN_COMPLETE";
	default:
		return "(unknown event)";
	}
}

long Eq::Poll()
{
	if (!eq)
		return 0;
	alignas(fi_eq_cm_entry) uint8_t buf[sizeof(fi_eq_cm_entry) + 1024];
	memset(buf, 0, sizeof(buf));
	uint32_t event = 0;
	ssize_t n = fi_eq_read(eq, &event, buf, sizeof(buf), 0);
	if (n > 0) {
		EqEvent e;
		e.event = event;
		e.bytes = n;
		if (event == FI_CONNREQ || event == FI_CONNECTED ||
		    event == FI_SHUTDOWN) {
			const fi_eq_cm_entry* cm = (const fi_eq_cm_entry*)buf;
			e.fid = cm->fid;
			e.info = cm->info;
			if ((size_t)n > sizeof(fi_eq_cm_entry))
				e.data.assign(buf + sizeof(fi_eq_cm_entry),
					      buf + n);
		} else {
			const fi_eq_entry* en = (const fi_eq_entry*)buf;
			e.fid = en->fid;
			e.context = en->context;
		}
		log.push_back(e);
		return 1;
	}
	if (n == -FI_EAGAIN)
		return 0;
	if (n != -FI_EAVAIL)
		return n;
	fi_eq_err_entry err;
	memset(&err, 0, sizeof(err));
	ssize_t r = fi_eq_readerr(eq, &err, 0);
	if (r == -FI_EAGAIN)
		return 0;
	if (r < 0)
		return r;
	EqEvent e;
	e.error = true;
	e.bytes = r;
	e.fid = err.fid;
	e.context = err.context;
	e.err = err.err;
	e.prov_errno = err.prov_errno;
	if (err.err_data && err.err_data_size)
		e.err_data.assign((const uint8_t*)err.err_data,
				  (const uint8_t*)err.err_data +
					  err.err_data_size);
	char text[256] = "";
	const char* s = fi_eq_strerror(eq, err.prov_errno, err.err_data, text,
				       sizeof(text));
	e.strerror = s ? s : "(null)";
	log.push_back(e);
	return 1;
}

std::string World::NameOf(const void* fid) const
{
	auto it = names_.find(fid);
	if (it != names_.end())
		return it->second;
	std::ostringstream o;
	o << "fid " << fid;
	return o.str();
}

std::string World::DescribeEvent(const EqEvent& e) const
{
	std::ostringstream o;
	if (e.error) {
		o << "error event on " << NameOf(e.fid) << ": err=" << e.err
		  << " (" << fi_strerror(e.err) << ") prov_errno="
		  << e.prov_errno << " strerror=\"" << e.strerror << "\"";
		return o.str();
	}
	o << EventName(e.event) << " on " << NameOf(e.fid) << " (" << e.bytes
	  << " bytes";
	if (!e.data.empty())
		o << ", " << e.data.size() << " bytes of CM data";
	o << ")";
	return o.str();
}

Eq* World::NewEq(const std::string& name)
{
	fi_eq_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.wait_obj = FI_WAIT_NONE;
	fid_eq* eq = nullptr;
	int ret = fi_eq_open(fabric, &attr, &eq, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_eq_open (" << name << "): " << Err(ret);
		return nullptr;
	}
	eqs_.emplace_back();
	Eq* e = &eqs_.back();
	e->eq = eq;
	e->name = name;
	names_[eq] = name;
	return e;
}

int World::BindNode(fid_ep* ep, Node& n, Eq* eq)
{
	int ret = 0;
	if (eq)
		ret = fi_ep_bind(ep, &eq->eq->fid, 0);
	if (!ret && n.av)
		ret = fi_ep_bind(ep, &n.av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(ep, &n.tx.cq->fid, opts.tx_bind);
	if (!ret)
		ret = fi_ep_bind(ep, &n.rx.cq->fid, opts.rx_bind);
	for (auto& kv : n.cntr)
		if (!ret)
			ret = fi_ep_bind(ep, &kv.second->fid, kv.first);
	return ret;
}

fid_ep* World::OpenEp(int i, Eq* eq, fi_info* with, const std::string& name,
		      bool track, const BindFn& bind)
{
	Node& n = node(i);
	fid_ep* ep = nullptr;
	int ret = fi_endpoint(n.domain, with ? with : n.info, &ep, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_endpoint (" << name << "): " << Err(ret);
		return nullptr;
	}
	names_[ep] = name;
	if (track)
		eps_.push_back(ep);
	if (bind) {
		ret = eq ? fi_ep_bind(ep, &eq->eq->fid, 0) : 0;
		if (!ret)
			ret = bind(ep);
	} else {
		ret = BindNode(ep, n, eq);
	}
	if (ret) {
		ADD_FAILURE() << "fi_ep_bind (" << name << "): " << Err(ret);
		if (!track)
			fi_close(&ep->fid);
		return nullptr;
	}
	return ep;
}

fid_ep* World::NewEp(int i, Eq* eq, fi_info* with, const std::string& name)
{
	return OpenEp(i, eq, with,
		      name.empty() ? "node " + std::to_string(i) +
					     "'s extra endpoint"
				   : name,
		      true);
}

fid_pep* World::Listen(Eq* eq, std::vector<uint8_t>* name,
		       const std::string& what, fi_info* with)
{
	fid_pep* pep = nullptr;
	int ret = fi_passive_ep(fabric, with ? with : info, &pep, nullptr);
	if (ret) {
		ADD_FAILURE() << "fi_passive_ep (" << what << "): " << Err(ret);
		return nullptr;
	}
	peps_.push_back(pep);
	names_[pep] = what;
	ret = fi_pep_bind(pep, &eq->eq->fid, 0);
	if (ret) {
		ADD_FAILURE() << "fi_pep_bind (" << what << ", " << eq->name
			      << "): " << Err(ret);
		return nullptr;
	}
	ret = fi_listen(pep);
	if (ret) {
		ADD_FAILURE() << "fi_listen (" << what << "): " << Err(ret);
		return nullptr;
	}
	size_t len = 0;
	ret = fi_getname(&pep->fid, nullptr, &len);
	if (ret != -FI_ETOOSMALL || len == 0) {
		ADD_FAILURE() << "fi_getname(" << what << ", NULL, 0) returned "
			      << Err(ret) << " len " << len
			      << ", expected -FI_ETOOSMALL and the size";
		return nullptr;
	}
	name->assign(len, 0);
	ret = fi_getname(&pep->fid, name->data(), &len);
	if (ret) {
		ADD_FAILURE() << "fi_getname (" << what << "): " << Err(ret);
		return nullptr;
	}
	name->resize(len);
	names_[pep] = what + " at " + AddrStr(name->data(), name->size());
	return pep;
}

long World::PollEqs()
{
	long total = 0;
	for (Eq& e : eqs_) {
		long r = e.Poll();
		if (r < 0)
			return r;
		total += r;
	}
	return total;
}

::testing::AssertionResult World::WaitEvent(Eq* eq, EqEvent* out, fid_t fid)
{
	auto start = std::chrono::steady_clock::now();
	long idle = 0;
	for (long i = 0; i < 20000000L; i++) {
		for (auto it = eq->log.begin(); it != eq->log.end(); ++it) {
			if (fid && it->fid != fid)
				continue;
			*out = *it;
			eq->log.erase(it);
			return ::testing::AssertionSuccess();
		}
		long r = PollEqs();
		if (r < 0)
			return ::testing::AssertionFailure()
			       << "reading event queues failed: " << Err(r);
		long c = PollAll();
		if (c < 0)
			return ::testing::AssertionFailure()
			       << "reading CQs failed: " << Err(c);
		if (r + c == 0 && ++idle > 1000)
			sched_yield();
		if (r + c > 0)
			idle = 0;
		if (Deadline(start))
			break;
	}
	std::ostringstream o;
	o << "timed out after " << TimeoutMs() << " ms waiting for an event on "
	  << eq->name;
	if (fid)
		o << " for " << NameOf(fid);
	if (eq->log.empty())
		o << " (the EQ holds no other event)";
	for (const EqEvent& e : eq->log)
		o << "; other event: " << DescribeEvent(e);
	return ::testing::AssertionFailure() << o.str();
}

bool World::ConnectNodes(int l, int c, fid_ep** ep_l, fid_ep** ep_c,
			 Eq** eq_l, Eq** eq_c, bool track, const BindFn& bind_l,
			 const BindFn& bind_c)
{
	const std::string ls = "node " + std::to_string(l);
	const std::string cs = "node " + std::to_string(c);
	*ep_l = *ep_c = nullptr;
	Node& L = node(l);
	if (!L.pep || !L.listen_eq) {
		ADD_FAILURE() << ls << " has no listener";
		return false;
	}
	Eq* leq = NewEq(ls + "'s EQ for " + cs);
	Eq* ceq = NewEq(cs + "'s EQ for " + ls);
	if (!leq || !ceq)
		return false;
	if (eq_l)
		*eq_l = leq;
	if (eq_c)
		*eq_c = ceq;
	fid_pep* pep = L.pep;
	const std::vector<uint8_t>& addr = L.listen_name;
	const std::string lname = NameOf(pep);
	fid_ep* cep = OpenEp(c, ceq, nullptr, cs + "'s endpoint to " + ls,
			     track, bind_c);
	if (!cep)
		return false;
	*ep_c = cep;
	int ret = fi_enable(cep);
	if (ret) {
		ADD_FAILURE() << "fi_enable (" << NameOf(cep) << "): " << Err(ret);
		return false;
	}
	ret = fi_connect(cep, addr.data(), nullptr, 0);
	if (ret) {
		ADD_FAILURE() << "fi_connect (" << NameOf(cep) << " to "
			      << lname << "): " << Err(ret);
		return false;
	}
	EqEvent req;
	::testing::AssertionResult ok = WaitEvent(L.listen_eq, &req, nullptr);
	if (!ok) {
		ADD_FAILURE() << "no FI_CONNREQ at " << lname << " after "
			      << NameOf(cep) << " called fi_connect: "
			      << ok.message();
		return false;
	}
	if (req.error || req.event != FI_CONNREQ || req.fid != &pep->fid ||
	    !req.info) {
		ADD_FAILURE() << "expected FI_CONNREQ for " << lname
			      << " (fi_eq(3): \"The fid is the passive "
				 "endpoint\", with an fi_info), got "
			      << DescribeEvent(req)
			      << (req.info ? "" : " without fi_info");
		if (req.info)
			fi_freeinfo(req.info);
		return false;
	}
	// fi_endpoint(3): an endpoint that accepts a connection request is
	// allocated with the fi_info of the FI_CONNREQ event.
	fid_ep* lep = OpenEp(l, leq, req.info, ls + "'s endpoint to " + cs,
			     track, bind_l);
	fi_freeinfo(req.info);
	if (!lep)
		return false;
	*ep_l = lep;
	ret = fi_enable(lep);
	if (ret) {
		ADD_FAILURE() << "fi_enable (" << NameOf(lep) << "): " << Err(ret);
		return false;
	}
	ret = fi_accept(lep, nullptr, 0);
	if (ret) {
		ADD_FAILURE() << "fi_accept (" << NameOf(lep) << "): " << Err(ret);
		return false;
	}
	// fi_cm(3): an accepted request results in FI_CONNECTED at the active
	// endpoint, and at the accepting endpoint (not the listener).
	for (int side = 0; side < 2; side++) {
		Eq* eq = side == 0 ? ceq : leq;
		fid_ep* ep = side == 0 ? cep : lep;
		EqEvent ev;
		ok = WaitEvent(eq, &ev, nullptr);
		if (!ok) {
			ADD_FAILURE() << "no FI_CONNECTED for " << NameOf(ep)
				      << ": " << ok.message();
			return false;
		}
		if (ev.error || ev.event != FI_CONNECTED || ev.fid != &ep->fid) {
			ADD_FAILURE() << "expected FI_CONNECTED for "
				      << NameOf(ep) << " on " << eq->name
				      << ", got " << DescribeEvent(ev);
			if (ev.info)
				fi_freeinfo(ev.info);
			return false;
		}
		if (ev.info)
			fi_freeinfo(ev.info);
	}
	return true;
}

bool World::Connect(int l, int c, fid_ep** ep_l, fid_ep** ep_c, Eq** eq_l,
		    Eq** eq_c, const BindFn& bind_l, const BindFn& bind_c)
{
	return ConnectNodes(l, c, ep_l, ep_c, eq_l, eq_c, true, bind_l,
			    bind_c);
}

fi_info* World::ListenInfo(int i) const
{
	return devices_.empty() ? info : devices_[i % devices_.size()];
}

// fi_getinfo(3): node is "commonly used to provide a network address";
// with FI_SOURCE it is the local one. The entry like `like` (same fabric,
// domain and mr_mode) is taken.
fi_info* World::InfoAt(const std::vector<uint8_t>& addr, const fi_info* like)
{
	const sockaddr* sa = (const sockaddr*)addr.data();
	char host[INET6_ADDRSTRLEN] = "";
	if (addr.size() >= sizeof(sockaddr_in) && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const sockaddr_in*)sa)->sin_addr, host,
			  sizeof(host));
	else if (addr.size() >= sizeof(sockaddr_in6) &&
		 sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const sockaddr_in6*)sa)->sin6_addr,
			  host, sizeof(host));
	if (!*host) {
		ADD_FAILURE() << "the listener's address (format "
			      << info->addr_format
			      << ") is not a sockaddr: cannot name it to "
				 "fi_getinfo";
		return nullptr;
	}
	fi_info* hints = MakeHints(opts, with_optional_);
	fi_info* list = nullptr;
	int ret = fi_getinfo(kApiVersion, host, nullptr,
			     FI_SOURCE | FI_NUMERICHOST, hints, &list);
	fi_freeinfo(hints);
	if (ret) {
		ADD_FAILURE() << "fi_getinfo(\"" << host
			      << "\", FI_SOURCE) for the listener's address: "
			      << Err(ret);
		return nullptr;
	}
	fi_info* pick = list;
	for (fi_info* i = list; i; i = i->next) {
		auto same = [](const char* a, const char* b) {
			return a && b && strcmp(a, b) == 0;
		};
		if (same(i->fabric_attr->name, like->fabric_attr->name) &&
		    same(i->domain_attr->name, like->domain_attr->name) &&
		    i->domain_attr->mr_mode == like->domain_attr->mr_mode) {
			pick = i;
			break;
		}
	}
	fi_info* one = fi_dupinfo(pick);
	fi_freeinfo(list);
	if (!one)
		ADD_FAILURE() << "fi_dupinfo returned NULL";
	return one;
}

bool World::OpenMsgEndpoints()
{
	for (auto& n : nodes)
		n->default_peer = nodes.size() < 2 ? -1 : n->index == 0 ? 1 : 0;
	if (!opts.enable) {
		for (auto& n : nodes) {
			std::string s = "node " + std::to_string(n->index);
			n->eq = NewEq(s + "'s EQ");
			if (!n->eq)
				return false;
			n->ep = OpenEp(n->index, n->eq, nullptr,
				       s + "'s endpoint", false);
			if (!n->ep)
				return false;
		}
		return true;
	}
	for (size_t i = 0; i < nodes.size(); i++) {
		for (size_t j = i + 1; j < nodes.size(); j++) {
			fid_ep *ei = nullptr, *ej = nullptr;
			Eq *qi = nullptr, *qj = nullptr;
			bool ok = ConnectNodes(i, j, &ei, &ej, &qi, &qj, false);
			// Whatever was opened is closed by Close.
			auto place = [&](size_t a, size_t b, fid_ep* ep, Eq* eq) {
				Node& n = *nodes[a];
				if (!ep)
					return;
				if (n.default_peer == (int)b) {
					n.ep = ep;
					n.eq = eq;
				} else {
					n.conns[b] = ep;
				}
			};
			place(i, j, ei, qi);
			place(j, i, ej, qj);
			if (!ok)
				return false;
		}
	}
	return true;
}

int World::CloseEp(fid_ep* ep)
{
	Forget(ep);
	return fi_close(&ep->fid);
}

int World::ClosePep(fid_pep* pep)
{
	Forget(pep);
	return fi_close(&pep->fid);
}

void World::Forget(const void* fid)
{
	for (auto it = eps_.begin(); it != eps_.end(); ++it)
		if ((const void*)*it == fid) {
			eps_.erase(it);
			return;
		}
	for (auto it = peps_.begin(); it != peps_.end(); ++it)
		if ((const void*)*it == fid) {
			peps_.erase(it);
			break;
		}
	for (Eq& e : eqs_)
		if ((const void*)e.eq == fid)
			e.eq = nullptr;
	for (auto& n : nodes) {
		if ((const void*)n->pep == fid)
			n->pep = nullptr;
		if ((const void*)n->ep == fid)
			n->ep = nullptr;
		for (auto& kv : n->conns)
			if ((const void*)kv.second == fid)
				kv.second = nullptr;
	}
}

}  // namespace conf

// Under ThreadSanitizer (bazel test --config=tsan): a test that waits for
// an RMA's bytes polls the target buffer, as RDMA programs poll memory,
// while a provider's own progress thread (Debian's sockets provider) may be
// writing it. That is how the operation is observed, not a race to report.
extern "C" const char* __tsan_default_suppressions()
{
	return "race:conf::Buf::Check\n";
}
