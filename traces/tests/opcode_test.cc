// The opcode table against WIRE.md (and the IBA for UC and the invalidate opcodes): for each
// opcode its headers in wire order, their offsets, whether it has a payload, its name; and the
// (transport, op, position, immediate) -> opcode lookup the simulated NIC uses.
#include "traces/tests/test_util.h"

#include <map>

namespace {

struct Expect {
  uint8_t opcode;
  const char* name;
  std::vector<tr_hdr> hdrs;  // in wire order
  bool payload;
  tr_transport transport;
  tr_op op;
  tr_pos pos;
};

const std::vector<Expect>& Table() {
  using H = tr_hdr;
  static const std::vector<Expect> t = {
      {0x00, "RC SEND_FIRST", {}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_FIRST},
      {0x01, "RC SEND_MIDDLE", {}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_MIDDLE},
      {0x02, "RC SEND_LAST", {}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_LAST},
      {0x03, "RC SEND_LAST_WITH_IMMEDIATE", {H::TR_HDR_IMMDT}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_LAST},
      {0x04, "RC SEND_ONLY", {}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_ONLY},
      {0x05, "RC SEND_ONLY_WITH_IMMEDIATE", {H::TR_HDR_IMMDT}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_ONLY},
      {0x06, "RC RDMA_WRITE_FIRST", {H::TR_HDR_RETH}, true, TR_TRANSPORT_RC, TR_OP_WRITE, TR_POS_FIRST},
      {0x07, "RC RDMA_WRITE_MIDDLE", {}, true, TR_TRANSPORT_RC, TR_OP_WRITE, TR_POS_MIDDLE},
      {0x08, "RC RDMA_WRITE_LAST", {}, true, TR_TRANSPORT_RC, TR_OP_WRITE, TR_POS_LAST},
      {0x09, "RC RDMA_WRITE_LAST_WITH_IMMEDIATE", {H::TR_HDR_IMMDT}, true, TR_TRANSPORT_RC, TR_OP_WRITE, TR_POS_LAST},
      {0x0A, "RC RDMA_WRITE_ONLY", {H::TR_HDR_RETH}, true, TR_TRANSPORT_RC, TR_OP_WRITE, TR_POS_ONLY},
      {0x0B, "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", {H::TR_HDR_RETH, H::TR_HDR_IMMDT}, true, TR_TRANSPORT_RC, TR_OP_WRITE, TR_POS_ONLY},
      {0x0C, "RC RDMA_READ_REQUEST", {H::TR_HDR_RETH}, false, TR_TRANSPORT_RC, TR_OP_READ_REQUEST, TR_POS_ONLY},
      {0x0D, "RC RDMA_READ_RESPONSE_FIRST", {H::TR_HDR_AETH}, true, TR_TRANSPORT_RC, TR_OP_READ_RESPONSE, TR_POS_FIRST},
      {0x0E, "RC RDMA_READ_RESPONSE_MIDDLE", {}, true, TR_TRANSPORT_RC, TR_OP_READ_RESPONSE, TR_POS_MIDDLE},
      {0x0F, "RC RDMA_READ_RESPONSE_LAST", {H::TR_HDR_AETH}, true, TR_TRANSPORT_RC, TR_OP_READ_RESPONSE, TR_POS_LAST},
      {0x10, "RC RDMA_READ_RESPONSE_ONLY", {H::TR_HDR_AETH}, true, TR_TRANSPORT_RC, TR_OP_READ_RESPONSE, TR_POS_ONLY},
      {0x11, "RC ACKNOWLEDGE", {H::TR_HDR_AETH}, false, TR_TRANSPORT_RC, TR_OP_ACK, TR_POS_ONLY},
      {0x12, "RC ATOMIC_ACKNOWLEDGE", {H::TR_HDR_AETH, H::TR_HDR_ATOMICACKETH}, false, TR_TRANSPORT_RC, TR_OP_ATOMIC_ACK, TR_POS_ONLY},
      {0x13, "RC COMPARE_SWAP", {H::TR_HDR_ATOMICETH}, false, TR_TRANSPORT_RC, TR_OP_COMPARE_SWAP, TR_POS_ONLY},
      {0x14, "RC FETCH_ADD", {H::TR_HDR_ATOMICETH}, false, TR_TRANSPORT_RC, TR_OP_FETCH_ADD, TR_POS_ONLY},
      {0x16, "RC SEND_LAST_WITH_INVALIDATE", {H::TR_HDR_IETH}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_LAST},
      {0x17, "RC SEND_ONLY_WITH_INVALIDATE", {H::TR_HDR_IETH}, true, TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_ONLY},
      {0x20, "UC SEND_FIRST", {}, true, TR_TRANSPORT_UC, TR_OP_SEND, TR_POS_FIRST},
      {0x21, "UC SEND_MIDDLE", {}, true, TR_TRANSPORT_UC, TR_OP_SEND, TR_POS_MIDDLE},
      {0x22, "UC SEND_LAST", {}, true, TR_TRANSPORT_UC, TR_OP_SEND, TR_POS_LAST},
      {0x23, "UC SEND_LAST_WITH_IMMEDIATE", {H::TR_HDR_IMMDT}, true, TR_TRANSPORT_UC, TR_OP_SEND, TR_POS_LAST},
      {0x24, "UC SEND_ONLY", {}, true, TR_TRANSPORT_UC, TR_OP_SEND, TR_POS_ONLY},
      {0x25, "UC SEND_ONLY_WITH_IMMEDIATE", {H::TR_HDR_IMMDT}, true, TR_TRANSPORT_UC, TR_OP_SEND, TR_POS_ONLY},
      {0x26, "UC RDMA_WRITE_FIRST", {H::TR_HDR_RETH}, true, TR_TRANSPORT_UC, TR_OP_WRITE, TR_POS_FIRST},
      {0x27, "UC RDMA_WRITE_MIDDLE", {}, true, TR_TRANSPORT_UC, TR_OP_WRITE, TR_POS_MIDDLE},
      {0x28, "UC RDMA_WRITE_LAST", {}, true, TR_TRANSPORT_UC, TR_OP_WRITE, TR_POS_LAST},
      {0x29, "UC RDMA_WRITE_LAST_WITH_IMMEDIATE", {H::TR_HDR_IMMDT}, true, TR_TRANSPORT_UC, TR_OP_WRITE, TR_POS_LAST},
      {0x2A, "UC RDMA_WRITE_ONLY", {H::TR_HDR_RETH}, true, TR_TRANSPORT_UC, TR_OP_WRITE, TR_POS_ONLY},
      {0x2B, "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE", {H::TR_HDR_RETH, H::TR_HDR_IMMDT}, true, TR_TRANSPORT_UC, TR_OP_WRITE, TR_POS_ONLY},
      {0x64, "UD SEND_ONLY", {H::TR_HDR_DETH}, true, TR_TRANSPORT_UD, TR_OP_SEND, TR_POS_ONLY},
      {0x65, "UD SEND_ONLY_WITH_IMMEDIATE", {H::TR_HDR_DETH, H::TR_HDR_IMMDT}, true, TR_TRANSPORT_UD, TR_OP_SEND, TR_POS_ONLY},
      {0x81, "CNP", {H::TR_HDR_CNP}, false, TR_TRANSPORT_CNP, TR_OP_CNP, TR_POS_ONLY},
  };
  return t;
}

TEST(Opcode, EveryEntryHasItsHeadersInWireOrderAtTheRightOffsets) {
  for (const auto& e : Table()) {
    SCOPED_TRACE(e.name);
    const tr_opcode_info* op = tr_opcode(e.opcode);
    ASSERT_NE(nullptr, op);
    EXPECT_STREQ(e.name, op->name);
    EXPECT_STREQ(e.name, tr_opcode_name(e.opcode));
    EXPECT_EQ(e.opcode, op->opcode);
    EXPECT_EQ(e.payload, op->has_payload);
    EXPECT_EQ(e.transport, op->transport);
    EXPECT_EQ(e.op, op->op);
    EXPECT_EQ(e.pos, op->pos);
    unsigned off = TR_BTH_LEN, mask = 0;
    for (tr_hdr h : e.hdrs) {
      EXPECT_EQ(off, op->off[h]) << tr_hdr_name(h);
      off += tr_hdr_len(h);
      mask |= TR_HDR_BIT(h);
    }
    EXPECT_EQ(mask, op->hdrs);
    EXPECT_EQ(off, op->hdr_len);
    EXPECT_EQ(off, tr_opcode_hdr_len(e.opcode));
    for (int h = 0; h < TR_HDR_KINDS; h++)
      if (!(mask & TR_HDR_BIT(h))) {
        EXPECT_EQ(0, op->off[h]) << tr_hdr_name(static_cast<tr_hdr>(h));
      }
  }
}

TEST(Opcode, NothingElseIsKnown) {
  std::map<int, bool> known;
  for (const auto& e : Table()) known[e.opcode] = true;
  for (int op = 0; op < 256; op++) {
    if (known.count(op)) continue;
    EXPECT_EQ(nullptr, tr_opcode(static_cast<uint8_t>(op))) << op;
    EXPECT_STREQ("unknown", tr_opcode_name(static_cast<uint8_t>(op)));
    EXPECT_EQ(0u, tr_opcode_hdr_len(static_cast<uint8_t>(op)));
  }
}

TEST(Opcode, HeaderLengthsAreWiresMd) {
  EXPECT_EQ(16u, tr_hdr_len(TR_HDR_RETH));
  EXPECT_EQ(4u, tr_hdr_len(TR_HDR_AETH));
  EXPECT_EQ(28u, tr_hdr_len(TR_HDR_ATOMICETH));
  EXPECT_EQ(8u, tr_hdr_len(TR_HDR_ATOMICACKETH));
  EXPECT_EQ(8u, tr_hdr_len(TR_HDR_DETH));
  EXPECT_EQ(4u, tr_hdr_len(TR_HDR_IMMDT));
  EXPECT_EQ(4u, tr_hdr_len(TR_HDR_IETH));
  EXPECT_EQ(0u, tr_hdr_len(TR_HDR_KINDS));
  EXPECT_STREQ("AtomicAckETH", tr_hdr_name(TR_HDR_ATOMICACKETH));
}

TEST(Opcode, ForFindsEveryDataOpcodeOfTheTable) {
  for (const auto& e : Table()) {
    bool imm = false, ieth = false;
    for (tr_hdr h : e.hdrs) {
      imm |= h == TR_HDR_IMMDT;
      ieth |= h == TR_HDR_IETH;
    }
    if (ieth) continue;  // invalidate is not a (transport, op, pos, imm) combination
    EXPECT_EQ(e.opcode, tr_opcode_for(e.transport, e.op, e.pos, imm)) << e.name;
  }
}

TEST(Opcode, ForRejectsCombinationsThatDoNotExist) {
  EXPECT_EQ(-EINVAL, tr_opcode_for(TR_TRANSPORT_RC, TR_OP_SEND, TR_POS_FIRST, true));
  EXPECT_EQ(-EINVAL, tr_opcode_for(TR_TRANSPORT_RC, TR_OP_WRITE, TR_POS_MIDDLE, true));
  EXPECT_EQ(-EINVAL, tr_opcode_for(TR_TRANSPORT_RC, TR_OP_READ_REQUEST, TR_POS_ONLY, true));
  EXPECT_EQ(-EINVAL, tr_opcode_for(TR_TRANSPORT_UC, TR_OP_READ_REQUEST, TR_POS_ONLY, false));
  EXPECT_EQ(-EINVAL, tr_opcode_for(TR_TRANSPORT_UD, TR_OP_SEND, TR_POS_FIRST, false));
  EXPECT_EQ(-EINVAL, tr_opcode_for(TR_TRANSPORT_UD, TR_OP_WRITE, TR_POS_ONLY, false));
  EXPECT_EQ(-EINVAL, tr_opcode_for(static_cast<tr_transport>(9), TR_OP_SEND, TR_POS_ONLY, false));
}

TEST(Opcode, ResponsesAreResponses) {
  EXPECT_TRUE(tr_op_is_response(TR_OP_ACK));
  EXPECT_TRUE(tr_op_is_response(TR_OP_ATOMIC_ACK));
  EXPECT_TRUE(tr_op_is_response(TR_OP_READ_RESPONSE));
  EXPECT_FALSE(tr_op_is_response(TR_OP_READ_REQUEST));
  EXPECT_FALSE(tr_op_is_response(TR_OP_SEND));
  EXPECT_STREQ("READ_RESPONSE", tr_op_name(TR_OP_READ_RESPONSE));
  EXPECT_STREQ("UD", tr_transport_name(TR_TRANSPORT_UD));
  EXPECT_STREQ("MIDDLE", tr_pos_name(TR_POS_MIDDLE));
}

}  // namespace
