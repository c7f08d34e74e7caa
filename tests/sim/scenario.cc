#include "tests/sim/scenario.h"

#include <cstdlib>
#include <cstring>

#define TRY(call)                                                          \
	do {                                                               \
		int ret_ = (call);                                         \
		if (ret_) {                                                \
			failure = std::string(#call) + ": " +              \
				  fi_strerror(-ret_);                      \
			return;                                            \
		}                                                          \
	} while (0)

fi_info *sim_info(fi_ep_type type, uint64_t caps)
{
	fi_info *hints = fi_allocinfo(), *info = nullptr;
	hints->ep_attr->type = type;
	hints->caps = caps;
	hints->fabric_attr->prov_name = strdup("sim");
	if (fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info))
		info = nullptr;
	fi_freeinfo(hints);
	return info;
}

Scenario::Scenario(int n, const std::map<std::string, std::string> &env,
		   uint64_t mr_mode, fi_ep_type type, size_t cq_size)
	: type_(type), cq_size_(cq_size)
{
	for (auto &kv : env) {
		const char *old = getenv(kv.first.c_str());
		saved_env_[kv.first] = old ? old : std::string("\x01");
		setenv(kv.first.c_str(), kv.second.c_str(), 1);
	}
	fi_info *hints = fi_allocinfo();
	hints->caps = type == FI_EP_DGRAM ? FI_MSG
					  : FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	if (type == FI_EP_RDM)
		hints->caps |= FI_SOURCE | FI_DIRECTED_RECV;
	hints->ep_attr->type = type;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = (int)mr_mode;
	hints->fabric_attr->prov_name = strdup("sim");
	hints->addr_format = FI_SOCKADDR_IN;
	int ret = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints,
			     &info_);
	// On a connection, each node listens at its own address: 10.0.0.i+1.
	for (int i = 0; !ret && type == FI_EP_MSG && i < n; i++) {
		std::string node = "10.0.0." + std::to_string(i + 1);
		fi_info *mine = nullptr;
		ret = fi_getinfo(FI_VERSION(1, 17), node.c_str(), "7000",
				 FI_SOURCE, hints, &mine);
		node_info_.push_back(mine);
	}
	fi_freeinfo(hints);
	if (ret) {
		failure = std::string("fi_getinfo: ") + fi_strerror(-ret);
		return;
	}
	TRY(fi_fabric(info_->fabric_attr, &fabric_, nullptr));
	nodes_.resize(n);
	for (int i = 0; i < n && failure.empty(); i++)
		open_node(i);
	if (!failure.empty())
		return;
	if (type == FI_EP_MSG) {
		for (int i = 0; i < n && failure.empty(); i++)
			for (int j = i + 1; j < n && failure.empty(); j++)
				connect(i, j);
		if (!failure.empty())
			return;
	} else {
		std::vector<std::vector<char>> names(n);
		for (int i = 0; i < n; i++) {
			names[i].resize(64);
			size_t len = names[i].size();
			TRY(fi_getname(&nodes_[i].ep->fid, names[i].data(),
				       &len));
		}
		for (auto &nd : nodes_) {
			nd.peers.resize(n);
			for (int j = 0; j < n; j++)
				if (fi_av_insert(nd.av, names[j].data(), 1,
						 &nd.peers[j], 0, nullptr) != 1) {
					failure = "fi_av_insert failed";
					return;
				}
		}
	}
	TRY(fi_open_ops(&nodes_[0].domain->fid, FABSIM_OPS_V1, 0,
			(void **)&ext_, nullptr));
}

void Scenario::open_node(int i)
{
	Node &nd = nodes_[i];
	fi_info *info = type_ == FI_EP_MSG ? node_info_[i] : info_;

	TRY(fi_domain(fabric_, info, &nd.domain, nullptr));
	fi_cq_attr cq = {};
	cq.format = FI_CQ_FORMAT_TAGGED;
	cq.size = cq_size_;
	cq.wait_obj = FI_WAIT_UNSPEC;
	TRY(fi_cq_open(nd.domain, &cq, &nd.cq, nullptr));
	fi_cntr_attr ca = {};
	ca.events = FI_CNTR_EVENTS_COMP;
	TRY(fi_cntr_open(nd.domain, &ca, &nd.tx_cntr, nullptr));
	TRY(fi_cntr_open(nd.domain, &ca, &nd.rx_cntr, nullptr));
	if (type_ != FI_EP_MSG) {
		fi_av_attr av = {};
		av.type = FI_AV_TABLE;
		TRY(fi_av_open(nd.domain, &av, &nd.av, nullptr));
		open_endpoint(i, info, &nd.ep);
		return;
	}
	fi_eq_attr eq = {};
	eq.wait_obj = FI_WAIT_UNSPEC;
	TRY(fi_eq_open(fabric_, &eq, &nd.eq, nullptr));
	TRY(fi_passive_ep(fabric_, info, &nd.pep, nullptr));
	TRY(fi_pep_bind(nd.pep, &nd.eq->fid, 0));
	TRY(fi_listen(nd.pep));
	nd.conns.assign(nodes_.size(), nullptr);
}

void Scenario::open_endpoint(int i, fi_info *info, fid_ep **ep)
{
	Node &nd = nodes_[i];

	TRY(fi_endpoint(nd.domain, info, ep, nullptr));
	if (nd.av)
		TRY(fi_ep_bind(*ep, &nd.av->fid, 0));
	if (nd.eq)
		TRY(fi_ep_bind(*ep, &nd.eq->fid, 0));
	TRY(fi_ep_bind(*ep, &nd.cq->fid, FI_TRANSMIT | FI_RECV));
	TRY(fi_ep_bind(*ep, &nd.tx_cntr->fid, FI_SEND | FI_WRITE | FI_READ));
	TRY(fi_ep_bind(*ep, &nd.rx_cntr->fid, FI_RECV));
	TRY(fi_enable(*ep));
}

bool Scenario::wait_event(int node, uint32_t want, fi_eq_cm_entry *entry)
{
	uint32_t event = 0;
	ssize_t r = fi_eq_sread(nodes_[node].eq, &event, entry,
				sizeof(*entry), 10000, 0);
	if (r == -FI_EAVAIL) {
		fi_eq_err_entry err = {};
		fi_eq_readerr(nodes_[node].eq, &err, 0);
		failure = "node " + std::to_string(node) + ": event error " +
			  fi_strerror(err.err);
		return false;
	}
	if (r < 0 || event != want) {
		failure = "node " + std::to_string(node) + ": expected event " +
			  std::to_string(want) + ", got " +
			  (r < 0 ? fi_strerror((int)-r) : std::to_string(event));
		return false;
	}
	return true;
}

// `from` connects to `to`'s listener; `to` accepts.
void Scenario::connect(int from, int to)
{
	char name[64];
	size_t len = sizeof(name);
	fi_eq_cm_entry entry = {};

	TRY(fi_getname(&nodes_[to].pep->fid, name, &len));
	open_endpoint(from, node_info_[from], &nodes_[from].conns[to]);
	if (!failure.empty())
		return;
	TRY(fi_connect(nodes_[from].conns[to], name, nullptr, 0));
	if (!wait_event(to, FI_CONNREQ, &entry))
		return;
	open_endpoint(to, entry.info, &nodes_[to].conns[from]);
	if (failure.empty())
		TRY(fi_accept(nodes_[to].conns[from], nullptr, 0));
	fi_freeinfo(entry.info);
	if (failure.empty() && wait_event(to, FI_CONNECTED, &entry))
		wait_event(from, FI_CONNECTED, &entry);
}

Scenario::~Scenario()
{
	for (auto *mr : mrs_)
		fi_close(&mr->fid);
	for (auto &nd : nodes_) {
		for (auto *c : nd.conns)
			if (c)
				fi_close(&c->fid);
		if (nd.pep)
			fi_close(&nd.pep->fid);
		if (nd.ep)
			fi_close(&nd.ep->fid);
		if (nd.tx_cntr)
			fi_close(&nd.tx_cntr->fid);
		if (nd.rx_cntr)
			fi_close(&nd.rx_cntr->fid);
		if (nd.cq)
			fi_close(&nd.cq->fid);
		if (nd.av)
			fi_close(&nd.av->fid);
		if (nd.domain)
			fi_close(&nd.domain->fid);
		if (nd.eq)
			fi_close(&nd.eq->fid);
	}
	if (fabric_)
		fi_close(&fabric_->fid);
	fi_freeinfo(info_);
	for (auto *i : node_info_)
		fi_freeinfo(i);
	for (auto &kv : saved_env_) {
		if (kv.second == "\x01")
			unsetenv(kv.first.c_str());
		else
			setenv(kv.first.c_str(), kv.second.c_str(), 1);
	}
}

fid_mr *Scenario::reg(int node, void *buf, size_t len, uint64_t access)
{
	fid_mr *mr = nullptr;
	// A key of our own for each region, for the modes where the
	// application chooses keys (ignored under FI_MR_PROV_KEY).
	if (fi_mr_reg(nodes_[node].domain, buf, len, access, 0, next_key_++, 0,
		      &mr, nullptr))
		return nullptr;
	mrs_.push_back(mr);
	return mr;
}

bool Scenario::collect(size_t want, std::vector<Completion> *out)
{
	size_t idle_rounds = 0;
	while (out->size() < want) {
		bool any = false;
		for (int i = 0; i < size(); i++) {
			fi_cq_tagged_entry e[16];
			ssize_t r = fi_cq_read(nodes_[i].cq, e, 16);
			if (r > 0) {
				for (ssize_t k = 0; k < r; k++)
					out->push_back({i, false, e[k].op_context,
							e[k].flags, e[k].len,
							e[k].data, e[k].tag, 0,
							now()});
				any = true;
			} else if (r == -FI_EAVAIL) {
				fi_cq_err_entry err = {};
				fi_cq_readerr(nodes_[i].cq, &err, 0);
				out->push_back({i, true, err.op_context,
						err.flags, err.len, err.data,
						err.tag, err.err, now()});
				any = true;
			}
		}
		// Reads of empty queues move virtual time; give up only when
		// many rounds in a row find nothing at all.
		idle_rounds = any ? 0 : idle_rounds + 1;
		if (idle_rounds > 1000000)
			return false;
	}
	return true;
}
