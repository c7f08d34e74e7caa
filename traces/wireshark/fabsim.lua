-- SPDX-License-Identifier: BSD-2-Clause
-- fabsim.lua: Wireshark/tshark decoding of what fabsim adds to RoCEv2 traces.
--
--   tshark -X lua_script:traces/wireshark/fabsim.lua -r run.pcap
--   (or copy this file to ~/.local/lib/wireshark/plugins/)
--
-- 1. Marker frames (EtherType 0x88B5, magic "FSMK"): a mark on the frame that follows — dropped
--    (where and why), corrupted, retransmitted, duplicated, reordered. Layout in
--    traces/include/traces/tr_mark.h. The marked frame gets a "fabsim" tree naming its marks.
-- 2. The fabsim tag header (magic "FSTG") at the start of the payload of the first packet of a
--    tagged SEND: the libfabric tag. Layout in traces/include/traces/tr_taghdr.h.
-- 3. The fabsim atomic headers: request (magic "FSAT") at the start of a SEND_ONLY, response
--    ("FSAR") at the start of a READ response ONLY: a libfabric atomic RoCE has no opcode for.
--    Layout in traces/include/traces/tr_atomichdr.h.
-- 4. Event frames (EtherType 0x88B5, magic "FSEV"): a process of a shared fabric taken out of
--    virtual time, back, or dead. Layout in traces/include/traces/tr_event.h.
-- Wireshark decodes everything else (its InfiniBand dissector); nothing here changes that.

local MARK_MAGIC = 0x46534D4B
local EVENT_MAGIC = 0x46534556
local TAG_MAGIC = 0x46535447
local ATOMIC_MAGIC = 0x46534154
local ATOMIC_RESP_MAGIC = 0x46534152
local HDR_VERSION = 1

-- A fabsim header at `s` of `len` bytes: its magic, version and length field all say so (payload
-- that merely starts with the magic is payload), and it fits before the ICRC.
local function fabsim_hdr_at(tvb, s, magic, len)
	return tvb:len() >= s + len + 4 and tvb(s, 4):uint() == magic and
		tvb(s + 4, 1):uint() == HDR_VERSION and tvb(s + 6, 2):uint() == len
end

-- libfabric's enum fi_op and enum fi_datatype (rdma/fi_domain.h)
local fi_ops = {
	[0] = "FI_MIN", [1] = "FI_MAX", [2] = "FI_SUM", [3] = "FI_PROD", [4] = "FI_LOR",
	[5] = "FI_LAND", [6] = "FI_BOR", [7] = "FI_BAND", [8] = "FI_LXOR", [9] = "FI_BXOR",
	[10] = "FI_ATOMIC_READ", [11] = "FI_ATOMIC_WRITE", [12] = "FI_CSWAP", [13] = "FI_CSWAP_NE",
	[14] = "FI_CSWAP_LE", [15] = "FI_CSWAP_LT", [16] = "FI_CSWAP_GE", [17] = "FI_CSWAP_GT",
	[18] = "FI_MSWAP",
}
local fi_datatypes = {
	[0] = "FI_INT8", [1] = "FI_UINT8", [2] = "FI_INT16", [3] = "FI_UINT16", [4] = "FI_INT32",
	[5] = "FI_UINT32", [6] = "FI_INT64", [7] = "FI_UINT64", [8] = "FI_FLOAT", [9] = "FI_DOUBLE",
	[10] = "FI_FLOAT_COMPLEX", [11] = "FI_DOUBLE_COMPLEX", [12] = "FI_LONG_DOUBLE",
	[13] = "FI_LONG_DOUBLE_COMPLEX", [14] = "FI_INT128", [15] = "FI_UINT128",
}

local reasons = {
	[0] = "none", [1] = "loss", [2] = "burst loss", [3] = "scripted drop", [4] = "link down",
	[5] = "queue full", [6] = "timeout", [7] = "NAK",
}
local flag_names = { "dropped", "corrupted", "retransmit", "duplicate", "reordered" }

local function has(v, bit) return math.floor(v / bit) % 2 == 1 end

local function flags_str(v)
	local out = {}
	for i, name in ipairs(flag_names) do
		if has(v, 2 ^ (i - 1)) then out[#out + 1] = name end
	end
	return table.concat(out, ",")
end

local function where_str(v)
	if v == 0xFFFFFFFF then return "?" end
	return tostring(v)
end

---------------------------------------------------------------------------------------------
-- Marker frames

local mark = Proto("fabsim_mark", "fabsim marker")
local mf = {
	magic = ProtoField.uint32("fabsim.mark.magic", "Magic", base.HEX),
	version = ProtoField.uint8("fabsim.mark.version", "Version"),
	reason = ProtoField.uint8("fabsim.mark.reason", "Reason", base.DEC, reasons),
	flags = ProtoField.uint16("fabsim.mark.flags", "Flags", base.HEX),
	dropped = ProtoField.bool("fabsim.mark.dropped", "Dropped", 16, nil, 0x0001),
	corrupted = ProtoField.bool("fabsim.mark.corrupted", "Corrupted", 16, nil, 0x0002),
	retransmit = ProtoField.bool("fabsim.mark.retransmit", "Retransmission", 16, nil, 0x0004),
	duplicate = ProtoField.bool("fabsim.mark.duplicate", "Duplicate", 16, nil, 0x0008),
	reordered = ProtoField.bool("fabsim.mark.reordered", "Reordered", 16, nil, 0x0010),
	node = ProtoField.uint32("fabsim.mark.node", "Node"),
	port = ProtoField.uint32("fabsim.mark.port", "Port"),
	link = ProtoField.uint32("fabsim.mark.link", "Link"),
	length = ProtoField.uint32("fabsim.mark.length", "Length of the marked frame"),
	hash = ProtoField.uint32("fabsim.mark.hash", "Hash of the marked frame", base.HEX),
}
mark.fields = mf

-- Marks seen so far, by the number of the frame they describe (the next one).
local marks = {}

---------------------------------------------------------------------------------------------
-- Event frames

local event = Proto("fabsim_event", "fabsim event")
local event_kinds = { [1] = "away", [2] = "back", [3] = "died" }
local ef = {
	magic = ProtoField.uint32("fabsim.event.magic", "Magic", base.HEX),
	version = ProtoField.uint8("fabsim.event.version", "Version"),
	kind = ProtoField.uint8("fabsim.event.kind", "Kind", base.DEC, event_kinds),
	length = ProtoField.uint16("fabsim.event.length", "Text length"),
	node = ProtoField.uint32("fabsim.event.node", "Node"),
	pid = ProtoField.uint32("fabsim.event.pid", "Process"),
	text = ProtoField.string("fabsim.event.text", "Text"),
}
event.fields = ef

local function dissect_event(tvb, pinfo, tree)
	local len = tvb(6, 2):uint()
	if tvb:len() < 16 + len then return 0 end
	local text = len > 0 and tvb(16, len):string() or ""
	pinfo.cols.protocol = "fabsim"
	pinfo.cols.info = string.format("event: node %s: %s", where_str(tvb(8, 4):uint()), text)
	local t = tree:add(event, tvb(0, 16 + len))
	t:add(ef.magic, tvb(0, 4))
	t:add(ef.version, tvb(4, 1))
	t:add(ef.kind, tvb(5, 1))
	t:add(ef.length, tvb(6, 2))
	t:add(ef.node, tvb(8, 4))
	t:add(ef.pid, tvb(12, 4))
	if len > 0 then t:add(ef.text, tvb(16, len)) end
	return 16 + len
end

function mark.dissector(tvb, pinfo, tree)
	if tvb:len() >= 16 and tvb(0, 4):uint() == EVENT_MAGIC then
		return dissect_event(tvb, pinfo, tree)
	end
	if tvb:len() < 28 or tvb(0, 4):uint() ~= MARK_MAGIC then return 0 end
	local flags = tvb(6, 2):uint()
	local reason = tvb(5, 1):uint()
	local node, port, link = tvb(8, 4):uint(), tvb(12, 4):uint(), tvb(16, 4):uint()
	pinfo.cols.protocol = "fabsim"
	pinfo.cols.info = string.format("marker: next frame %s (%s) at node %s port %s link %s",
		flags_str(flags), reasons[reason] or "?", where_str(node), where_str(port),
		where_str(link))
	local t = tree:add(mark, tvb(0, 28))
	t:add(mf.magic, tvb(0, 4))
	t:add(mf.version, tvb(4, 1))
	t:add(mf.reason, tvb(5, 1))
	local ft = t:add(mf.flags, tvb(6, 2))
	ft:add(mf.dropped, tvb(6, 2))
	ft:add(mf.corrupted, tvb(6, 2))
	ft:add(mf.retransmit, tvb(6, 2))
	ft:add(mf.duplicate, tvb(6, 2))
	ft:add(mf.reordered, tvb(6, 2))
	t:add(mf.node, tvb(8, 4))
	t:add(mf.port, tvb(12, 4))
	t:add(mf.link, tvb(16, 4))
	t:add(mf.length, tvb(20, 4))
	t:add(mf.hash, tvb(24, 4))
	marks[pinfo.number + 1] = { flags = flags, reason = reason, by = pinfo.number,
		len = tvb(20, 4):uint(), hash = tvb(24, 4):uint() }
	return 28
end

-- A new file: the marks of the last one describe none of its frames.
function mark.init()
	marks = {}
end

-- The marker's hash of the frame it describes (traces/src/mark.c): FNV-1a over the first 60
-- bytes, in 32-bit arithmetic (the multiplier is 2^24 + 403).
local function covered_hash(tvb, len)
	local n = math.min(len, 60, tvb:len())
	local h = 2166136261
	for i = 0, n - 1 do
		h = bit32.bxor(h, tvb(i, 1):uint())
		h = (bit32.lshift(h, 24) + h * 403) % 4294967296
	end
	return h
end

DissectorTable.get("ethertype"):add(0x88B5, mark)

---------------------------------------------------------------------------------------------
-- Post-dissector: marks on the marked frame, and the tag header

local post = Proto("fabsim", "fabsim")
local pf = {
	marked_by = ProtoField.framenum("fabsim.marked.by", "Marked by"),
	marked_flags = ProtoField.uint16("fabsim.marked.flags", "Marks", base.HEX),
	marked_dropped = ProtoField.bool("fabsim.marked.dropped", "Dropped", 16, nil, 0x0001),
	marked_corrupted = ProtoField.bool("fabsim.marked.corrupted", "Corrupted", 16, nil, 0x0002),
	marked_retransmit = ProtoField.bool("fabsim.marked.retransmit", "Retransmission", 16, nil,
		0x0004),
	marked_duplicate = ProtoField.bool("fabsim.marked.duplicate", "Duplicate", 16, nil, 0x0008),
	marked_reordered = ProtoField.bool("fabsim.marked.reordered", "Reordered", 16, nil, 0x0010),
	marked_reason = ProtoField.uint8("fabsim.marked.reason", "Reason", base.DEC, reasons),
	tag_magic = ProtoField.uint32("fabsim.tag.magic", "Magic", base.HEX),
	tag_version = ProtoField.uint8("fabsim.tag.version", "Version"),
	tag_flags = ProtoField.uint8("fabsim.tag.flags", "Flags", base.HEX),
	tag_cq_data = ProtoField.bool("fabsim.tag.cq_data", "Remote CQ data in ImmDt", 8, nil, 0x01),
	tag_len = ProtoField.uint16("fabsim.tag.len", "Header length"),
	tag_tag = ProtoField.uint64("fabsim.tag.tag", "Tag", base.HEX),
	at_magic = ProtoField.uint32("fabsim.atomic.magic", "Magic", base.HEX),
	at_version = ProtoField.uint8("fabsim.atomic.version", "Version"),
	at_flags = ProtoField.uint8("fabsim.atomic.flags", "Flags", base.HEX),
	at_fetch = ProtoField.bool("fabsim.atomic.fetch", "Original values wanted", 8, nil, 0x01),
	at_compare = ProtoField.bool("fabsim.atomic.compare", "Compare values follow", 8, nil, 0x02),
	at_len = ProtoField.uint16("fabsim.atomic.len", "Header length"),
	at_va = ProtoField.uint64("fabsim.atomic.va", "Virtual address", base.HEX),
	at_rkey = ProtoField.uint32("fabsim.atomic.rkey", "R_Key", base.HEX),
	at_op = ProtoField.uint8("fabsim.atomic.op", "Operation", base.DEC, fi_ops),
	at_datatype = ProtoField.uint8("fabsim.atomic.datatype", "Datatype", base.DEC, fi_datatypes),
	at_count = ProtoField.uint16("fabsim.atomic.count", "Elements"),
	ar_magic = ProtoField.uint32("fabsim.atomic_resp.magic", "Magic", base.HEX),
	ar_version = ProtoField.uint8("fabsim.atomic_resp.version", "Version"),
	ar_flags = ProtoField.uint8("fabsim.atomic_resp.flags", "Flags", base.HEX),
	ar_fetch = ProtoField.bool("fabsim.atomic_resp.fetch", "Original values follow", 8, nil, 0x01),
	ar_len = ProtoField.uint16("fabsim.atomic_resp.len", "Header length"),
	ar_op = ProtoField.uint8("fabsim.atomic_resp.op", "Operation", base.DEC, fi_ops),
	ar_datatype = ProtoField.uint8("fabsim.atomic_resp.datatype", "Datatype", base.DEC,
		fi_datatypes),
	ar_count = ProtoField.uint16("fabsim.atomic_resp.count", "Elements"),
}
post.fields = pf

local f_opcode = Field.new("infiniband.bth.opcode")

-- Headers before the payload (BTH + extended headers) of the opcodes that can carry a tag
-- header: the first packet of a SEND. The same numbers as traces/src/opcode.c's table.
local send_first_hdr_len = {
	[0x00] = 12, [0x04] = 12, [0x05] = 16, [0x17] = 16,  -- RC FIRST, ONLY, ONLY+imm, ONLY+inv
	[0x20] = 12, [0x24] = 12, [0x25] = 16,               -- UC
	[0x64] = 20, [0x65] = 24,                            -- UD (DETH)
}

local function dissect_tag(tvb, pinfo, tree)
	local op = f_opcode()
	if not op then return end
	local hl = send_first_hdr_len[op.value]
	if not hl then return end
	-- the BTH field's offset is counted in the frame, which is what a post-dissector gets
	local start = op.offset + hl
	local src = tvb
	if not fabsim_hdr_at(src, start, TAG_MAGIC, 16) then return end
	local t = tree:add(post, src(start, 16), "fabsim tag header")
	t:add(pf.tag_magic, src(start, 4))
	t:add(pf.tag_version, src(start + 4, 1))
	local ft = t:add(pf.tag_flags, src(start + 5, 1))
	ft:add(pf.tag_cq_data, src(start + 5, 1))
	t:add(pf.tag_len, src(start + 6, 2))
	t:add(pf.tag_tag, src(start + 8, 8))
	pinfo.cols.info:append(" tag=0x" .. src(start + 8, 8):uint64():tohex())
end

-- Headers before the payload of the opcodes that can carry an atomic header: SEND ONLY (RC, UC,
-- UD) for a request, RC READ response ONLY (AETH) for a response.
local atomic_hdr_len = { [0x04] = 12, [0x24] = 12, [0x64] = 20 }
local atomic_resp_hdr_len = { [0x10] = 16 }

local function op_name(v) return fi_ops[v] or tostring(v) end

local function dissect_atomic(tvb, pinfo, tree)
	local op = f_opcode()
	if not op then return end
	local hl = atomic_hdr_len[op.value]
	if hl then
		local s = op.offset + hl
		if not fabsim_hdr_at(tvb, s, ATOMIC_MAGIC, 24) then return end
		local t = tree:add(post, tvb(s, 24), "fabsim atomic request")
		t:add(pf.at_magic, tvb(s, 4))
		t:add(pf.at_version, tvb(s + 4, 1))
		local ft = t:add(pf.at_flags, tvb(s + 5, 1))
		ft:add(pf.at_fetch, tvb(s + 5, 1))
		ft:add(pf.at_compare, tvb(s + 5, 1))
		t:add(pf.at_len, tvb(s + 6, 2))
		t:add(pf.at_va, tvb(s + 8, 8))
		t:add(pf.at_rkey, tvb(s + 16, 4))
		t:add(pf.at_op, tvb(s + 20, 1))
		t:add(pf.at_datatype, tvb(s + 21, 1))
		t:add(pf.at_count, tvb(s + 22, 2))
		pinfo.cols.info:append(" atomic " .. op_name(tvb(s + 20, 1):uint()) .. " x" ..
			tvb(s + 22, 2):uint())
		return
	end
	hl = atomic_resp_hdr_len[op.value]
	if not hl then return end
	local s = op.offset + hl
	if not fabsim_hdr_at(tvb, s, ATOMIC_RESP_MAGIC, 12) then return end
	local t = tree:add(post, tvb(s, 12), "fabsim atomic response")
	t:add(pf.ar_magic, tvb(s, 4))
	t:add(pf.ar_version, tvb(s + 4, 1))
	local ft = t:add(pf.ar_flags, tvb(s + 5, 1))
	ft:add(pf.ar_fetch, tvb(s + 5, 1))
	t:add(pf.ar_len, tvb(s + 6, 2))
	t:add(pf.ar_op, tvb(s + 8, 1))
	t:add(pf.ar_datatype, tvb(s + 9, 1))
	t:add(pf.ar_count, tvb(s + 10, 2))
	pinfo.cols.info:append(" atomic response " .. op_name(tvb(s + 8, 1):uint()))
end

function post.dissector(tvb, pinfo, tree)
	local m = marks[pinfo.number]
	-- A marker that does not describe this frame (a cut or spliced file) marks nothing.
	if m and (m.len ~= pinfo.len or m.hash ~= covered_hash(tvb, pinfo.len)) then
		tree:add(post, "fabsim: the marker before this frame describes another frame")
		m = nil
	end
	if m then
		local t = tree:add(post, "fabsim: " .. flags_str(m.flags) .. " (" ..
			(reasons[m.reason] or "?") .. ")")
		t:add(pf.marked_by, m.by)
		local ft = t:add(pf.marked_flags, m.flags)
		ft:add(pf.marked_dropped, m.flags)
		ft:add(pf.marked_corrupted, m.flags)
		ft:add(pf.marked_retransmit, m.flags)
		ft:add(pf.marked_duplicate, m.flags)
		ft:add(pf.marked_reordered, m.flags)
		t:add(pf.marked_reason, m.reason)
		pinfo.cols.info:prepend("[" .. flags_str(m.flags) .. "] ")
	end
	dissect_tag(tvb, pinfo, tree)
	dissect_atomic(tvb, pinfo, tree)
end

register_postdissector(post)
