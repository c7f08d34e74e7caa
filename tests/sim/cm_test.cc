// Connected endpoints (FI_EP_MSG) on the sim provider, through the
// libfabric API: connection setup and teardown with the events and errors
// fi_cm(3) and fi_eq(3) document, on a simulated wire that can lose the
// connection manager's packets like any others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_fabsim.h>

namespace {

const int kWaitMs = 10000; // virtual: far beyond any CM retry budget

// FI_SIM_* settings for one test, restored afterwards.
class Env {
public:
	explicit Env(std::vector<std::pair<std::string, std::string>> vars)
	{
		for (auto &kv : vars) {
			const char *old = getenv(kv.first.c_str());
			saved_.push_back({kv.first, old ? old : "\x01"});
			setenv(kv.first.c_str(), kv.second.c_str(), 1);
		}
	}
	~Env()
	{
		for (auto &kv : saved_) {
			if (kv.second == "\x01")
				unsetenv(kv.first.c_str());
			else
				setenv(kv.first.c_str(), kv.second.c_str(), 1);
		}
	}

private:
	std::vector<std::pair<std::string, std::string>> saved_;
};

// An event as read from an EQ: a CM entry and its private data, or an
// error entry.
struct Event {
	ssize_t ret = 0;      // what fi_eq_sread returned
	uint32_t type = 0;
	fid_t fid = nullptr;
	fi_info *info = nullptr;
	std::string data;     // connection private data
	int err = 0;          // FI_E* of an error entry
	std::string err_data; // private data of a rejection
};

class Cm : public ::testing::Test {
protected:
	struct Node {
		fi_info *info = nullptr; // bound to the node's address
		fid_domain *domain = nullptr;
		fid_eq *eq = nullptr;
		fid_cq *cq = nullptr;
		fid_pep *pep = nullptr;
		std::vector<fid_ep *> eps;
		std::vector<char> buf = std::vector<char>(1 << 20);
		fid_mr *mr = nullptr;
	};

	// Closes what a test opened, in order; every close must succeed.
	static void close_fid(fid_t fid)
	{
		if (fid) {
			EXPECT_EQ(fi_close(fid), 0);
		}
	}

	void TearDown() override
	{
		for (auto &n : nodes_) {
			for (auto *ep : n.eps)
				close_fid(&ep->fid);
			close_fid(n.pep ? &n.pep->fid : nullptr);
			close_fid(n.mr ? &n.mr->fid : nullptr);
			close_fid(n.cq ? &n.cq->fid : nullptr);
			close_fid(n.domain ? &n.domain->fid : nullptr);
			close_fid(n.eq ? &n.eq->fid : nullptr);
			fi_freeinfo(n.info);
		}
		close_fid(fabric_ ? &fabric_->fid : nullptr);
	}

	// Node i is host 10.0.0.i+1, its listener on port 7000.
	Node &node(int i)
	{
		if ((int)nodes_.size() <= i)
			nodes_.resize(i + 1);
		Node &n = nodes_[i];
		if (n.domain)
			return n;
		fi_info *hints = fi_allocinfo();
		hints->ep_attr->type = FI_EP_MSG;
		hints->caps = FI_MSG;
		hints->addr_format = FI_SOCKADDR_IN;
		hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
					      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
		hints->fabric_attr->prov_name = strdup("sim");
		std::string addr = "10.0.0." + std::to_string(i + 1);
		EXPECT_EQ(fi_getinfo(FI_VERSION(1, 17), addr.c_str(), "7000",
				     FI_SOURCE, hints, &n.info), 0);
		fi_freeinfo(hints);
		if (!fabric_) {
			EXPECT_EQ(fi_fabric(n.info->fabric_attr, &fabric_,
					    nullptr), 0);
		}
		EXPECT_EQ(fi_domain(fabric_, n.info, &n.domain, nullptr), 0);
		fi_eq_attr eq = {};
		eq.wait_obj = FI_WAIT_UNSPEC;
		EXPECT_EQ(fi_eq_open(fabric_, &eq, &n.eq, nullptr), 0);
		fi_cq_attr cq = {};
		cq.format = FI_CQ_FORMAT_MSG;
		cq.wait_obj = FI_WAIT_UNSPEC;
		cq.size = 1024;
		EXPECT_EQ(fi_cq_open(n.domain, &cq, &n.cq, nullptr), 0);
		EXPECT_EQ(fi_mr_reg(n.domain, n.buf.data(), n.buf.size(),
				    FI_SEND | FI_RECV, 0, 0, 0, &n.mr, nullptr),
			  0);
		return n;
	}

	void listen(int i)
	{
		Node &n = node(i);
		ASSERT_EQ(fi_passive_ep(fabric_, n.info, &n.pep, nullptr), 0);
		ASSERT_EQ(fi_pep_bind(n.pep, &n.eq->fid, 0), 0);
		ASSERT_EQ(fi_listen(n.pep), 0);
	}

	std::vector<char> listener_name(int i)
	{
		std::vector<char> name(64);
		size_t len = name.size();
		EXPECT_EQ(fi_getname(&node(i).pep->fid, name.data(), &len), 0);
		name.resize(len);
		return name;
	}

	// An enabled endpoint on node i (from a connection request's info
	// when accepting).
	fid_ep *endpoint(int i, fi_info *info = nullptr)
	{
		Node &n = node(i);
		fid_ep *ep = nullptr;
		EXPECT_EQ(fi_endpoint(n.domain, info ? info : n.info, &ep,
				      nullptr), 0);
		EXPECT_EQ(fi_ep_bind(ep, &n.eq->fid, 0), 0);
		EXPECT_EQ(fi_ep_bind(ep, &n.cq->fid, FI_TRANSMIT | FI_RECV), 0);
		EXPECT_EQ(fi_enable(ep), 0);
		n.eps.push_back(ep);
		return ep;
	}

	void close_endpoint(int i, fid_ep *ep)
	{
		auto &eps = node(i).eps;
		eps.erase(std::find(eps.begin(), eps.end(), ep));
		EXPECT_EQ(fi_close(&ep->fid), 0);
	}

	Event next_event(int i, int timeout_ms = kWaitMs)
	{
		Event ev;
		uint8_t raw[sizeof(fi_eq_cm_entry) + 256] = {};
		auto *entry = (fi_eq_cm_entry *)raw;
		ev.ret = fi_eq_sread(node(i).eq, &ev.type, raw, sizeof(raw),
				     timeout_ms, 0);
		if (ev.ret == -FI_EAVAIL) {
			fi_eq_err_entry err = {};
			EXPECT_EQ(fi_eq_readerr(node(i).eq, &err, 0),
				  (ssize_t)sizeof(err));
			ev.fid = err.fid;
			ev.err = err.err;
			if (err.err_data && err.err_data_size)
				ev.err_data.assign((const char *)err.err_data,
						   strnlen((const char *)err.err_data,
							   err.err_data_size));
			return ev;
		}
		if (ev.ret < 0)
			return ev;
		ev.fid = entry->fid;
		ev.info = entry->info;
		size_t len = (size_t)ev.ret - sizeof(*entry);
		ev.data.assign((const char *)entry->data,
			       strnlen((const char *)entry->data, len));
		return ev;
	}

	// Node 0 asks node 1, which refuses with `len` bytes of `why`: what
	// node 0 hears (client: its endpoint).
	Event RefusedWith(const void *why, size_t len, fid_ep **client)
	{
		listen(1);
		Event req = request(0, 1, client);
		EXPECT_NE(req.info, nullptr);
		if (!req.info)
			return req;
		EXPECT_EQ(fi_reject(node(1).pep, req.info->handle, why, len), 0);
		fi_freeinfo(req.info);
		return next_event(0);
	}

	// Node 0 asks node 1, which makes the endpoint for the request and
	// has not answered yet.
	void RequestedEndpoint(fid_ep **client, fid_ep **server)
	{
		listen(1);
		Event req = request(0, 1, client);
		ASSERT_NE(req.info, nullptr);
		*server = endpoint(1, req.info);
		fi_freeinfo(req.info);
	}

	// A new endpoint on node c asks the listener on node s for a
	// connection; returns the listener's FI_CONNREQ (its info is the
	// caller's to free; null if none came).
	Event request(int c, int s, fid_ep **client)
	{
		auto name = listener_name(s);
		*client = endpoint(c);
		EXPECT_EQ(fi_connect(*client, name.data(), nullptr, 0), 0);
		Event req = next_event(s);
		EXPECT_EQ(req.type, (uint32_t)FI_CONNREQ);
		return req;
	}

	// Client on node c connects to the listener on node s; returns both
	// connected endpoints.
	std::pair<fid_ep *, fid_ep *> connect(int c, int s)
	{
		fid_ep *cep = nullptr;
		Event req = request(c, s, &cep);
		fid_ep *sep = endpoint(s, req.info);
		EXPECT_EQ(fi_accept(sep, nullptr, 0), 0);
		fi_freeinfo(req.info);
		EXPECT_EQ(next_event(s).type, (uint32_t)FI_CONNECTED);
		EXPECT_EQ(next_event(c).type, (uint32_t)FI_CONNECTED);
		return {cep, sep};
	}

	void *desc(int i) { return fi_mr_desc(node(i).mr); }

	// Reads one completion (or error) from node i's CQ.
	ssize_t completion(int i, fi_cq_msg_entry *e, fi_cq_err_entry *err)
	{
		ssize_t r = fi_cq_sread(node(i).cq, e, 1, nullptr, kWaitMs);
		if (r == -FI_EAVAIL) {
			EXPECT_EQ(fi_cq_readerr(node(i).cq, err, 0), 1);
		}
		return r;
	}

	uint64_t now()
	{
		fabsim_ops_v1 *ext = nullptr;
		EXPECT_EQ(fi_open_ops(&node(0).domain->fid, FABSIM_OPS_V1, 0,
				      (void **)&ext, nullptr), 0);
		return ext ? ext->now_ns(&node(0).domain->fid) : 0;
	}

	fid_fabric *fabric_ = nullptr;
	std::vector<Node> nodes_;
};

TEST_F(Cm, AcceptCarriesPrivateDataBothWays)
{
	listen(1);
	auto name = listener_name(1);
	fid_ep *client = endpoint(0);
	const char hello[] = "hello from 0";
	ASSERT_EQ(fi_connect(client, name.data(), hello, sizeof(hello)), 0);

	Event req = next_event(1);
	ASSERT_EQ(req.ret, (ssize_t)(sizeof(fi_eq_cm_entry) + sizeof(hello)));
	ASSERT_EQ(req.type, (uint32_t)FI_CONNREQ);
	EXPECT_EQ(req.fid, &node(1).pep->fid); // fi_eq(3): the passive ep
	EXPECT_EQ(req.data, hello);
	ASSERT_NE(req.info, nullptr);
	ASSERT_NE(req.info->handle, nullptr);
	// The request names where it came from.
	ASSERT_NE(req.info->dest_addr, nullptr);
	EXPECT_EQ(((sockaddr_in *)req.info->dest_addr)->sin_addr.s_addr,
		  htonl(0x0a000001));
	fid_ep *server = endpoint(1, req.info);
	const char welcome[] = "welcome";
	ASSERT_EQ(fi_accept(server, welcome, sizeof(welcome)), 0);
	fi_freeinfo(req.info);

	Event up = next_event(1);
	EXPECT_EQ(up.type, (uint32_t)FI_CONNECTED);
	EXPECT_EQ(up.fid, &server->fid);
	Event cup = next_event(0);
	EXPECT_EQ(cup.type, (uint32_t)FI_CONNECTED);
	EXPECT_EQ(cup.fid, &client->fid);
	EXPECT_EQ(cup.data, welcome);

	// Each side names the other.
	sockaddr_in peer = {}, self = {};
	size_t len = sizeof(peer);
	ASSERT_EQ(fi_getpeer(client, &peer, &len), 0);
	EXPECT_EQ(peer.sin_addr.s_addr, htonl(0x0a000002));
	EXPECT_EQ(ntohs(peer.sin_port), 7000);
	len = sizeof(self);
	ASSERT_EQ(fi_getname(&client->fid, &self, &len), 0);
	len = sizeof(peer);
	ASSERT_EQ(fi_getpeer(server, &peer, &len), 0);
	EXPECT_EQ(peer.sin_addr.s_addr, self.sin_addr.s_addr);
	EXPECT_EQ(peer.sin_port, self.sin_port);

	// And data flows both ways over the connection.
	strcpy(node(1).buf.data() + 100, "ping");
	ASSERT_EQ(fi_recv(client, node(0).buf.data(), 64, desc(0), 0, nullptr),
		  0);
	ASSERT_EQ(fi_send(server, node(1).buf.data() + 100, 5, desc(1), 0,
			  nullptr), 0);
	fi_cq_msg_entry e;
	fi_cq_err_entry err;
	ASSERT_EQ(completion(1, &e, &err), 1);
	EXPECT_EQ(e.flags, (uint64_t)(FI_SEND | FI_MSG));
	ASSERT_EQ(completion(0, &e, &err), 1);
	EXPECT_EQ(e.flags, (uint64_t)(FI_RECV | FI_MSG));
	EXPECT_EQ(e.len, 5u);
	EXPECT_STREQ(node(0).buf.data(), "ping");
}

// A server that takes its time to accept — registering 16 MiB first costs
// ~2 ms of virtual time, longer than the requester's whole resend budget —
// still gets its connection: as rdma_cm does, the request is acknowledged
// (MRA) when it is handed over, and the requester waits the MRA's 68 s.
TEST_F(Cm, ASlowAcceptIsWaitedFor)
{
	listen(1);
	fid_ep *client = nullptr;
	Event req = request(0, 1, &client);
	ASSERT_NE(req.info, nullptr);
	std::vector<char> big(16 << 20);
	fid_mr *mr = nullptr;
	uint64_t before = now();
	ASSERT_EQ(fi_mr_reg(node(1).domain, big.data(), big.size(), FI_RECV, 0,
			    0, 0, &mr, nullptr), 0);
	EXPECT_GT(now() - before, 1600000u) << "longer than 16 resends";
	fid_ep *server = endpoint(1, req.info);
	ASSERT_EQ(fi_accept(server, nullptr, 0), 0);
	fi_freeinfo(req.info);
	EXPECT_EQ(next_event(1).type, (uint32_t)FI_CONNECTED);
	Event up = next_event(0);
	EXPECT_EQ(up.ret, (ssize_t)sizeof(fi_eq_cm_entry));
	EXPECT_EQ(up.type, (uint32_t)FI_CONNECTED);
	EXPECT_EQ(fi_close(&mr->fid), 0);
}

// fi_domain(3): max_err_data bounds the error data an error entry brings;
// a rejection's private data of that size arrives whole.
TEST_F(Cm, ARejectionBringsPrivateDataUpToMaxErrData)
{
	size_t max = node(0).info->domain_attr->max_err_data;
	ASSERT_GE(max, 16u);
	std::string why(max - 1, 'x'); // and its terminating NUL
	fid_ep *client = nullptr;
	Event refused = RefusedWith(why.c_str(), max, &client);
	EXPECT_EQ(refused.err, FI_ECONNREFUSED);
	EXPECT_EQ(refused.err_data, why);
}

TEST_F(Cm, RejectIsConnectionRefusedWithTheRejectersData)
{
	const char why[] = "full";
	fid_ep *client = nullptr;
	Event refused = RefusedWith(why, sizeof(why), &client);
	EXPECT_EQ(refused.ret, -FI_EAVAIL);
	EXPECT_EQ(refused.err, FI_ECONNREFUSED);
	EXPECT_EQ(refused.fid, &client->fid);
	EXPECT_EQ(refused.err_data, why);
	// Nothing more arrives on either side.
	EXPECT_EQ(next_event(0, 10).ret, -FI_EAGAIN);
	EXPECT_EQ(next_event(1, 10).ret, -FI_EAGAIN);
}

// A request the server lets go without fi_accept or fi_reject — the
// endpoint made for it closed, or the listener closed before anyone took
// it — is refused (REJ), as the kernel's CM does when such an rdma_cm id
// goes: the client hears at once, not after the MRA's 68 s.
TEST_F(Cm, ARequestLetGoUnansweredIsRefused)
{
	fid_ep *client = nullptr, *server = nullptr;
	ASSERT_NO_FATAL_FAILURE(RequestedEndpoint(&client, &server));
	uint64_t before = now();
	close_endpoint(1, server);
	Event refused = next_event(0);
	EXPECT_EQ(refused.ret, -FI_EAVAIL);
	EXPECT_EQ(refused.err, FI_ECONNREFUSED);
	EXPECT_LT(now() - before, 1000000u) << "not at once";

	fid_ep *again = nullptr;
	Event req = request(0, 1, &again);
	fi_freeinfo(req.info);
	EXPECT_EQ(fi_close(&node(1).pep->fid), 0);
	node(1).pep = nullptr;
	refused = next_event(0);
	EXPECT_EQ(refused.ret, -FI_EAVAIL);
	EXPECT_EQ(refused.err, FI_ECONNREFUSED);
}

// An endpoint closed after fi_accept but before the client's RTU reached
// it is refused, as the kernel's CM does: the client, connected by the REP,
// hears at once that the connection is gone.
TEST_F(Cm, AnEndpointClosedBeforeTheRtuIsRefused)
{
	fid_ep *client = nullptr, *server = nullptr;
	ASSERT_NO_FATAL_FAILURE(RequestedEndpoint(&client, &server));
	ASSERT_EQ(fi_accept(server, nullptr, 0), 0);
	close_endpoint(1, server);
	EXPECT_EQ(next_event(0).type, (uint32_t)FI_CONNECTED);
	uint64_t before = now();
	Event down = next_event(0);
	EXPECT_EQ(down.type, (uint32_t)FI_SHUTDOWN);
	EXPECT_EQ(down.fid, &client->fid);
	EXPECT_LT(now() - before, 1000000u) << "not at once";
	EXPECT_EQ(next_event(1, 10).ret, -FI_EAGAIN);
}

// The REJ is lost after the request was acknowledged (MRA): the client
// resends its REQ only after the MRA's 68 s, and the server still answers
// it with the REJ rather than taking it for a new request.
TEST_F(Cm, ARefusalLostAfterTheAcknowledgementIsResent)
{
	listen(1);
	fabsim_ops_v1 *ext = nullptr;
	ASSERT_EQ(fi_open_ops(&node(0).domain->fid, FABSIM_OPS_V1, 0,
			      (void **)&ext, nullptr), 0);
	uint32_t host1 = ext->host(&node(1).domain->fid);
	fid_ep *client = nullptr;
	Event req = request(0, 1, &client);
	ASSERT_NE(req.info, nullptr);
	// The MRA reaches the client; then the server's link goes down.
	EXPECT_EQ(next_event(0, 1).ret, -FI_EAGAIN);
	ASSERT_EQ(ext->set_link(&node(0).domain->fid, host1, 0), 0);
	ASSERT_EQ(fi_reject(node(1).pep, req.info->handle, nullptr, 0), 0);
	fi_freeinfo(req.info);
	EXPECT_EQ(next_event(1, 1).ret, -FI_EAGAIN);
	ASSERT_EQ(ext->set_link(&node(0).domain->fid, host1, 1), 0);

	Event refused = next_event(0, 100000);
	EXPECT_EQ(refused.ret, -FI_EAVAIL);
	EXPECT_EQ(refused.err, FI_ECONNREFUSED);
	EXPECT_GT(now(), 68000000000u) << "the REJ was not lost";
	EXPECT_EQ(next_event(1, 10).ret, -FI_EAGAIN)
		<< "the resent request was taken for a new one";
}

TEST_F(Cm, ConnectToAHostWithNoListenerIsRefused)
{
	node(1); // host up, nothing listening on 7000
	fid_ep *client = endpoint(0);
	sockaddr_in nobody = {};
	nobody.sin_family = AF_INET;
	nobody.sin_addr.s_addr = htonl(0x0a000002);
	nobody.sin_port = htons(7000);
	ASSERT_EQ(fi_connect(client, &nobody, nullptr, 0), 0);
	Event ev = next_event(0);
	EXPECT_EQ(ev.ret, -FI_EAVAIL);
	EXPECT_EQ(ev.err, FI_ECONNREFUSED);
}

TEST_F(Cm, ConnectOffTheFabricTimesOutAfterTheRetryBudget)
{
	fid_ep *client = endpoint(0);
	sockaddr_in nowhere = {};
	nowhere.sin_family = AF_INET;
	nowhere.sin_addr.s_addr = htonl(0x0a0000fa); // no such host
	nowhere.sin_port = htons(7000);
	int ret = fi_connect(client, &nowhere, nullptr, 0);
	if (ret == 0) {
		Event ev = next_event(0);
		EXPECT_EQ(ev.ret, -FI_EAVAIL);
		EXPECT_TRUE(ev.err == FI_ETIMEDOUT ||
			    ev.err == FI_ECONNREFUSED ||
			    ev.err == FI_EHOSTUNREACH) << fi_strerror(ev.err);
	} else {
		// Refused at once, naming the problem.
		EXPECT_TRUE(ret == -FI_EHOSTUNREACH || ret == -FI_EINVAL ||
			    ret == -FI_EADDRNOTAVAIL) << fi_strerror(-ret);
	}
}

// The CM's packets are lost like any others: with the link to the server
// down for good, the request is retried and the client gives up with
// FI_ETIMEDOUT after the retry budget, in virtual time.
TEST_F(Cm, LostRequestsTimeOutAfterRetries)
{
	listen(1);
	auto name = listener_name(1);
	fabsim_ops_v1 *ext = nullptr;
	ASSERT_EQ(fi_open_ops(&node(0).domain->fid, FABSIM_OPS_V1, 0,
			      (void **)&ext, nullptr), 0);
	uint32_t host1 = ext->host(&node(1).domain->fid);
	ASSERT_EQ(ext->set_link(&node(0).domain->fid, host1, 0), 0);
	fid_ep *client = endpoint(0);
	uint64_t start = now();
	ASSERT_EQ(fi_connect(client, name.data(), nullptr, 0), 0);
	Event ev = next_event(0);
	EXPECT_EQ(ev.ret, -FI_EAVAIL);
	EXPECT_EQ(ev.err, FI_ETIMEDOUT);
	uint64_t took = now() - start;
	// Many retransmissions, not one timeout and not forever.
	EXPECT_GT(took, 500000u) << took;
	EXPECT_LT(took, 1000000000u) << took;
	fabsim_stats st = {};
	ASSERT_EQ(ext->stats(&node(0).domain->fid, &st), 0);
	EXPECT_GT(st.packets_dropped, 5u);
	// The server never heard of it.
	EXPECT_EQ(next_event(1, 10).ret, -FI_EAGAIN);
}

// With heavy loss the handshake still completes: every CM message is
// retried until it gets through.
TEST_F(Cm, HandshakeSurvivesLoss)
{
	Env env({{"FI_SIM_LOSS_RATE", "0.3"}, {"FI_SIM_SEED", "3"}});
	listen(1);
	auto ends = connect(0, 1);
	ASSERT_NE(ends.first, nullptr);
	fabsim_ops_v1 *ext = nullptr;
	ASSERT_EQ(fi_open_ops(&node(0).domain->fid, FABSIM_OPS_V1, 0,
			      (void **)&ext, nullptr), 0);
	fabsim_stats st = {};
	ASSERT_EQ(ext->stats(&node(0).domain->fid, &st), 0);
	RecordProperty("cm_packets_dropped", std::to_string(st.packets_dropped));
}

// fi_shutdown with sends still in flight: the peer sees FI_SHUTDOWN, the
// operations that did not complete are flushed with an error on both
// sides (as verbs flushes a QP moved to the error state).
class CmShutdown : public Cm, public ::testing::WithParamInterface<bool> {};

TEST_P(CmShutdown, FromEitherSideWithWorkInFlight)
{
	bool client_shuts = GetParam();
	listen(1);
	auto ends = connect(0, 1);
	fid_ep *shutter = client_shuts ? ends.first : ends.second;
	fid_ep *other = client_shuts ? ends.second : ends.first;
	int s = client_shuts ? 0 : 1, o = client_shuts ? 1 : 0;

	// Receives on both sides that nothing will fill, and large sends
	// that cannot finish before the shutdown.
	fi_context2 rctx[2], sctx[4];
	ASSERT_EQ(fi_recv(other, node(o).buf.data(), 1024, desc(o), 0,
			  &rctx[0]), 0);
	ASSERT_EQ(fi_recv(shutter, node(s).buf.data(), 1024, desc(s), 0,
			  &rctx[1]), 0);
	for (int k = 0; k < 4; k++)
		ASSERT_EQ(fi_send(shutter, node(s).buf.data() + 4096,
				  256 * 1024, desc(s), 0, &sctx[k]), 0);
	ASSERT_EQ(fi_shutdown(shutter, 0), 0);

	Event down = next_event(o);
	EXPECT_EQ(down.type, (uint32_t)FI_SHUTDOWN);
	EXPECT_EQ(down.fid, &other->fid);

	// The shutting side: every send and its receive end in error
	// (flushed), none succeeds after the shutdown.
	int flushed = 0;
	fi_cq_msg_entry e;
	fi_cq_err_entry err;
	for (int k = 0; k < 5; k++) {
		err = {};
		ssize_t r = completion(s, &e, &err);
		if (r == -FI_EAVAIL) {
			EXPECT_EQ(err.err, FI_ECANCELED) << fi_strerror(err.err);
			flushed++;
		} else {
			ASSERT_EQ(r, 1);
			EXPECT_TRUE(e.flags & FI_SEND); // finished before
		}
	}
	EXPECT_GE(flushed, 2); // the receive and at least the last send
	// Posting after the shutdown is refused or flushed, never delivered.
	ssize_t r = fi_send(shutter, node(s).buf.data(), 8, desc(s), 0,
			    nullptr);
	if (r == 0) {
		err = {};
		EXPECT_EQ(completion(s, &e, &err), -FI_EAVAIL);
		EXPECT_EQ(err.err, FI_ECANCELED);
	}
	// The other side's receive is flushed too once it is disconnected.
	err = {};
	EXPECT_EQ(completion(o, &e, &err), -FI_EAVAIL);
	EXPECT_EQ(err.op_context, &rctx[0]);
	EXPECT_EQ(err.err, FI_ECANCELED);
	// fi_shutdown a second time: not connected any more.
	EXPECT_EQ(fi_shutdown(shutter, 0), -FI_ENOTCONN);
}

INSTANTIATE_TEST_SUITE_P(Sides, CmShutdown, ::testing::Bool(),
			 [](const ::testing::TestParamInfo<bool> &p) {
				 return p.param ? "client" : "server";
			 });

// One listener, many clients (on eight nodes, two connections each): all
// accepted, each connection carries its own traffic.
TEST_F(Cm, ManyConnectionsToOneListener)
{
	const int kClients = 8, kPerClient = 2;
	listen(0);
	auto name = listener_name(0);
	std::vector<fid_ep *> clients;
	for (int c = 1; c <= kClients; c++)
		for (int k = 0; k < kPerClient; k++) {
			fid_ep *ep = endpoint(c);
			std::string hello = std::to_string(clients.size());
			ASSERT_EQ(fi_connect(ep, name.data(), hello.c_str(),
					     hello.size() + 1), 0);
			clients.push_back(ep);
		}
	std::vector<fid_ep *> servers(clients.size(), nullptr);
	size_t connected = 0, requests = 0;
	while (connected < clients.size()) {
		Event ev = next_event(0);
		ASSERT_GE(ev.ret, 0) << fi_strerror((int)-ev.ret) << " "
				     << fi_strerror(ev.err);
		if (ev.type == FI_CONNREQ) {
			size_t idx = std::stoul(ev.data);
			ASSERT_LT(idx, servers.size());
			ASSERT_EQ(servers[idx], nullptr) << "duplicate request";
			servers[idx] = endpoint(0, ev.info);
			ASSERT_EQ(fi_accept(servers[idx], nullptr, 0), 0);
			fi_freeinfo(ev.info);
			requests++;
		} else {
			ASSERT_EQ(ev.type, (uint32_t)FI_CONNECTED);
			connected++;
		}
	}
	EXPECT_EQ(requests, clients.size());
	for (int c = 1; c <= kClients; c++)
		for (int k = 0; k < kPerClient; k++)
			EXPECT_EQ(next_event(c).type, (uint32_t)FI_CONNECTED);
	// Every client sends its index over its connection; the server's
	// endpoint for that connection receives exactly that.
	auto &srv = node(0);
	for (size_t i = 0; i < clients.size(); i++)
		ASSERT_EQ(fi_recv(servers[i], srv.buf.data() + 64 * i, 64,
				  desc(0), 0, (void *)(uintptr_t)(i + 1)), 0);
	for (size_t i = 0; i < clients.size(); i++) {
		int c = 1 + (int)i / kPerClient;
		char *msg = node(c).buf.data() + 64 * i;
		snprintf(msg, 64, "from %zu", i);
		ASSERT_EQ(fi_send(clients[i], msg, 64, desc(c), 0, nullptr), 0);
	}
	size_t got = 0;
	while (got < clients.size()) {
		fi_cq_msg_entry e;
		fi_cq_err_entry err;
		ASSERT_EQ(completion(0, &e, &err), 1);
		size_t i = (uintptr_t)e.op_context - 1;
		ASSERT_LT(i, clients.size());
		EXPECT_EQ(std::string(srv.buf.data() + 64 * i),
			  "from " + std::to_string(i));
		got++;
	}
	for (int c = 1; c <= kClients; c++)
		for (int k = 0; k < kPerClient; k++) {
			fi_cq_msg_entry e;
			fi_cq_err_entry err;
			EXPECT_EQ(completion(c, &e, &err), 1);
		}
}

// Closing a connected endpoint disconnects it: the peer gets FI_SHUTDOWN.
TEST_F(Cm, ClosingAConnectedEndpointShutsThePeerDown)
{
	listen(1);
	auto ends = connect(0, 1);
	close_endpoint(0, ends.first);
	Event down = next_event(1);
	EXPECT_EQ(down.type, (uint32_t)FI_SHUTDOWN);
	EXPECT_EQ(down.fid, &ends.second->fid);
}

// fi_connect with no address connects to the one the endpoint's info holds
// (fi_getinfo's dest_addr), as the verbs and tcp providers take it.
TEST_F(Cm, ConnectWithNoAddressUsesTheInfosDestination)
{
	listen(1);
	auto name = listener_name(1);
	fi_info *info = fi_dupinfo(node(0).info);
	ASSERT_NE(info, nullptr);
	free(info->dest_addr);
	info->dest_addr = malloc(name.size());
	memcpy(info->dest_addr, name.data(), name.size());
	info->dest_addrlen = name.size();
	fid_ep *client = endpoint(0, info);
	fi_freeinfo(info);
	ASSERT_EQ(fi_connect(client, nullptr, nullptr, 0), 0);
	Event req = next_event(1);
	EXPECT_EQ(req.type, (uint32_t)FI_CONNREQ);
	fi_freeinfo(req.info);
	// Without an address anywhere, there is nothing to connect to.
	fid_ep *lost = endpoint(0);
	EXPECT_EQ(fi_connect(lost, nullptr, nullptr, 0), -FI_EINVAL);
}

// An endpoint shut down and closed before its FI_SHUTDOWN was read takes
// its events with it: a reader must not get the fid of a freed endpoint.
TEST_F(Cm, AClosedEndpointsEventsLeaveTheEq)
{
	listen(1);
	auto ends = connect(0, 1);
	ASSERT_EQ(fi_shutdown(ends.first, 0), 0);
	// Its own shutdown's event is queued by now (the peer's too).
	Event mine = next_event(0);
	ASSERT_EQ(mine.type, (uint32_t)FI_SHUTDOWN);
	ASSERT_EQ(fi_shutdown(ends.second, 0), 0);
	close_endpoint(1, ends.second);
	Event after = next_event(1, 50);
	EXPECT_EQ(after.ret, -FI_EAGAIN)
		<< "an event of the closed endpoint was read (fid " << after.fid
		<< ")";
	close_endpoint(0, ends.first);
}

// fi_domain(3): an EQ bound to a domain with FI_REG_MR makes registration
// asynchronous: fi_mr_reg returns at once and FI_MR_COMPLETE, naming the
// MR and its context, arrives when the registration cost has passed.
TEST_F(Cm, RegistrationThroughTheDomainEqIsAsynchronous)
{
	Node &n = node(0);
	ASSERT_EQ(fi_domain_bind(n.domain, &n.eq->fid, FI_REG_MR), 0);
	EXPECT_EQ(fi_domain_bind(n.domain, &n.eq->fid, 0), -FI_EINVAL);
	std::vector<char> big(64 << 20);
	uint64_t before = now();
	fid_mr *mr = nullptr;
	int ctx = 0;
	ASSERT_EQ(fi_mr_reg(n.domain, big.data(), big.size(), FI_SEND, 0, 0, 0,
			    &mr, &ctx), 0);
	EXPECT_EQ(now(), before); // the caller did not pay the cost
	uint32_t event = 0;
	fi_eq_entry done = {};
	ASSERT_EQ(fi_eq_sread(n.eq, &event, &done, sizeof(done), kWaitMs, 0),
		  (ssize_t)sizeof(done));
	EXPECT_EQ(event, (uint32_t)FI_MR_COMPLETE);
	EXPECT_EQ(done.fid, &mr->fid);
	EXPECT_EQ(done.context, &ctx);
	EXPECT_GT(now(), before); // registration takes virtual time
	// The EQ is in use while bound.
	EXPECT_EQ(fi_close(&n.eq->fid), -FI_EBUSY);
	EXPECT_EQ(fi_close(&mr->fid), 0);
}

// A registration closed before its FI_MR_COMPLETE never reports.
TEST_F(Cm, ClosedBeforeItCompletedNeverReports)
{
	Node &n = node(0);
	ASSERT_EQ(fi_domain_bind(n.domain, &n.eq->fid, FI_REG_MR), 0);
	std::vector<char> big(64 << 20);
	fid_mr *mr = nullptr;
	ASSERT_EQ(fi_mr_reg(n.domain, big.data(), big.size(), FI_SEND, 0, 0, 0,
			    &mr, nullptr), 0);
	ASSERT_EQ(fi_close(&mr->fid), 0);
	EXPECT_EQ(next_event(0, 100).ret, -FI_EAGAIN);
}

// An endpoint with no EQ of its own reports to its domain's.
TEST_F(Cm, DomainEqIsTheDefaultForEndpoints)
{
	listen(1);
	auto name = listener_name(1);
	Node &c = node(0);
	ASSERT_EQ(fi_domain_bind(c.domain, &c.eq->fid, 0), 0);
	fid_ep *ep = nullptr;
	ASSERT_EQ(fi_endpoint(c.domain, c.info, &ep, nullptr), 0);
	c.eps.push_back(ep);
	ASSERT_EQ(fi_ep_bind(ep, &c.cq->fid, FI_TRANSMIT | FI_RECV), 0);
	ASSERT_EQ(fi_connect(ep, name.data(), nullptr, 0), 0);
	Event req = next_event(1);
	ASSERT_EQ(req.type, (uint32_t)FI_CONNREQ);
	fid_ep *server = endpoint(1, req.info);
	ASSERT_EQ(fi_accept(server, nullptr, 0), 0);
	fi_freeinfo(req.info);
	Event up = next_event(0);
	EXPECT_EQ(up.type, (uint32_t)FI_CONNECTED);
	EXPECT_EQ(up.fid, &ep->fid);
}

} // namespace
