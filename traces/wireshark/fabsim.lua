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
-- Wireshark decodes everything else (its InfiniBand dissector); nothing here changes that.

local MARK_MAGIC = 0x46534D4B
local TAG_MAGIC = 0x46535447

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

function mark.dissector(tvb, pinfo, tree)
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
	marks[pinfo.number + 1] = { flags = flags, reason = reason, by = pinfo.number }
	return 28
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
	-- the tag header must fit before the ICRC
	if src:len() < start + 16 + 4 or src(start, 4):uint() ~= TAG_MAGIC then return end
	local t = tree:add(post, src(start, 16), "fabsim tag header")
	t:add(pf.tag_magic, src(start, 4))
	t:add(pf.tag_version, src(start + 4, 1))
	local ft = t:add(pf.tag_flags, src(start + 5, 1))
	ft:add(pf.tag_cq_data, src(start + 5, 1))
	t:add(pf.tag_len, src(start + 6, 2))
	t:add(pf.tag_tag, src(start + 8, 8))
	pinfo.cols.info:append(" tag=0x" .. src(start + 8, 8):uint64():tohex())
end

function post.dissector(tvb, pinfo, tree)
	local m = marks[pinfo.number]
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
end

register_postdissector(post)
