/* Messages cut into packets, without a transport (see nm_message.h). */
#include "netmodel/nm_message.h"

#include <errno.h>
#include <stdlib.h>

#include "netmodel/nm_cost.h"
#include "netmodel/nm_link.h"

#define NO_MESSAGE UINT32_MAX

typedef struct message_record {
	nm_message_info info;
	uint64_t packets_total;
	uint64_t packets_received;
	uint32_t mtu_bytes;    /* of the path, found when posting */
	uint32_t header_bytes;
	uint32_t next_free;
} message_record;

struct nm_msglayer {
	fs_arena *arena; /* the network's */
	nm_network *net;
	nm_message_done_fn done;
	void *done_ctx;
	message_record *records;
	uint32_t record_cap;
	uint32_t free_head;
	uint64_t outstanding;
	uint64_t completed;
};

static void on_packet(void *ctx, const nm_packet *pkt);

int nm_msglayer_create(nm_network *net, nm_message_done_fn done, void *ctx, nm_msglayer **out)
{
	fs_arena *arena = nm_network_arena(net);
	nm_msglayer *layer;

	if (!nm_network_engine(net))
		return -EINVAL; /* a partitioned network: its messages would cross partitions */
	layer = fs_mem_calloc(arena, 1, sizeof(*layer));
	if (!layer)
		return -ENOMEM;
	layer->arena = arena;
	layer->net = net;
	layer->done = done;
	layer->done_ctx = ctx;
	layer->free_head = NO_MESSAGE;
	nm_network_set_deliver(net, on_packet, layer);
	*out = layer;
	return 0;
}

void nm_msglayer_destroy(nm_msglayer *layer)
{
	if (!layer)
		return;
	nm_network_set_deliver(layer->net, NULL, NULL);
	fs_mem_free(layer->arena, layer->records);
	fs_mem_free(layer->arena, layer);
}

static int record_alloc(nm_msglayer *layer, uint32_t *index_out)
{
	if (layer->free_head == NO_MESSAGE) {
		uint32_t old_cap = layer->record_cap;
		if (old_cap >= NO_MESSAGE / 2)
			return -ENOMEM;
		uint32_t cap = old_cap ? old_cap * 2 : 64;
		message_record *records = fs_mem_realloc(layer->arena, layer->records, (size_t)cap * sizeof(*records));
		if (!records)
			return -ENOMEM;
		for (uint32_t i = old_cap; i < cap; i++)
			records[i].next_free = i + 1 < cap ? i + 1 : NO_MESSAGE;
		layer->records = records;
		layer->record_cap = cap;
		layer->free_head = old_cap;
	}
	*index_out = layer->free_head;
	layer->free_head = layer->records[*index_out].next_free;
	return 0;
}

static void record_free(nm_msglayer *layer, uint32_t index)
{
	layer->records[index].next_free = layer->free_head;
	layer->free_head = index;
}

/* The NIC has fetched the work request and the payload: all packets join the host's queue. */
static void inject_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_msglayer *layer = ctx;
	message_record *rec = &layer->records[arg];
	uint64_t remaining = rec->info.bytes;
	for (uint64_t i = 0; i < rec->packets_total; i++) {
		uint64_t payload = remaining < rec->mtu_bytes ? remaining : rec->mtu_bytes;
		remaining -= payload;
		nm_packet pkt = {
			.flow = rec->info.flow,
			.user_id = arg,
			.bytes = (uint32_t)payload + rec->header_bytes,
			.src = rec->info.src,
			.dst = rec->info.dst,
		};
		if (nm_network_inject(layer->net, &pkt))
			abort(); /* sizes come from the path itself; only memory can fail */
	}
	(void)engine;
}

static void complete_event(nm_engine *engine, void *ctx, uint64_t arg)
{
	nm_msglayer *layer = ctx;
	message_record *rec = &layer->records[arg];
	rec->info.completed_at = nm_engine_now(engine);
	nm_message_info info = rec->info;
	record_free(layer, (uint32_t)arg);
	layer->outstanding--;
	layer->completed++;
	if (layer->done)
		layer->done(layer->done_ctx, &info);
}

static void on_packet(void *ctx, const nm_packet *pkt)
{
	nm_msglayer *layer = ctx;
	/* Without a transport a copy cannot be told apart by sequence number; the model flags it. */
	if (pkt->flags & NM_PKT_DUPLICATE)
		return;
	message_record *rec = &layer->records[pkt->user_id];
	if (++rec->packets_received < rec->packets_total)
		return;
	nm_engine *engine = nm_network_engine(layer->net);
	nm_time_ns delay = nm_nic_recv_overhead_ns(&nm_network_config(layer->net)->nic);
	if (nm_engine_schedule_after(engine, delay, rec->info.dst, complete_event, layer,
				     pkt->user_id, NULL))
		abort();
}

int nm_message_send(nm_msglayer *layer, uint32_t src, uint32_t dst, uint64_t flow, uint64_t bytes,
		    uint64_t user_id)
{
	nm_path path;
	if (nm_network_path(layer->net, src, dst, flow, &path))
		return -EINVAL;
	uint32_t index;
	if (record_alloc(layer, &index))
		return -ENOMEM;
	nm_engine *engine = nm_network_engine(layer->net);
	message_record *rec = &layer->records[index];
	rec->info = (nm_message_info){
		.src = src,
		.dst = dst,
		.flow = flow,
		.bytes = bytes,
		.user_id = user_id,
		.posted_at = nm_engine_now(engine),
	};
	rec->packets_total = nm_packet_count(bytes, path.mtu_bytes);
	rec->packets_received = 0;
	rec->mtu_bytes = path.mtu_bytes;
	rec->header_bytes = path.header_bytes;
	nm_time_ns delay = nm_nic_send_overhead_ns(&nm_network_config(layer->net)->nic);
	int rc = nm_engine_schedule_after(engine, delay, src, inject_event, layer, index, NULL);
	if (rc) {
		record_free(layer, index);
		return rc;
	}
	layer->outstanding++;
	return 0;
}

uint64_t nm_msglayer_outstanding(const nm_msglayer *layer)
{
	return layer->outstanding;
}

uint64_t nm_msglayer_completed(const nm_msglayer *layer)
{
	return layer->completed;
}
