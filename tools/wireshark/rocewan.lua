-- rocewan.lua: Wireshark/tshark dissector for rocewan's RoCEv2 wire extensions.
--
-- Decodes the manufacturer-specific BTH opcodes 0xC0-0xFF (IBTA Vol. 1
-- table 38 leaves them to manufacturers) that rocewan's loss recoveries send,
-- with their extension headers (docs/wire.md "Extension registry"):
--   0xC0 RC_X_RACK, 0xC1 RC_X_SACK, 0xE0 RC_X_VRP_ACK, 0xE1 RC_X_VRP_NACK:
--        BTH | AETH | NTETH
--   0xC2/0xC3 self-placing WRITE MIDDLE/LAST: BTH | RETH | payload
--   0xC4-0xC6, 0xC8 self-placing SENDs: BTH | SPETH | payload
--   0xC7, 0xC9 self-placing SENDs with immediate: BTH | ImmDt | SPETH | payload
--   0xD0 RC_X_FEC_REPAIR, 0xD1 RC_X_FEC_NEGOTIATE: BTH | FRH [| coded payload]
--   0xE2 RC_X_RDMA_WRITE_FIRST_VRP: BTH | RETH | VTETH | payload
--   0xE3 RC_X_VRP_LOSS: BTH | AETH | VLETH
-- and the capability record an rnic puts into bytes 5-15 of perftest's
-- 16-byte version message on TCP port 18515 (docs/perftest-exchange.md,
-- "Capability record").
--
-- Frames with standard opcodes (RC/UC/UD, CNP) go on to Wireshark's own
-- InfiniBand dissector unchanged: this one takes over UDP port 4791 and hands
-- every frame whose first BTH byte is below 0xC0 to the dissector that was
-- registered there before.
--
-- Every field is named rocewan.*; header fields are named after the Scapy
-- layers in python/rocewan (layers.py, fec.py), so rocewan.nteth.psn is the
-- "psn" field of rocewan.layers.NTETH.
--
-- Install: copy this file to Wireshark's personal plugin folder
-- (~/.local/lib/wireshark/plugins/ on Linux), or load it for one run with
-- tshark -X lua_script:tools/wireshark/rocewan.lua (docs/wireshark.md).

local ROCE_PORT = 4791
local PERFTEST_PORT = 18515

local rw = Proto("rocewan", "rocewan RoCEv2 extensions")

-- Opcode table of the extension registry (lib/roce/roce_opcode.c,
-- python/rocewan/opcodes.py): name, extension headers in wire order,
-- whether payload is allowed.
local OPS = {
	[0xC0] = { "RC_X_RACK", { "aeth", "nteth" }, false },
	[0xC1] = { "RC_X_SACK", { "aeth", "nteth" }, false },
	[0xC2] = { "RC_X_RDMA_WRITE_MIDDLE_PLACED", { "reth" }, true },
	[0xC3] = { "RC_X_RDMA_WRITE_LAST_PLACED", { "reth" }, true },
	[0xC4] = { "RC_X_SEND_FIRST_PLACED", { "speth" }, true },
	[0xC5] = { "RC_X_SEND_MIDDLE_PLACED", { "speth" }, true },
	[0xC6] = { "RC_X_SEND_LAST_PLACED", { "speth" }, true },
	[0xC7] = { "RC_X_SEND_LAST_WITH_IMMEDIATE_PLACED", { "immdt", "speth" }, true },
	[0xC8] = { "RC_X_SEND_ONLY_PLACED", { "speth" }, true },
	[0xC9] = { "RC_X_SEND_ONLY_WITH_IMMEDIATE_PLACED", { "immdt", "speth" }, true },
	[0xD0] = { "RC_X_FEC_REPAIR", { "frh" }, true },
	[0xD1] = { "RC_X_FEC_NEGOTIATE", { "frh" }, false },
	[0xE0] = { "RC_X_VRP_ACK", { "aeth", "nteth" }, false },
	[0xE1] = { "RC_X_VRP_NACK", { "aeth", "nteth" }, false },
	[0xE2] = { "RC_X_RDMA_WRITE_FIRST_VRP", { "reth", "vteth" }, true },
	[0xE3] = { "RC_X_VRP_LOSS", { "aeth", "vleth" }, false },
}

local OP_NAMES = {}
for code, op in pairs(OPS) do
	OP_NAMES[code] = op[1]
end

local EXT_LEN = { aeth = 4, nteth = 4, reth = 16, speth = 8, immdt = 4, frh = 28, vteth = 44, vleth = 80 }
local EXT_TITLE = {
	aeth = "AETH (ACK Extended Transport Header, IBTA 9.3.5)",
	nteth = "NTETH (rocewan notice: run, PSN)",
	reth = "RETH (RDMA Extended Transport Header, IBTA 9.3.3)",
	speth = "SPETH (rocewan SEND placement)",
	immdt = "ImmDt (Immediate Data, IBTA 9.3.6)",
	frh = "FRH (rocewan FEC Repair Header)",
	vteth = "VTETH (rocewan VRP tolerance)",
	vleth = "VLETH (rocewan VRP loss summary)",
}

local AETH_TYPES = { [0] = "ACK", [1] = "RNR NAK", [2] = "reserved", [3] = "NAK" }
local FRH_TYPES = { [1] = "xor", [2] = "rs", [3] = "propose", [4] = "commit" }
local FRH_MODES = { [0] = "off", [1] = "xor", [2] = "rs" }

local f = {}

-- BTH (IBTA 9.2)
f.bth = ProtoField.bytes("rocewan.bth", "BTH")
f.opcode = ProtoField.uint8("rocewan.bth.opcode", "OpCode", base.HEX, OP_NAMES)
f.solicited = ProtoField.uint8("rocewan.bth.solicited", "Solicited Event", base.DEC, nil, 0x80)
f.migreq = ProtoField.uint8("rocewan.bth.migreq", "MigReq", base.DEC, nil, 0x40)
f.padcount = ProtoField.uint8("rocewan.bth.padcount", "Pad Count", base.DEC, nil, 0x30)
f.version = ProtoField.uint8("rocewan.bth.version", "Header Version", base.DEC, nil, 0x0f)
f.pkey = ProtoField.uint16("rocewan.bth.pkey", "Partition Key", base.HEX)
f.fecn = ProtoField.uint8("rocewan.bth.fecn", "FECN", base.DEC, nil, 0x80)
f.becn = ProtoField.uint8("rocewan.bth.becn", "BECN", base.DEC, nil, 0x40)
f.resv6 = ProtoField.uint8("rocewan.bth.resv6", "Reserved (6 bits)", base.HEX, nil, 0x3f)
f.dqpn = ProtoField.uint24("rocewan.bth.dqpn", "Destination Queue Pair", base.HEX)
f.ackreq = ProtoField.uint8("rocewan.bth.ackreq", "Acknowledge Request", base.DEC, nil, 0x80)
f.resv7 = ProtoField.uint8("rocewan.bth.resv7", "Reserved (7 bits)", base.HEX, nil, 0x7f)
f.psn = ProtoField.uint24("rocewan.bth.psn", "Packet Sequence Number", base.DEC)
-- AETH (IBTA 9.3.5, syndrome table 42)
f.aeth_syndrome = ProtoField.uint8("rocewan.aeth.syndrome", "Syndrome", base.HEX)
f.aeth_type = ProtoField.uint8("rocewan.aeth.type", "Syndrome type", base.DEC, AETH_TYPES, 0x60)
f.aeth_value = ProtoField.uint8("rocewan.aeth.value", "Credit / timer / NAK code", base.DEC, nil, 0x1f)
f.aeth_msn = ProtoField.uint24("rocewan.aeth.msn", "Message Sequence Number", base.DEC)
-- NTETH (docs/wire.md)
f.nteth_run = ProtoField.uint8("rocewan.nteth.run", "Run (PSNs right before it)", base.DEC)
f.nteth_psn = ProtoField.uint24("rocewan.nteth.psn", "PSN", base.DEC)
-- RETH (IBTA 9.3.3)
f.reth_va = ProtoField.uint64("rocewan.reth.va", "Virtual Address", base.HEX)
f.reth_rkey = ProtoField.uint32("rocewan.reth.rkey", "R_Key", base.HEX)
f.reth_dmalen = ProtoField.uint32("rocewan.reth.dmalen", "DMA Length", base.DEC)
-- SPETH (docs/wire.md)
f.speth_wqe_seq = ProtoField.uint32("rocewan.speth.wqe_seq", "Receive WQE sequence number", base.DEC)
f.speth_offset = ProtoField.uint32("rocewan.speth.offset", "Byte offset in the message", base.DEC)
-- ImmDt (IBTA 9.3.6)
f.immdt_imm = ProtoField.uint32("rocewan.immdt.imm", "Immediate Data", base.HEX)
-- FRH (docs/wire.md "FEC repair and negotiation")
f.frh_type = ProtoField.uint8("rocewan.frh.type", "Type", base.DEC, FRH_TYPES)
f.frh_flags = ProtoField.uint8("rocewan.frh.flags", "Flags", base.HEX)
f.frh_flags_rsvd = ProtoField.uint8("rocewan.frh.flags_rsvd", "Reserved flag bits", base.HEX, nil, 0xfe)
f.frh_stream = ProtoField.uint8("rocewan.frh.stream", "Stream (0 requests, 1 READ responses)", base.DEC, nil, 0x01)
f.frh_mode = ProtoField.uint8("rocewan.frh.mode", "Mode", base.DEC, FRH_MODES)
f.frh_k = ProtoField.uint8("rocewan.frh.k", "K (data frames per block)", base.DEC)
f.frh_d = ProtoField.uint8("rocewan.frh.d", "D (interleaving depth)", base.DEC)
f.frh_r = ProtoField.uint8("rocewan.frh.r", "R (repairs per block)", base.DEC)
f.frh_row = ProtoField.uint8("rocewan.frh.row", "Row", base.DEC)
f.frh_rsvd7 = ProtoField.uint8("rocewan.frh.rsvd7", "Reserved", base.HEX)
f.frh_len_code = ProtoField.uint16("rocewan.frh.len_code", "Length code", base.HEX)
f.frh_rsvd10 = ProtoField.uint16("rocewan.frh.rsvd10", "Reserved", base.HEX)
f.frh_block_id = ProtoField.uint32("rocewan.frh.block_id", "Block id", base.DEC)
f.frh_rsvd16 = ProtoField.uint8("rocewan.frh.rsvd16", "Reserved", base.HEX)
f.frh_anchor = ProtoField.uint24("rocewan.frh.anchor", "Anchor PSN", base.DEC)
f.frh_mask = ProtoField.uint64("rocewan.frh.mask", "Cover mask", base.HEX)
f.frh_member = ProtoField.uint24("rocewan.frh.member_psn", "Covered member PSN", base.DEC)
-- VTETH (docs/wire.md "VRP tolerance per work request")
f.vteth_flags = ProtoField.uint8("rocewan.vteth.flags", "Flags", base.HEX)
f.vteth_flag_loss = ProtoField.uint8("rocewan.vteth.flags.loss", "LOSS (loss_bp set)", base.DEC, nil, 0x01)
f.vteth_flag_window = ProtoField.uint8("rocewan.vteth.flags.window", "WINDOW (window set)", base.DEC, nil, 0x02)
f.vteth_flag_burst = ProtoField.uint8("rocewan.vteth.flags.burst", "BURST (max_burst set)", base.DEC, nil, 0x04)
f.vteth_n_crit = ProtoField.uint8("rocewan.vteth.n_crit", "Critical ranges used", base.DEC)
f.vteth_loss_bp = ProtoField.uint16("rocewan.vteth.loss_bp", "Tolerated loss (basis points)", base.DEC)
f.vteth_window = ProtoField.uint16("rocewan.vteth.window", "Window (packets, 0 = 64)", base.DEC)
f.vteth_reserved = ProtoField.uint16("rocewan.vteth.reserved", "Reserved", base.HEX)
f.vteth_max_burst = ProtoField.uint32("rocewan.vteth.max_burst", "Max burst (bytes)", base.DEC)
for i = 0, 3 do
	f["vteth_crit" .. i .. "_off"] = ProtoField.uint32("rocewan.vteth.crit" .. i .. "_off",
		"Critical range " .. i .. " offset", base.DEC)
	f["vteth_crit" .. i .. "_len"] = ProtoField.uint32("rocewan.vteth.crit" .. i .. "_len",
		"Critical range " .. i .. " length", base.DEC)
end
-- VLETH (docs/wire.md "VRP loss summary to the requester")
f.vleth_len = ProtoField.uint32("rocewan.vleth.len", "Message length", base.DEC)
f.vleth_lost_pkts = ProtoField.uint32("rocewan.vleth.lost_pkts", "Packets given up", base.DEC)
f.vleth_lost_bytes = ProtoField.uint32("rocewan.vleth.lost_bytes", "Bytes zero-filled", base.DEC)
f.vleth_n_holes = ProtoField.uint8("rocewan.vleth.n_holes", "Holes used", base.DEC)
f.vleth_flags = ProtoField.uint8("rocewan.vleth.flags", "Flags (bit 0 TRUNC)", base.HEX)
f.vleth_reserved = ProtoField.uint16("rocewan.vleth.reserved", "Reserved", base.HEX)
for i = 0, 7 do
	f["vleth_hole" .. i .. "_off"] = ProtoField.uint32("rocewan.vleth.hole" .. i .. "_off",
		"Hole " .. i .. " offset", base.DEC)
	f["vleth_hole" .. i .. "_len"] = ProtoField.uint32("rocewan.vleth.hole" .. i .. "_len",
		"Hole " .. i .. " length", base.DEC)
end
-- payload, pad, ICRC
f.payload = ProtoField.bytes("rocewan.payload", "Payload")
f.payload_len = ProtoField.uint32("rocewan.payload_len", "Payload length (without pad)", base.DEC)
f.pad = ProtoField.bytes("rocewan.pad", "Pad")
f.icrc = ProtoField.uint32("rocewan.icrc", "Invariant CRC (stored LSB first)", base.HEX)
-- capability record (docs/perftest-exchange.md)
local RECOVERY_NAMES = { [0] = "gbn", "gbone", "irn", "vrp" }
local CC_NAMES = { [0] = "none", "dcqcn", "dcqcn-p", "dctcp", "timely" }
local REQ_NAMES_RECOVERY = { [15] = "no request" }
local REQ_NAMES_CC = { [15] = "no request" }
for i, n in pairs(RECOVERY_NAMES) do
	REQ_NAMES_RECOVERY[i] = n
end
for i, n in pairs(CC_NAMES) do
	REQ_NAMES_CC[i] = n
end
f.caps_version = ProtoField.string("rocewan.caps.version", "Version string")
f.caps_present = ProtoField.uint8("rocewan.caps.present", "Capability record present", base.DEC)
f.caps_magic = ProtoField.string("rocewan.caps.magic", "Magic")
f.caps_rec_version = ProtoField.uint8("rocewan.caps.rec_version", "Record version", base.DEC)
f.caps_recovery = ProtoField.uint8("rocewan.caps.recovery", "Recovery modes supported", base.HEX)
for i = 0, 3 do
	f["caps_rec_" .. RECOVERY_NAMES[i]] = ProtoField.uint8("rocewan.caps.recovery." .. RECOVERY_NAMES[i],
		RECOVERY_NAMES[i], base.DEC, nil, 2 ^ i)
end
f.caps_req_recovery = ProtoField.uint8("rocewan.caps.req_recovery", "Requested recovery", base.DEC,
	REQ_NAMES_RECOVERY, 0x0f)
f.caps_req_cc = ProtoField.uint8("rocewan.caps.req_cc", "Requested CC", base.DEC, REQ_NAMES_CC, 0xf0)
f.caps_cc = ProtoField.uint8("rocewan.caps.cc", "Congestion controls supported", base.HEX)
for i = 0, 4 do
	local n = CC_NAMES[i]
	f["caps_cc_" .. n] = ProtoField.uint8("rocewan.caps.cc." .. n:gsub("-", "_"), n, base.DEC, nil, 2 ^ i)
end
f.caps_fec = ProtoField.uint8("rocewan.caps.fec", "FEC schemes (bit 0 fec)", base.HEX)
f.caps_vrp = ProtoField.uint8("rocewan.caps.vrp", "VRP variants", base.HEX)
f.caps_params = ProtoField.uint16("rocewan.caps.params", "Parameters (reserved)", base.HEX)
f.caps_checksum = ProtoField.uint8("rocewan.caps.checksum", "Checksum", base.HEX)
f.caps_sum = ProtoField.uint8("rocewan.caps.sum", "Sum of bytes 5-15 (mod 256)", base.HEX)

local fields = {}
for _, v in pairs(f) do
	fields[#fields + 1] = v
end
rw.fields = fields

local ef = {
	trunc = ProtoExpert.new("rocewan.truncated", "Frame ends inside a rocewan header", expert.group.MALFORMED,
		expert.severity.ERROR),
	reserved_op = ProtoExpert.new("rocewan.reserved_opcode", "Manufacturer-specific opcode not in rocewan's registry",
		expert.group.UNDECODED, expert.severity.WARN),
	tver = ProtoExpert.new("rocewan.bad_tver", "BTH TVer is not 0", expert.group.PROTOCOL, expert.severity.WARN),
	payload = ProtoExpert.new("rocewan.payload_not_allowed", "Payload on an opcode that carries none",
		expert.group.PROTOCOL, expert.severity.WARN),
	pad = ProtoExpert.new("rocewan.bad_pad", "Pad count larger than the payload", expert.group.PROTOCOL,
		expert.severity.WARN),
	caps_sum = ProtoExpert.new("rocewan.caps.bad_checksum", "Capability record: bytes 5-15 do not sum to 0",
		expert.group.CHECKSUM, expert.severity.WARN),
	caps_pad = ProtoExpert.new("rocewan.caps.bad_padding",
		"Non-zero padding in the version message and no capability record", expert.group.PROTOCOL,
		expert.severity.WARN),
	caps_ver = ProtoExpert.new("rocewan.caps.bad_version", "Capability record version 0", expert.group.PROTOCOL,
		expert.severity.WARN),
}
rw.experts = { ef.trunc, ef.reserved_op, ef.tver, ef.payload, ef.pad, ef.caps_sum, ef.caps_pad, ef.caps_ver }

local function add(tree, field, range)
	return tree:add(field, range)
end

-- Each header: (subtree, tvb range of exactly EXT_LEN bytes) -> text for the Info column or nil.
local HDR = {}

function HDR.aeth(t, r)
	local it = t:add(f.aeth_syndrome, r(0, 1))
	it:add(f.aeth_type, r(0, 1))
	it:add(f.aeth_value, r(0, 1))
	add(t, f.aeth_msn, r(1, 3))
	return string.format("MSN=%d", r(1, 3):uint())
end

function HDR.nteth(t, r)
	add(t, f.nteth_run, r(0, 1))
	add(t, f.nteth_psn, r(1, 3))
	return string.format("notice PSN=%d run=%d", r(1, 3):uint(), r(0, 1):uint())
end

function HDR.reth(t, r)
	add(t, f.reth_va, r(0, 8))
	add(t, f.reth_rkey, r(8, 4))
	add(t, f.reth_dmalen, r(12, 4))
	return string.format("VA=0x%s dmalen=%d", r(0, 8):uint64():tohex(), r(12, 4):uint())
end

function HDR.speth(t, r)
	add(t, f.speth_wqe_seq, r(0, 4))
	add(t, f.speth_offset, r(4, 4))
	return string.format("WQE=%d off=%d", r(0, 4):uint(), r(4, 4):uint())
end

function HDR.immdt(t, r)
	add(t, f.immdt_imm, r(0, 4))
	return nil
end

function HDR.frh(t, r, bth_psn)
	add(t, f.frh_type, r(0, 1))
	local fl = t:add(f.frh_flags, r(1, 1))
	fl:add(f.frh_flags_rsvd, r(1, 1))
	fl:add(f.frh_stream, r(1, 1))
	add(t, f.frh_mode, r(2, 1))
	add(t, f.frh_k, r(3, 1))
	add(t, f.frh_d, r(4, 1))
	add(t, f.frh_r, r(5, 1))
	add(t, f.frh_row, r(6, 1))
	add(t, f.frh_rsvd7, r(7, 1))
	add(t, f.frh_len_code, r(8, 2))
	add(t, f.frh_rsvd10, r(10, 2))
	add(t, f.frh_block_id, r(12, 4))
	add(t, f.frh_rsvd16, r(16, 1))
	add(t, f.frh_anchor, r(17, 3))
	local mi = t:add(f.frh_mask, r(20, 8))
	-- covered members: bit i is the data frame at PSN = BTH PSN + i * D
	local d = r(4, 1):uint()
	local hi, lo = r(20, 4):uint(), r(24, 4):uint()
	local n = 0
	for i = 0, 63 do
		local word, bit = lo, i
		if i >= 32 then
			word, bit = hi, i - 32
		end
		if math.floor(word / 2 ^ bit) % 2 == 1 then
			n = n + 1
			local member = mi:add(f.frh_member, r(20, 8), (bth_psn + i * d) % 0x1000000)
			member:set_generated()
		end
	end
	local ty = FRH_TYPES[r(0, 1):uint()] or "?"
	return string.format("FRH %s K=%d D=%d R=%d row=%d block=%d members=%d", ty, r(3, 1):uint(), d,
		r(5, 1):uint(), r(6, 1):uint(), r(12, 4):uint(), n)
end

function HDR.vteth(t, r)
	local fl = t:add(f.vteth_flags, r(0, 1))
	fl:add(f.vteth_flag_loss, r(0, 1))
	fl:add(f.vteth_flag_window, r(0, 1))
	fl:add(f.vteth_flag_burst, r(0, 1))
	add(t, f.vteth_n_crit, r(1, 1))
	add(t, f.vteth_loss_bp, r(2, 2))
	add(t, f.vteth_window, r(4, 2))
	add(t, f.vteth_reserved, r(6, 2))
	add(t, f.vteth_max_burst, r(8, 4))
	for i = 0, 3 do
		add(t, f["vteth_crit" .. i .. "_off"], r(12 + 8 * i, 4))
		add(t, f["vteth_crit" .. i .. "_len"], r(16 + 8 * i, 4))
	end
	return string.format("tolerance %d bp crit=%d", r(2, 2):uint(), r(1, 1):uint())
end

function HDR.vleth(t, r)
	add(t, f.vleth_len, r(0, 4))
	add(t, f.vleth_lost_pkts, r(4, 4))
	add(t, f.vleth_lost_bytes, r(8, 4))
	add(t, f.vleth_n_holes, r(12, 1))
	add(t, f.vleth_flags, r(13, 1))
	add(t, f.vleth_reserved, r(14, 2))
	for i = 0, 7 do
		add(t, f["vleth_hole" .. i .. "_off"], r(16 + 8 * i, 4))
		add(t, f["vleth_hole" .. i .. "_len"], r(20 + 8 * i, 4))
	end
	return string.format("lost %d pkts %d B holes=%d", r(4, 4):uint(), r(8, 4):uint(), r(12, 1):uint())
end

local function dissect_ext(tvb, pinfo, tree)
	local len = tvb:len()
	local opcode = tvb(0, 1):uint()
	local op = OPS[opcode]
	pinfo.cols.protocol = "rocewan"
	local root = tree:add(rw, tvb(), "rocewan RoCEv2 extension: " .. (op and op[1] or "reserved opcode"))

	if len < 12 then
		local bt = root:add(f.bth, tvb())
		bt:add(f.opcode, tvb(0, 1))
		bt:add_proto_expert_info(ef.trunc, "Frame ends inside the BTH (" .. len .. " of 12 bytes)")
		pinfo.cols.info = string.format("%s (truncated BTH)", op and op[1] or string.format("0x%02x", opcode))
		return len
	end

	local bt = root:add(f.bth, tvb(0, 12))
	bt:set_text("Base Transport Header")
	bt:add(f.opcode, tvb(0, 1))
	bt:add(f.solicited, tvb(1, 1))
	bt:add(f.migreq, tvb(1, 1))
	bt:add(f.padcount, tvb(1, 1))
	local tv = bt:add(f.version, tvb(1, 1))
	bt:add(f.pkey, tvb(2, 2))
	bt:add(f.fecn, tvb(4, 1))
	bt:add(f.becn, tvb(4, 1))
	bt:add(f.resv6, tvb(4, 1))
	bt:add(f.dqpn, tvb(5, 3))
	bt:add(f.ackreq, tvb(8, 1))
	bt:add(f.resv7, tvb(8, 1))
	bt:add(f.psn, tvb(9, 3))
	if tvb(1, 1):uint() % 16 ~= 0 then
		tv:add_proto_expert_info(ef.tver)
	end
	local pad = math.floor(tvb(1, 1):uint() / 16) % 4
	local dqpn, psn = tvb(5, 3):uint(), tvb(9, 3):uint()
	local info = { string.format("%s QP=0x%06x PSN=%d", op and op[1] or string.format("opcode 0x%02x", opcode),
		dqpn, psn) }

	if op == nil then
		root:add_proto_expert_info(ef.reserved_op, string.format(
			"Opcode 0x%02x is reserved in rocewan's registry (docs/wire.md)", opcode))
		pinfo.cols.info = table.concat(info, " ")
		return len
	end

	local off = 12
	for _, name in ipairs(op[2]) do
		local hl = EXT_LEN[name]
		if off + hl > len then
			local st = root:add(rw, tvb(off, len - off), EXT_TITLE[name])
			st:add_proto_expert_info(ef.trunc, string.format("Frame ends inside the %s (%d of %d bytes)",
				name:upper(), len - off, hl))
			pinfo.cols.info = table.concat(info, " ") .. " [truncated]"
			return len
		end
		local st = root:add(rw, tvb(off, hl), EXT_TITLE[name])
		local txt = HDR[name](st, tvb(off, hl), psn)
		if txt then
			info[#info + 1] = txt
		end
		off = off + hl
	end

	if len - off < 4 then
		local it = root:add(rw, tvb(off, len - off), "ICRC (truncated)")
		it:add_proto_expert_info(ef.trunc, string.format("Frame ends inside the ICRC (%d of 4 bytes)", len - off))
		pinfo.cols.info = table.concat(info, " ") .. " [truncated]"
		return len
	end
	local body = len - off - 4
	if body > 0 then
		local pl = root:add(f.payload, tvb(off, body))
		if not op[3] then
			pl:add_proto_expert_info(ef.payload)
		end
		if pad > body then
			pl:add_proto_expert_info(ef.pad)
			pad = body
		end
		root:add(f.payload_len, tvb(off, body), body - pad):set_generated()
		if pad > 0 then
			root:add(f.pad, tvb(off + body - pad, pad))
		end
		info[#info + 1] = string.format("len=%d", body - pad)
	else
		if pad > 0 then
			bt:add_proto_expert_info(ef.pad)
		end
		root:add(f.payload_len, tvb(off, 0), 0):set_generated()
	end
	root:add_le(f.icrc, tvb(len - 4, 4))
	pinfo.cols.info = table.concat(info, " ")
	return len
end

local ib_handle = nil

function rw.dissector(tvb, pinfo, tree)
	if tvb:len() >= 1 and tvb(0, 1):uint() >= 0xC0 then
		return dissect_ext(tvb, pinfo, tree)
	end
	if ib_handle == nil then
		return 0
	end
	-- a frame too short for the standard dissector ends it with an exception,
	-- which Lua would report as its own error: report it as a truncated frame
	local ok, n = pcall(function()
		return ib_handle:call(tvb, pinfo, tree)
	end)
	if ok then
		return n
	end
	local it = tree:add(rw, tvb(), "rocewan: frame too short for the InfiniBand dissector")
	it:add_proto_expert_info(ef.trunc, string.format("Frame ends inside the BTH or its headers (%d bytes)",
		tvb:len()))
	return tvb:len()
end

-- The capability record in perftest's version message (16 bytes, TCP 18515)
local function looks_like_version(tvb)
	if tvb:len() ~= 16 then
		return false
	end
	-- "D.DD" or longer: perftest's VERSION, NUL-terminated within the 16 bytes
	local s = tvb(0, 4):string()
	return s:match("^%d+%.%d+$") ~= nil or s:match("^%d%.%d%d$") ~= nil
end

local function dissect_caps(tvb, pinfo, tree)
	local root = tree:add(rw, tvb(), "rocewan: perftest version message")
	local vs = tvb(0, 16):stringz()
	root:add(f.caps_version, tvb(0, #vs), vs)
	local present = tvb(4, 1):uint() == 0 and tvb(5, 2):string() == "rw"
	local zero = true
	for i = #vs, 15 do
		if tvb(i, 1):uint() ~= 0 then
			zero = false
		end
	end
	root:add(f.caps_present, tvb(5, 2), present and 1 or 0):set_generated()
	if not present then
		if not zero then
			root:add_proto_expert_info(ef.caps_pad)
			pinfo.cols.info:append(" [perftest version: non-zero padding, no capability record]")
		else
			pinfo.cols.info:append(" [perftest version " .. vs .. ", no capability record]")
		end
		return 16
	end
	local r = tvb(5, 11)
	local rec = root:add(rw, r, "Capability record")
	rec:add(f.caps_magic, r(0, 2))
	local rv = rec:add(f.caps_rec_version, r(2, 1))
	if r(2, 1):uint() == 0 then
		rv:add_proto_expert_info(ef.caps_ver)
	end
	local rb = rec:add(f.caps_recovery, r(3, 1))
	for i = 0, 3 do
		rb:add(f["caps_rec_" .. RECOVERY_NAMES[i]], r(3, 1))
	end
	rec:add(f.caps_req_recovery, r(4, 1))
	rec:add(f.caps_req_cc, r(4, 1))
	local cb = rec:add(f.caps_cc, r(5, 1))
	for i = 0, 4 do
		cb:add(f["caps_cc_" .. CC_NAMES[i]], r(5, 1))
	end
	rec:add(f.caps_fec, r(6, 1))
	rec:add(f.caps_vrp, r(7, 1))
	rec:add(f.caps_params, r(8, 2))
	rec:add(f.caps_checksum, r(10, 1))
	local sum = 0
	for i = 0, 10 do
		sum = sum + r(i, 1):uint()
	end
	sum = sum % 256
	local si = rec:add(f.caps_sum, r, sum)
	si:set_generated()
	if sum ~= 0 then
		si:add_proto_expert_info(ef.caps_sum, string.format("Capability record: bytes 5-15 sum to 0x%02x, expected 0",
			sum))
	end
	local req = r(4, 1):uint()
	local rq = REQ_NAMES_RECOVERY[req % 16] or tostring(req % 16)
	local cq = REQ_NAMES_CC[math.floor(req / 16)] or tostring(math.floor(req / 16))
	pinfo.cols.protocol = "rocewan"
	pinfo.cols.info:append(string.format(" [perftest version %s, capability record v%d: recovery 0x%02x asks %s, cc 0x%02x asks %s, fec 0x%02x]",
		vs, r(2, 1):uint(), r(3, 1):uint(), rq, r(5, 1):uint(), cq, r(6, 1):uint()))
	return 16
end

local function caps_heur(tvb, pinfo, tree)
	if pinfo.src_port ~= PERFTEST_PORT and pinfo.dst_port ~= PERFTEST_PORT then
		return false
	end
	if not looks_like_version(tvb) then
		return false
	end
	dissect_caps(tvb, pinfo, tree)
	return true
end

-- Take over UDP 4791, keeping the dissector that was there (Wireshark's
-- InfiniBand RRoCE one) for the standard opcodes.
local udp_table = DissectorTable.get("udp.port")
ib_handle = udp_table:get_dissector(ROCE_PORT) or Dissector.get("infiniband")
udp_table:add(ROCE_PORT, rw)
rw:register_heuristic("tcp", caps_heur)
