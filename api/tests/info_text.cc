#include "api/tests/info_text.h"

#include <cstring>
#include <functional>
#include <map>
#include <sstream>

extern "C" {
#include <fabsim/names.h>
}

namespace {

bool parse_flags(const fabsim_name_table &t, std::string v, uint64_t *out)
{
	*out = 0;
	if (v.size() < 2 || v.front() != '[' || v.back() != ']')
		return false;
	v = v.substr(1, v.size() - 2);
	std::stringstream ss(v);
	std::string tok;
	while (std::getline(ss, tok, ',')) {
		size_t b = tok.find_first_not_of(' ');
		size_t e = tok.find_last_not_of(' ');
		if (b == std::string::npos)
			continue;
		tok = tok.substr(b, e - b + 1);
		uint64_t bit;
		if (tok == "FI_ORDER_NONE")
			continue;
		if (!fabsim_value_of(&t, tok.c_str(), &bit))
			*out |= bit;
		else if (tok.rfind("0x", 0) == 0)
			*out |= strtoull(tok.c_str(), nullptr, 16);
		else
			return false;
	}
	return true;
}

template <typename T>
bool parse_enum(const fabsim_name_table &t, const std::string &v, T *out)
{
	uint64_t value;
	if (fabsim_value_of(&t, v.c_str(), &value))
		return false;
	*out = (T)value;
	return true;
}

bool parse_version(const std::string &v, uint32_t *out)
{
	unsigned major, minor;
	if (sscanf(v.c_str(), "%u.%u", &major, &minor) != 2)
		return false;
	*out = FI_VERSION(major, minor);
	return true;
}

template <typename T> bool parse_num(const std::string &v, T *out)
{
	char *end;
	unsigned long long n = strtoull(v.c_str(), &end, 0);
	if (end == v.c_str() || *end)
		return false;
	*out = (T)n;
	return true;
}

bool parse_str(const std::string &v, char **out)
{
	free(*out);
	*out = v == "(null)" ? nullptr : strdup(v.c_str());
	return true;
}

using Setter = std::function<bool(fi_info *, const std::string &)>;
using Fields = std::map<std::string, Setter>;

#define NUM(sect, field) \
	{#field, [](fi_info *i, const std::string &v) { return parse_num(v, &i->sect->field); }}
#define FLAGS(sect, field, table)                                     \
	{#field, [](fi_info *i, const std::string &v) {                \
		 uint64_t f;                                            \
		 bool ok = parse_flags(table, v, &f);                   \
		 i->sect->field = (decltype(i->sect->field))f;          \
		 return ok;                                             \
	 }}
#define ENUM(sect, field, table) \
	{#field, [](fi_info *i, const std::string &v) { return parse_enum(table, v, &i->sect->field); }}

const std::map<std::string, Fields> &sections()
{
	static const std::map<std::string, Fields> s = {
		{"fi_tx_attr",
		 {FLAGS(tx_attr, caps, fabsim_caps_names),
		  FLAGS(tx_attr, mode, fabsim_mode_names),
		  FLAGS(tx_attr, op_flags, fabsim_op_flag_names),
		  FLAGS(tx_attr, msg_order, fabsim_order_names),
		  FLAGS(tx_attr, comp_order, fabsim_order_names),
		  NUM(tx_attr, inject_size), NUM(tx_attr, size),
		  NUM(tx_attr, iov_limit), NUM(tx_attr, rma_iov_limit),
		  NUM(tx_attr, tclass)}},
		{"fi_rx_attr",
		 {FLAGS(rx_attr, caps, fabsim_caps_names),
		  FLAGS(rx_attr, mode, fabsim_mode_names),
		  FLAGS(rx_attr, op_flags, fabsim_op_flag_names),
		  FLAGS(rx_attr, msg_order, fabsim_order_names),
		  FLAGS(rx_attr, comp_order, fabsim_order_names),
		  NUM(rx_attr, total_buffered_recv), NUM(rx_attr, size),
		  NUM(rx_attr, iov_limit)}},
		{"fi_ep_attr",
		 {ENUM(ep_attr, type, fabsim_ep_type_names),
		  ENUM(ep_attr, protocol, fabsim_protocol_names),
		  NUM(ep_attr, protocol_version), NUM(ep_attr, max_msg_size),
		  NUM(ep_attr, msg_prefix_size),
		  NUM(ep_attr, max_order_raw_size),
		  NUM(ep_attr, max_order_war_size),
		  NUM(ep_attr, max_order_waw_size),
		  NUM(ep_attr, mem_tag_format), NUM(ep_attr, tx_ctx_cnt),
		  NUM(ep_attr, rx_ctx_cnt), NUM(ep_attr, auth_key_size)}},
		{"fi_domain_attr",
		 {{"domain", [](fi_info *, const std::string &) { return true; }},
		  {"name", [](fi_info *i, const std::string &v) { return parse_str(v, &i->domain_attr->name); }},
		  ENUM(domain_attr, threading, fabsim_threading_names),
		  ENUM(domain_attr, control_progress, fabsim_progress_names),
		  ENUM(domain_attr, data_progress, fabsim_progress_names),
		  ENUM(domain_attr, resource_mgmt, fabsim_rm_names),
		  ENUM(domain_attr, av_type, fabsim_av_type_names),
		  FLAGS(domain_attr, mr_mode, fabsim_mr_mode_names),
		  NUM(domain_attr, mr_key_size), NUM(domain_attr, cq_data_size),
		  NUM(domain_attr, cq_cnt), NUM(domain_attr, ep_cnt),
		  NUM(domain_attr, tx_ctx_cnt), NUM(domain_attr, rx_ctx_cnt),
		  NUM(domain_attr, max_ep_tx_ctx),
		  NUM(domain_attr, max_ep_rx_ctx),
		  NUM(domain_attr, max_ep_stx_ctx),
		  NUM(domain_attr, max_ep_srx_ctx), NUM(domain_attr, cntr_cnt),
		  NUM(domain_attr, mr_iov_limit),
		  FLAGS(domain_attr, caps, fabsim_caps_names),
		  FLAGS(domain_attr, mode, fabsim_mode_names),
		  NUM(domain_attr, auth_key_size),
		  NUM(domain_attr, max_err_data), NUM(domain_attr, mr_cnt),
		  NUM(domain_attr, tclass)}},
		{"fi_fabric_attr",
		 {{"name", [](fi_info *i, const std::string &v) { return parse_str(v, &i->fabric_attr->name); }},
		  {"prov_name", [](fi_info *i, const std::string &v) { return parse_str(v, &i->fabric_attr->prov_name); }},
		  {"prov_version", [](fi_info *i, const std::string &v) { return parse_version(v, &i->fabric_attr->prov_version); }},
		  {"api_version", [](fi_info *i, const std::string &v) { return parse_version(v, &i->fabric_attr->api_version); }}}},
	};
	return s;
}

}  // namespace

fi_info *parse_info_text(const std::string &text, std::string *error,
			 std::string *src_text, std::string *dest_text)
{
	fi_info *info = fi_allocinfo();
	std::stringstream in(text);
	std::string line, section;
	Fields top = {
		{"caps", [](fi_info *i, const std::string &v) { return parse_flags(fabsim_caps_names, v, &i->caps); }},
		{"mode", [](fi_info *i, const std::string &v) { return parse_flags(fabsim_mode_names, v, &i->mode); }},
		{"addr_format", [](fi_info *i, const std::string &v) { return parse_enum(fabsim_addr_format_names, v, &i->addr_format); }},
		{"src_addrlen", [](fi_info *i, const std::string &v) { return parse_num(v, &i->src_addrlen); }},
		{"dest_addrlen", [](fi_info *i, const std::string &v) { return parse_num(v, &i->dest_addrlen); }},
		{"src_addr", [&](fi_info *, const std::string &v) { if (src_text) *src_text = v; return true; }},
		{"dest_addr", [&](fi_info *, const std::string &v) { if (dest_text) *dest_text = v; return true; }},
		{"handle", [](fi_info *, const std::string &) { return true; }},
		{"nic", [](fi_info *, const std::string &) { return true; }},
	};
	int line_no = 0;
	bool seen_header = false;

	while (std::getline(in, line)) {
		line_no++;
		size_t depth = line.find_first_not_of(' ');
		if (depth == std::string::npos)
			continue;
		std::string body = line.substr(depth);
		size_t colon = body.find(':');
		if (colon == std::string::npos) {
			*error = "line " + std::to_string(line_no) + ": no colon";
			goto fail;
		}
		std::string key = body.substr(0, colon);
		std::string value = colon + 1 < body.size() ?
					    body.substr(colon + 2) : "";
		if (depth == 0) {
			if (key != "fi_info" || seen_header) {
				*error = "unexpected top-level " + key;
				goto fail;
			}
			seen_header = true;
			continue;
		}
		if (depth == 4 && value.empty() && sections().count(key)) {
			section = key;
			continue;
		}
		if (depth == 4)
			section.clear();
		if (depth != 4 && (depth != 8 || section.empty())) {
			*error = "line " + std::to_string(line_no) +
				 ": misplaced " + key;
			goto fail;
		}
		const Fields &fields = depth == 4 ? top : sections().at(section);
		auto it = fields.find(key);
		if (it == fields.end()) {
			*error = "line " + std::to_string(line_no) +
				 ": unknown field " + key + " in " +
				 (depth == 4 ? "fi_info" : section);
			goto fail;
		}
		if (!it->second(info, value)) {
			*error = "line " + std::to_string(line_no) +
				 ": cannot read " + key + " = '" + value + "'";
			goto fail;
		}
	}
	if (!seen_header) {
		*error = "no fi_info header";
		goto fail;
	}
	return info;
fail:
	fi_freeinfo(info);
	return nullptr;
}

std::vector<std::string> split_info_blocks(const std::string &out)
{
	std::vector<std::string> blocks;
	std::stringstream in(out);
	std::string line, cur;
	while (std::getline(in, line)) {
		if (line == "---") {
			if (!cur.empty())
				blocks.push_back(cur);
			cur.clear();
			continue;
		}
		cur += line + "\n";
	}
	if (!cur.empty())
		blocks.push_back(cur);
	return blocks;
}

std::string diff_infos(const fi_info *a, const fi_info *b)
{
	std::stringstream d;
#define CMP(expr)                                                      \
	do {                                                           \
		if ((a->expr) != (b->expr))                            \
			d << #expr << ": " << (uint64_t)(a->expr) << " vs " \
			  << (uint64_t)(b->expr) << "\n";              \
	} while (0)
#define CMPS(expr)                                                     \
	do {                                                           \
		const char *x = a->expr, *y = b->expr;                 \
		if ((!x) != (!y) || (x && strcmp(x, y)))               \
			d << #expr << ": " << (x ? x : "(null)") << " vs " \
			  << (y ? y : "(null)") << "\n";               \
	} while (0)
	CMP(caps); CMP(mode); CMP(addr_format); CMP(src_addrlen);
	CMP(dest_addrlen);
	CMP(tx_attr->caps); CMP(tx_attr->mode); CMP(tx_attr->op_flags);
	CMP(tx_attr->msg_order); CMP(tx_attr->comp_order);
	CMP(tx_attr->inject_size); CMP(tx_attr->size); CMP(tx_attr->iov_limit);
	CMP(tx_attr->rma_iov_limit); CMP(tx_attr->tclass);
	CMP(rx_attr->caps); CMP(rx_attr->mode); CMP(rx_attr->op_flags);
	CMP(rx_attr->msg_order); CMP(rx_attr->comp_order);
	CMP(rx_attr->total_buffered_recv); CMP(rx_attr->size);
	CMP(rx_attr->iov_limit);
	CMP(ep_attr->type); CMP(ep_attr->protocol);
	CMP(ep_attr->protocol_version); CMP(ep_attr->max_msg_size);
	CMP(ep_attr->msg_prefix_size); CMP(ep_attr->max_order_raw_size);
	CMP(ep_attr->max_order_war_size); CMP(ep_attr->max_order_waw_size);
	CMP(ep_attr->mem_tag_format); CMP(ep_attr->tx_ctx_cnt);
	CMP(ep_attr->rx_ctx_cnt); CMP(ep_attr->auth_key_size);
	CMPS(domain_attr->name); CMP(domain_attr->threading);
	CMP(domain_attr->control_progress); CMP(domain_attr->data_progress);
	CMP(domain_attr->resource_mgmt); CMP(domain_attr->av_type);
	CMP(domain_attr->mr_mode); CMP(domain_attr->mr_key_size);
	CMP(domain_attr->cq_data_size); CMP(domain_attr->cq_cnt);
	CMP(domain_attr->ep_cnt); CMP(domain_attr->tx_ctx_cnt);
	CMP(domain_attr->rx_ctx_cnt); CMP(domain_attr->max_ep_tx_ctx);
	CMP(domain_attr->max_ep_rx_ctx); CMP(domain_attr->max_ep_stx_ctx);
	CMP(domain_attr->max_ep_srx_ctx); CMP(domain_attr->cntr_cnt);
	CMP(domain_attr->mr_iov_limit); CMP(domain_attr->caps);
	CMP(domain_attr->mode); CMP(domain_attr->auth_key_size);
	CMP(domain_attr->max_err_data); CMP(domain_attr->mr_cnt);
	CMP(domain_attr->tclass);
	CMPS(fabric_attr->name); CMPS(fabric_attr->prov_name);
	CMP(fabric_attr->prov_version); CMP(fabric_attr->api_version);
	return d.str();
}
