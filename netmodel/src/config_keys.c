/* The table of configuration keys and the setters every front end (JSON, environment, direct)
 * goes through, so each key is range-checked in exactly one place. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

#define FIELD(f) offsetof(nm_config, f), sizeof(((nm_config *)0)->f)
#define TIME_MAX UINT64_C(1000000000000000) /* 1e15 ns, ~11.6 days: far beyond any study */
#define BYTES_MAX (UINT64_C(1) << 50)

static const char *const topology_names[] = {"pair", "star", "fattree", NULL};
static const char *const flow_control_names[] = {"drop", "pause", "credit", NULL};

static const key_spec keys[] = {
	{{"preset", "string", "ideal, roce-25g, roce-100g, ib-hdr-200g, ib-ndr-400g",
	  "base parameter set"}, KEY_PRESET, 0, 0, 0, 0, 0, 0, NULL},
	{{"seed", "uint", "0 to 9223372036854775807", "root of every random stream"},
	 KEY_UINT, FIELD(seed), 0, INT64_MAX, 0, 0, NULL},
	{{"topology.kind", "enum", "pair, star, fattree", "shape of the network"},
	 KEY_ENUM, FIELD(topology.kind), 0, 0, 0, 0, topology_names},
	{{"topology.hosts", "uint", "2 to 4194304", "number of hosts"},
	 KEY_UINT, FIELD(topology.hosts), 2, 1u << 22, 0, 0, NULL},
	{{"topology.hosts_per_leaf", "uint", "1 to 4096", "fat-tree: hosts under each leaf"},
	 KEY_UINT, FIELD(topology.hosts_per_leaf), 1, 4096, 0, 0, NULL},
	{{"topology.uplinks_per_leaf", "uint", "1 to 4096",
	  "fat-tree: uplinks per leaf = spines; oversubscription is hosts_per_leaf:uplinks_per_leaf"},
	 KEY_UINT, FIELD(topology.uplinks_per_leaf), 1, 4096, 0, 0, NULL},
	{{"link.bandwidth_gbps", "number", "0 (infinite) or 0.000001 to 100000",
	  "data rate of every link, Gb/s"},
	 KEY_GBPS, FIELD(link.bandwidth_bps), 0, 0, 1e-6, 1e5, NULL},
	{{"link.latency_ns", "uint", "0 to 1e15", "one-way propagation latency"},
	 KEY_UINT, FIELD(link.latency_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"link.mtu", "uint", "64 to 65536", "largest payload per packet, bytes"},
	 KEY_UINT, FIELD(link.mtu_bytes), 64, 65536, 0, 0, NULL},
	{{"link.header_bytes", "uint", "0 to 4096", "per-packet framing on the wire, bytes"},
	 KEY_UINT, FIELD(link.header_bytes), 0, 4096, 0, 0, NULL},
	{{"switch.latency_ns", "uint", "0 to 1e15", "forwarding latency"},
	 KEY_UINT, FIELD(sw.latency_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"switch.buffer_bytes", "uint", "0 (unlimited) or one packet to 2^50",
	  "egress buffer per switch port"},
	 KEY_UINT, FIELD(sw.buffer_bytes), 0, BYTES_MAX, 0, 0, NULL},
	{{"switch.flow_control", "enum", "drop, pause, credit",
	  "full buffer: tail drop, pause upstream, or upstream waits for credits"},
	 KEY_ENUM, FIELD(sw.flow_control), 0, 0, 0, 0, flow_control_names},
	{{"switch.ecn_threshold_bytes", "uint", "0 (off) to 2^50", "queue depth that marks ECN"},
	 KEY_UINT, FIELD(sw.ecn_threshold_bytes), 0, BYTES_MAX, 0, 0, NULL},
	{{"loss.rate", "probability", "0 to 1", "Bernoulli loss per packet per link direction"},
	 KEY_REAL, FIELD(impair.loss_rate), 0, 0, 0, 1, NULL},
	{{"loss.burst_rate", "probability", "0 to L/(L+1) for L = loss.burst_length",
	  "Gilbert-Elliott long-run loss rate per link direction"},
	 KEY_REAL, FIELD(impair.burst_loss_rate), 0, 0, 0, 1, NULL},
	{{"loss.burst_length", "number", "1 to 1e9", "Gilbert-Elliott mean burst length, packets"},
	 KEY_REAL, FIELD(impair.burst_mean_length), 0, 0, 1, 1e9, NULL},
	{{"loss.corrupt_rate", "probability", "0 to 1", "probability a packet is flagged corrupted"},
	 KEY_REAL, FIELD(impair.corrupt_rate), 0, 0, 0, 1, NULL},
	{{"loss.duplicate_rate", "probability", "0 to 1", "probability a packet is duplicated"},
	 KEY_REAL, FIELD(impair.duplicate_rate), 0, 0, 0, 1, NULL},
	{{"loss.reorder_rate", "probability", "0 to 1",
	  "probability a packet is held back by loss.reorder_delay_ns"},
	 KEY_REAL, FIELD(impair.reorder_rate), 0, 0, 0, 1, NULL},
	{{"loss.reorder_delay_ns", "uint", "0 to 1e15", "extra delay of a reordered packet"},
	 KEY_UINT, FIELD(impair.reorder_delay_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"loss.drop", "list", "up to 64 of flow:nth (nth >= 1)",
	  "drop the nth packet of a flow as it leaves its source host"},
	 KEY_DROP_LIST, 0, 0, 0, 0, 0, 0, NULL},
	{{"faults.link_down", "list", "up to 64 of link:down_ns[:up_ns] (up_ns > down_ns)",
	  "link down (both directions) from down_ns until up_ns"},
	 KEY_FAULT_LIST, 0, 0, 0, 0, 0, 0, NULL},
	{{"nic.tx_delay_ns", "uint", "0 to 1e15", "doorbell to first bit on the wire"},
	 KEY_UINT, FIELD(nic.tx_delay_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"nic.rx_delay_ns", "uint", "0 to 1e15", "last bit in to completion"},
	 KEY_UINT, FIELD(nic.rx_delay_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"nic.dma_latency_ns", "uint", "0 to 1e15", "one DMA transfer across PCIe"},
	 KEY_UINT, FIELD(nic.dma_latency_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"mr.base_ns", "uint", "0 to 1e15", "fixed cost of a memory registration"},
	 KEY_UINT, FIELD(mr.base_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"mr.per_page_ns", "uint", "0 to 1e15", "registration cost per page"},
	 KEY_UINT, FIELD(mr.per_page_ns), 0, TIME_MAX, 0, 0, NULL},
	{{"mr.page_size", "uint", "a power of two, 512 to 1073741824", "page size for registration"},
	 KEY_POW2, FIELD(mr.page_size), 512, UINT64_C(1) << 30, 0, 0, NULL},
	{{"mr.max_regions", "uint", "0 (unlimited) to 2^50", "memory regions per NIC"},
	 KEY_UINT, FIELD(mr.max_regions), 0, BYTES_MAX, 0, 0, NULL},
	{{"mr.max_bytes", "uint", "0 (unlimited) to 2^50", "registered bytes per NIC"},
	 KEY_UINT, FIELD(mr.max_bytes), 0, BYTES_MAX, 0, 0, NULL},
};

#define KEY_COUNT (sizeof(keys) / sizeof(keys[0]))

const key_spec *config_key_table(size_t *count_out)
{
	*count_out = KEY_COUNT;
	return keys;
}

size_t nm_config_key_count(void)
{
	return KEY_COUNT;
}

const nm_config_key_info *nm_config_key(size_t index)
{
	return index < KEY_COUNT ? &keys[index].info : NULL;
}

const key_spec *config_find_key(const char *dotted)
{
	for (size_t i = 0; i < KEY_COUNT; i++)
		if (strcmp(keys[i].info.key, dotted) == 0)
			return &keys[i];
	return NULL;
}

int config_type_error(const key_spec *spec, const char *shown, nm_error *err)
{
	return nm_error_set(err, -EINVAL, "%s: %s has the wrong type (allowed: %s %s)",
			    spec->info.key, shown, spec->info.type, spec->info.allowed);
}

static void store_uint(nm_config *cfg, const key_spec *spec, uint64_t value)
{
	char *field = (char *)cfg + spec->offset;
	if (spec->width == sizeof(uint32_t)) {
		uint32_t v = (uint32_t)value;
		memcpy(field, &v, sizeof(v));
	} else {
		memcpy(field, &value, sizeof(value));
	}
}

int config_set_uint(nm_config *cfg, const key_spec *spec, uint64_t value, const char *shown,
		    nm_error *err)
{
	if (spec->kind == KEY_REAL || spec->kind == KEY_GBPS)
		return config_set_real(cfg, spec, (double)value, shown, err);
	if (spec->kind != KEY_UINT && spec->kind != KEY_POW2)
		return config_type_error(spec, shown, err);
	if (value < spec->umin || value > spec->umax ||
	    (spec->kind == KEY_POW2 && (value & (value - 1)) != 0))
		return nm_error_set(err, -EINVAL, "%s: %s is out of range (allowed: %s)",
				    spec->info.key, shown, spec->info.allowed);
	store_uint(cfg, spec, value);
	return 0;
}

int config_set_real(nm_config *cfg, const key_spec *spec, double value, const char *shown,
		    nm_error *err)
{
	if (spec->kind != KEY_REAL && spec->kind != KEY_GBPS)
		return config_type_error(spec, shown, err);
	bool zero_ok = spec->kind == KEY_GBPS && value == 0.0;
	if (!isfinite(value) || (!zero_ok && (value < spec->dmin || value > spec->dmax)))
		return nm_error_set(err, -EINVAL, "%s: %s is out of range (allowed: %s)",
				    spec->info.key, shown, spec->info.allowed);
	char *field = (char *)cfg + spec->offset;
	if (spec->kind == KEY_GBPS) {
		uint64_t bps = (uint64_t)llround(value * 1e9);
		memcpy(field, &bps, sizeof(bps));
	} else {
		memcpy(field, &value, sizeof(value));
	}
	return 0;
}

int config_set_enum(nm_config *cfg, const key_spec *spec, const char *name, nm_error *err)
{
	if (spec->kind != KEY_ENUM) {
		char shown[96];
		snprintf(shown, sizeof(shown), "\"%.80s\"", name);
		return config_type_error(spec, shown, err);
	}
	for (int i = 0; spec->enum_names[i]; i++) {
		if (strcmp(spec->enum_names[i], name) == 0) {
			memcpy((char *)cfg + spec->offset, &i, sizeof(i));
			return 0;
		}
	}
	return nm_error_set(err, -EINVAL, "%s: \"%.80s%s\" is unknown (allowed: %s)", spec->info.key,
			    name, strlen(name) > 80 ? "..." : "", spec->info.allowed);
}

int config_set_drops(nm_config *cfg, const nm_scripted_drop *drops, size_t count, nm_error *err)
{
	if (count > NM_CONFIG_MAX_DROPS)
		return nm_error_set(err, -EINVAL, "loss.drop: %zu entries (allowed: at most %d)", count,
				    NM_CONFIG_MAX_DROPS);
	for (size_t i = 0; i < count; i++)
		if (drops[i].nth == 0)
			return nm_error_set(err, -EINVAL,
					    "loss.drop[%zu].nth: 0 is out of range (allowed: >= 1, "
					    "packets count from 1)",
					    i);
	memcpy(cfg->drops, drops, count * sizeof(*drops));
	cfg->drop_count = (uint32_t)count;
	return 0;
}

int config_set_faults(nm_config *cfg, const nm_link_fault *faults, size_t count, nm_error *err)
{
	if (count > NM_CONFIG_MAX_FAULTS)
		return nm_error_set(err, -EINVAL, "faults.link_down: %zu entries (allowed: at most %d)",
				    count, NM_CONFIG_MAX_FAULTS);
	for (size_t i = 0; i < count; i++)
		if (faults[i].up_at <= faults[i].down_at)
			return nm_error_set(err, -EINVAL,
					    "faults.link_down[%zu].up_ns: %" PRIu64
					    " is out of range (allowed: greater than down_ns %" PRIu64 ")",
					    i, faults[i].up_at, faults[i].down_at);
	memcpy(cfg->faults, faults, count * sizeof(*faults));
	cfg->fault_count = (uint32_t)count;
	return 0;
}

/* ---- text form ---- */

/* Strict decimal: digits only, no sign, no spaces, no overflow. */
static bool parse_u64(const char *text, uint64_t *out)
{
	if (!*text)
		return false;
	uint64_t v = 0;
	for (const char *c = text; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		unsigned digit = (unsigned)(*c - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return false;
		v = v * 10 + digit;
	}
	*out = v;
	return true;
}

static bool parse_real(const char *text, double *out)
{
	if (!*text)
		return false;
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return false;
	*out = v;
	return true;
}

/* Splits "a:b[:c]" into up to `max` unsigned fields; returns the count or -1. */
static int parse_fields(const char *item, uint64_t *fields, int max)
{
	char buf[128];
	if (strlen(item) >= sizeof(buf))
		return -1;
	strcpy(buf, item);
	/* strsep, not strtok: "0::5" has an empty field, which is an error,
	 * not one field less. */
	int n = 0;
	char *rest = buf;
	for (char *tok; (tok = strsep(&rest, ":"));) {
		if (n == max || !parse_u64(tok, &fields[n]))
			return -1;
		n++;
	}
	return n;
}

static int set_list_text(nm_config *cfg, const key_spec *spec, const char *text, nm_error *err)
{
	nm_scripted_drop drops[NM_CONFIG_MAX_DROPS + 1];
	nm_link_fault faults[NM_CONFIG_MAX_FAULTS + 1];
	size_t count = 0;
	size_t max_entries = spec->kind == KEY_DROP_LIST ? NM_CONFIG_MAX_DROPS : NM_CONFIG_MAX_FAULTS;
	char buf[4096];
	if (strlen(text) >= sizeof(buf))
		return nm_error_set(err, -EINVAL, "%s: value too long (allowed: %s)", spec->info.key,
				    spec->info.allowed);
	strcpy(buf, text);
	char *rest = *buf ? buf : NULL; /* "": no entries */
	for (char *item; (item = strsep(&rest, ","));) {
		uint64_t f[3];
		int n = parse_fields(item, f, 3);
		if (count == max_entries)
			return nm_error_set(err, -EINVAL, "%s: more than %zu entries (allowed: %s)",
					    spec->info.key, max_entries, spec->info.allowed);
		if (spec->kind == KEY_DROP_LIST && n == 2) {
			drops[count++] = (nm_scripted_drop){.flow = f[0], .nth = f[1]};
		} else if (spec->kind == KEY_FAULT_LIST && (n == 2 || n == 3) && f[0] <= UINT32_MAX) {
			faults[count++] = (nm_link_fault){
				.link = (uint32_t)f[0],
				.down_at = f[1],
				.up_at = n == 3 ? f[2] : NM_TIME_NEVER};
		} else {
			return nm_error_set(err, -EINVAL, "%s: \"%s\" is malformed (allowed: %s)",
					    spec->info.key, item, spec->info.allowed);
		}
	}
	return spec->kind == KEY_DROP_LIST ? config_set_drops(cfg, drops, count, err)
					   : config_set_faults(cfg, faults, count, err);
}

int config_set_text(nm_config *cfg, const key_spec *spec, const char *text, nm_error *err)
{
	char shown[128];
	snprintf(shown, sizeof(shown), "\"%.100s\"", text);
	uint64_t u;
	double d;
	switch (spec->kind) {
	case KEY_PRESET:
		return nm_error_set(err, -EINVAL,
				    "preset: %s selects the base parameters and is applied first, by "
				    "nm_config_load",
				    shown);
	case KEY_UINT:
	case KEY_POW2:
		if (!parse_u64(text, &u))
			return nm_error_set(err, -EINVAL,
					    "%s: %s is not a non-negative integer (allowed: %s)",
					    spec->info.key, shown, spec->info.allowed);
		return config_set_uint(cfg, spec, u, shown, err);
	case KEY_REAL:
	case KEY_GBPS:
		if (!parse_real(text, &d))
			return nm_error_set(err, -EINVAL, "%s: %s is not a number (allowed: %s)",
					    spec->info.key, shown, spec->info.allowed);
		return config_set_real(cfg, spec, d, shown, err);
	case KEY_ENUM:
		return config_set_enum(cfg, spec, text, err);
	case KEY_DROP_LIST:
	case KEY_FAULT_LIST:
		return set_list_text(cfg, spec, text, err);
	}
	return -EINVAL;
}

int nm_config_set(nm_config *cfg, const char *key, const char *value, nm_error *err)
{
	const key_spec *spec = config_find_key(key);
	if (!spec)
		return nm_error_set(err, -EINVAL, "unknown key \"%s\" (see netmodel/README.md)", key);
	if (spec->kind == KEY_PRESET)
		return nm_error_set(err, -EINVAL,
				    "preset: cannot be changed by nm_config_set (use nm_preset_load)");
	return config_set_text(cfg, spec, value, err);
}
