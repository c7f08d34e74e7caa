// A small world of simulated nodes for the sim provider's own tests: each
// node is a domain with a CQ and counters, and either one RDM (or DGRAM)
// endpoint with an AV holding every node, or (FI_EP_MSG) one connected
// endpoint per other node. Configuration comes from FI_SIM_* variables set before the fabric
// is opened.
#ifndef FABSIM_TEST_SCENARIO_H
#define FABSIM_TEST_SCENARIO_H

#include <map>
#include <string>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_ext_fabsim.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

struct Completion {
	int node;
	bool error;
	void *context;
	uint64_t flags;
	size_t len;
	uint64_t data;
	uint64_t tag;
	int err;
	uint64_t time_ns;
};

// What fi_getinfo offers of the sim provider for `type` and `caps` (NULL
// if nothing); the caller frees it.
fi_info *sim_info(fi_ep_type type, uint64_t caps);

class Scenario {
public:
	// env: FI_SIM_* settings for this run (restored afterwards).
	// cq_size: entries each node's CQ is opened with.
	Scenario(int nodes, const std::map<std::string, std::string> &env,
		 uint64_t mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				    FI_MR_ALLOCATED | FI_MR_PROV_KEY,
		 fi_ep_type type = FI_EP_RDM, size_t cq_size = 65536);
	~Scenario();

	struct Node {
		fid_domain *domain = nullptr;
		fid_av *av = nullptr;
		fid_cq *cq = nullptr;
		fid_cntr *tx_cntr = nullptr, *rx_cntr = nullptr;
		fid_ep *ep = nullptr;           // RDM
		std::vector<fi_addr_t> peers;  // RDM: fi_addr of every node
		fid_eq *eq = nullptr;           // MSG
		fid_pep *pep = nullptr;         // MSG: listens for lower nodes
		std::vector<fid_ep *> conns;    // MSG: endpoint to each node
	};

	int size() const { return (int)nodes_.size(); }
	Node &node(int i) { return nodes_[i]; }
	// The endpoint node `from` reaches node `to` with, and the address to
	// name it by there (FI_ADDR_UNSPEC on a connection).
	fid_ep *ep(int from, int to)
	{
		return type_ == FI_EP_MSG ? nodes_[from].conns[to]
					  : nodes_[from].ep;
	}
	fi_addr_t addr(int from, int to)
	{
		return type_ == FI_EP_MSG ? FI_ADDR_UNSPEC
					  : nodes_[from].peers[to];
	}
	fabsim_ops_v1 *ext() { return ext_; }
	fid_fabric *fabric() { return fabric_; }
	uint64_t now() { return ext_->now_ns(&nodes_[0].domain->fid); }
	fid_mr *reg(int node, void *buf, size_t len, uint64_t access);
	void *desc(fid_mr *mr) { return fi_mr_desc(mr); }

	// Polls every CQ until `want` completions have been collected or
	// nothing can make progress any more (false).
	bool collect(size_t want, std::vector<Completion> *out);
	std::string failure;  // why setup failed, if it did

private:
	void open_node(int i);
	void open_endpoint(int i, fi_info *info, fid_ep **ep);
	void connect(int from, int to);
	bool wait_event(int node, uint32_t want, fi_eq_cm_entry *entry);

	fi_ep_type type_;
	size_t cq_size_;
	fid_fabric *fabric_ = nullptr;
	fi_info *info_ = nullptr;
	std::vector<fi_info *> node_info_; // MSG: each node's, with its address
	std::vector<Node> nodes_;
	std::vector<fid_mr *> mrs_;
	uint64_t next_key_ = 1;
	fabsim_ops_v1 *ext_ = nullptr;
	std::map<std::string, std::string> saved_env_;
};

#endif
