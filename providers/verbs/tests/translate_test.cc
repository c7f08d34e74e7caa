// The verbs provider's translations, without a device: completion status to
// libfabric codes and text, work completions to every CQ format, device
// attributes to fi_info, access rights, registration modes, connection
// events and private data, and loading rdma-core.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <string>

#include <rdma/fi_errno.h>
#include <rdma/rdma_cma.h>

#include "providers/verbs/vrb_lib.h"
#include "providers/verbs/vrb_translate.h"

namespace {

// ---- Completion status ------------------------------------------------------

TEST(Status, SuccessIsNoError)
{
	EXPECT_EQ(vrb_status_errno(IBV_WC_SUCCESS, false), 0);
	EXPECT_EQ(vrb_status_errno(IBV_WC_SUCCESS, true), 0);
}

TEST(Status, ErrorsMapToTheCodesTheSimProviderUses)
{
	// The same failure reads the same whether the NIC is simulated or not.
	EXPECT_EQ(vrb_status_errno(IBV_WC_LOC_PROT_ERR, false), FI_EACCES);
	EXPECT_EQ(vrb_status_errno(IBV_WC_REM_ACCESS_ERR, false), FI_EACCES);
	EXPECT_EQ(vrb_status_errno(IBV_WC_REM_INV_REQ_ERR, false), FI_EINVAL);
	EXPECT_EQ(vrb_status_errno(IBV_WC_REM_OP_ERR, false), FI_EREMOTEIO);
	EXPECT_EQ(vrb_status_errno(IBV_WC_RETRY_EXC_ERR, false), FI_ETIMEDOUT);
	EXPECT_EQ(vrb_status_errno(IBV_WC_RNR_RETRY_EXC_ERR, false), FI_ENORX);
	EXPECT_EQ(vrb_status_errno(IBV_WC_WR_FLUSH_ERR, true), FI_ECANCELED);
	EXPECT_EQ(vrb_status_errno(IBV_WC_REM_ABORT_ERR, false),
		  FI_ECONNABORTED);
}

TEST(Status, LengthErrorDependsOnTheSide)
{
	EXPECT_EQ(vrb_status_errno(IBV_WC_LOC_LEN_ERR, true), FI_ETRUNC);
	EXPECT_EQ(vrb_status_errno(IBV_WC_LOC_LEN_ERR, false), FI_EMSGSIZE);
}

TEST(Status, EveryFailureIsAnError)
{
	for (int s = IBV_WC_LOC_LEN_ERR; s <= IBV_WC_TM_RNDV_INCOMPLETE; s++) {
		EXPECT_GT(vrb_status_errno((enum ibv_wc_status)s, false), 0)
			<< s;
		EXPECT_GT(vrb_status_errno((enum ibv_wc_status)s, true), 0)
			<< s;
	}
	EXPECT_EQ(vrb_status_errno((enum ibv_wc_status)999, false), FI_EIO);
}

TEST(Status, TextNamesTheStatusAndExplainsIt)
{
	for (int s = IBV_WC_SUCCESS; s <= IBV_WC_TM_RNDV_INCOMPLETE; s++) {
		std::string text = vrb_status_str(s);
		EXPECT_EQ(text.rfind("IBV_WC_", 0), 0u) << s << ": " << text;
		EXPECT_NE(text.find(": "), std::string::npos) << text;
	}
	EXPECT_NE(std::string(vrb_status_str(IBV_WC_REM_ACCESS_ERR))
			  .find("remote key"),
		  std::string::npos);
	EXPECT_EQ(std::string(vrb_status_str(IBV_WC_RNR_RETRY_EXC_ERR))
			  .rfind("IBV_WC_RNR_RETRY_EXC_ERR: ", 0),
		  0u);
	EXPECT_STREQ(vrb_status_str(-1), "unknown verbs completion status");
	EXPECT_STREQ(vrb_status_str(4096), "unknown verbs completion status");
}

// ---- Work completions ---------------------------------------------------------

struct WcTest : ::testing::Test {
	ibv_wc wc{};
	vrb_op_info op{};
	int ctx = 0;
	char buf[64];

	void SetUp() override
	{
		op.context = &ctx;
		op.buf = buf;
	}
};

TEST_F(WcTest, SendSuccessHasSendFlagsAndContext)
{
	vrb_cqe e;

	op.kind = VRB_OP_SEND;
	wc.opcode = IBV_WC_SEND;
	vrb_wc_to_cqe(&wc, &op, &e);
	EXPECT_EQ(e.op_context, &ctx);
	EXPECT_EQ(e.flags, FI_SEND | FI_MSG);
	EXPECT_EQ(e.len, 0u);
	EXPECT_EQ(e.buf, nullptr);
}

TEST_F(WcTest, EachKindReportsItsFlags)
{
	EXPECT_EQ(vrb_op_flags(VRB_OP_WRITE), FI_RMA | FI_WRITE);
	EXPECT_EQ(vrb_op_flags(VRB_OP_READ), FI_RMA | FI_READ);
	EXPECT_EQ(vrb_op_flags(VRB_OP_ATOMIC_WRITE), FI_ATOMIC | FI_WRITE);
	EXPECT_EQ(vrb_op_flags(VRB_OP_ATOMIC_FETCH), FI_ATOMIC | FI_READ);
	EXPECT_EQ(vrb_op_flags(VRB_OP_RECV), FI_RECV | FI_MSG);
	EXPECT_EQ(vrb_op_flags((vrb_op_kind)0), 0u);
}

TEST_F(WcTest, ReceiveCarriesLengthBufferAndImmediateInHostOrder)
{
	vrb_cqe e;

	op.kind = VRB_OP_RECV;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = 42;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(0x11223344);
	vrb_wc_to_cqe(&wc, &op, &e);
	EXPECT_EQ(e.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
	EXPECT_EQ(e.len, 42u);
	EXPECT_EQ(e.buf, buf);
	EXPECT_EQ(e.data, 0x11223344u);
}

TEST_F(WcTest, ReceiveWithoutImmediateHasNoData)
{
	vrb_cqe e;

	op.kind = VRB_OP_RECV;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = 7;
	wc.imm_data = htonl(99); // garbage without IBV_WC_WITH_IMM
	vrb_wc_to_cqe(&wc, &op, &e);
	EXPECT_EQ(e.flags, FI_RECV | FI_MSG);
	EXPECT_EQ(e.data, 0u);
}

TEST_F(WcTest, WriteWithImmediateIsARemoteWriteWithData)
{
	vrb_cqe e;

	op.kind = VRB_OP_RECV;
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	wc.byte_len = 4096;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(7);
	vrb_wc_to_cqe(&wc, &op, &e);
	EXPECT_EQ(e.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	EXPECT_EQ(e.op_context, &ctx); // the receive it consumed
	EXPECT_EQ(e.buf, nullptr);     // nothing landed in that buffer
	EXPECT_EQ(e.len, 4096u);
	EXPECT_EQ(e.data, 7u);
}

TEST_F(WcTest, ErrorTakesFlagsFromTheRecordNotTheOpcode)
{
	fi_cq_err_entry err;

	op.kind = VRB_OP_READ;
	wc.status = IBV_WC_REM_ACCESS_ERR;
	wc.opcode = (ibv_wc_opcode)0x55; // undefined on errors
	vrb_wc_to_err(&wc, &op, &err);
	EXPECT_EQ(err.op_context, &ctx);
	EXPECT_EQ(err.flags, FI_RMA | FI_READ);
	EXPECT_EQ(err.err, FI_EACCES);
	EXPECT_EQ(err.prov_errno, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(err.olen, 0u);
}

TEST_F(WcTest, ReceiveErrorKeepsTheBufferAndTruncates)
{
	fi_cq_err_entry err;

	op.kind = VRB_OP_RECV;
	op.len = 16;
	wc.status = IBV_WC_LOC_LEN_ERR;
	wc.byte_len = 64; // the message's length, when the device says it
	vrb_wc_to_err(&wc, &op, &err);
	EXPECT_EQ(err.flags, FI_RECV | FI_MSG);
	EXPECT_EQ(err.buf, buf);
	EXPECT_EQ(err.err, FI_ETRUNC);
	EXPECT_EQ(err.len, 16u);
	EXPECT_EQ(err.olen, 48u);
	// A device that says nothing: no overflow length to report.
	wc.byte_len = 0;
	vrb_wc_to_err(&wc, &op, &err);
	EXPECT_EQ(err.olen, 0u);
	EXPECT_EQ(err.len, 0u);
}

TEST_F(WcTest, UnsignaledRequestErrorStillSaysWhatFailed)
{
	fi_cq_err_entry err;

	wc.wr_id = vrb_wr_id_unsignaled(VRB_OP_WRITE, 12345);
	EXPECT_FALSE(vrb_wr_id_is_record(wc.wr_id));
	wc.status = IBV_WC_WR_FLUSH_ERR;
	vrb_wc_to_err(&wc, nullptr, &err);
	EXPECT_EQ(err.op_context, nullptr);
	EXPECT_EQ(err.flags, FI_RMA | FI_WRITE);
	EXPECT_EQ(err.err, FI_ECANCELED);
}

TEST_F(WcTest, RecordPointersAreRecognised)
{
	alignas(8) static vrb_op_info record;

	EXPECT_TRUE(vrb_wr_id_is_record((uintptr_t)&record));
	EXPECT_FALSE(vrb_wr_id_is_record(0));
	for (int k = VRB_OP_SEND; k < VRB_OP_KIND_MAX; k++) {
		uint64_t id = vrb_wr_id_unsignaled((vrb_op_kind)k, 1ull << 40);

		EXPECT_FALSE(vrb_wr_id_is_record(id));
		EXPECT_EQ(vrb_wr_id_kind(id), k);
		EXPECT_EQ(vrb_wr_id_sq_pos(id), 1ull << 40);
	}
}

TEST(CqFormat, EveryFormatWritesItsFieldsAndNoMore)
{
	int ctx;
	char data[8];
	vrb_cqe e = { &ctx, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA, 123, data,
		      0xabcdef, 0 };
	unsigned char raw[sizeof(fi_cq_tagged_entry) + 16];

	memset(raw, 0xee, sizeof(raw));
	vrb_cqe_write(FI_CQ_FORMAT_CONTEXT, &e, raw);
	EXPECT_EQ(((fi_cq_entry *)raw)->op_context, &ctx);
	EXPECT_EQ(raw[sizeof(fi_cq_entry)], 0xee);

	memset(raw, 0xee, sizeof(raw));
	vrb_cqe_write(FI_CQ_FORMAT_MSG, &e, raw);
	auto *m = (fi_cq_msg_entry *)raw;
	EXPECT_EQ(m->op_context, &ctx);
	EXPECT_EQ(m->flags, e.flags);
	EXPECT_EQ(m->len, 123u);
	EXPECT_EQ(raw[sizeof(fi_cq_msg_entry)], 0xee);

	memset(raw, 0xee, sizeof(raw));
	vrb_cqe_write(FI_CQ_FORMAT_DATA, &e, raw);
	auto *d = (fi_cq_data_entry *)raw;
	EXPECT_EQ(d->buf, data);
	EXPECT_EQ(d->data, 0xabcdefu);
	EXPECT_EQ(raw[sizeof(fi_cq_data_entry)], 0xee);

	memset(raw, 0xee, sizeof(raw));
	vrb_cqe_write(FI_CQ_FORMAT_TAGGED, &e, raw);
	auto *t = (fi_cq_tagged_entry *)raw;
	EXPECT_EQ(t->data, 0xabcdefu);
	EXPECT_EQ(t->tag, 0u);
	EXPECT_EQ(raw[sizeof(fi_cq_tagged_entry)], 0xee);
}

// ---- Attributes -----------------------------------------------------------------

vrb_device_desc Device(ibv_atomic_cap atomics = IBV_ATOMIC_HCA)
{
	vrb_device_desc d{};

	d.name = "fabsim0";
	d.dev.max_qp_wr = 4096;
	d.dev.max_sge = 4;
	d.dev.max_cq = 512;
	d.dev.max_qp = 1000;
	d.dev.max_mr = 2048;
	d.dev.atomic_cap = atomics;
	d.port.max_msg_sz = 1u << 31;
	d.port.state = IBV_PORT_ACTIVE;
	d.port_num = 1;
	d.gid0.raw[0] = 0xfe;
	d.gid0.raw[1] = 0x80;
	d.inline_max = 64;
	return d;
}

TEST(Attr, MtuEnumToBytes)
{
	EXPECT_EQ(vrb_mtu_bytes(IBV_MTU_256), 256u);
	EXPECT_EQ(vrb_mtu_bytes(IBV_MTU_1024), 1024u);
	EXPECT_EQ(vrb_mtu_bytes(IBV_MTU_4096), 4096u);
	EXPECT_EQ(vrb_mtu_bytes((ibv_mtu)0), 0u);
	EXPECT_EQ(vrb_mtu_bytes((ibv_mtu)6), 0u);
}

TEST(Attr, FabricNameIsTheSubnetPrefix)
{
	vrb_device_desc d = Device();
	char name[32];

	vrb_fabric_name(&d.gid0, name, sizeof(name));
	EXPECT_STREQ(name, "IB-0xfe80000000000000");
}

TEST(Attr, Ipv4ComesFromARoceV2Gid)
{
	ibv_gid gid{};
	in_addr ip{};

	EXPECT_FALSE(vrb_gid_ipv4(&gid, &ip)); // all zero
	gid.raw[10] = gid.raw[11] = 0xff;
	gid.raw[12] = 10;
	gid.raw[15] = 7;
	ASSERT_TRUE(vrb_gid_ipv4(&gid, &ip));
	EXPECT_EQ(ntohl(ip.s_addr), 0x0a000007u);
	gid.raw[0] = 0xfe; // a link-local GID is not an IPv4 address
	EXPECT_FALSE(vrb_gid_ipv4(&gid, &ip));
}

struct InfoTest : ::testing::Test {
	fi_info *info = fi_allocinfo();
	void TearDown() override { fi_freeinfo(info); }
};

TEST_F(InfoTest, MsgOfferCarriesTheDeviceLimits)
{
	vrb_device_desc d = Device();

	ASSERT_EQ(vrb_msg_info_fill(&d, true, info), 0);
	EXPECT_EQ(info->ep_attr->type, FI_EP_MSG);
	EXPECT_EQ(info->ep_attr->protocol, (uint32_t)FI_PROTO_RDMA_CM_IB_RC);
	EXPECT_EQ(info->ep_attr->max_msg_size, 1u << 31);
	EXPECT_EQ(info->tx_attr->size, 4096u);
	EXPECT_EQ(info->rx_attr->size, 4096u);
	EXPECT_EQ(info->tx_attr->iov_limit, 4u);
	EXPECT_EQ(info->rx_attr->iov_limit, 4u);
	EXPECT_EQ(info->tx_attr->rma_iov_limit, 1u);
	EXPECT_EQ(info->tx_attr->inject_size, 64u);
	EXPECT_EQ(info->domain_attr->cq_cnt, 512u);
	EXPECT_EQ(info->domain_attr->ep_cnt, 1000u);
	EXPECT_EQ(info->domain_attr->mr_cnt, 2048u);
	EXPECT_EQ(info->domain_attr->mr_key_size, 4u);
	EXPECT_EQ(info->domain_attr->mr_mode, VRB_MR_MODE);
	EXPECT_EQ(info->domain_attr->resource_mgmt, FI_RM_ENABLED);
	EXPECT_EQ(info->domain_attr->cntr_cnt, 0u);
	EXPECT_STREQ(info->domain_attr->name, "fabsim0");
	EXPECT_STREQ(info->fabric_attr->name, "IB-0xfe80000000000000");
	EXPECT_EQ(info->addr_format, (uint32_t)FI_SOCKADDR_IN);
	EXPECT_TRUE(info->caps & FI_ATOMIC);
	EXPECT_TRUE(info->caps & FI_RMA);
	EXPECT_FALSE(info->caps & FI_TAGGED);
	EXPECT_EQ(info->tx_attr->comp_order, FI_ORDER_STRICT);
}

TEST_F(InfoTest, RemoteCqDataRequiresRxCqDataMode)
{
	vrb_device_desc d = Device();

	ASSERT_EQ(vrb_msg_info_fill(&d, true, info), 0);
	EXPECT_EQ(info->domain_attr->cq_data_size, 4u);
	EXPECT_EQ(info->mode & FI_RX_CQ_DATA, FI_RX_CQ_DATA);
	EXPECT_EQ(info->rx_attr->mode & FI_RX_CQ_DATA, FI_RX_CQ_DATA);
	ASSERT_EQ(vrb_msg_info_fill(&d, false, info), 0);
	EXPECT_EQ(info->domain_attr->cq_data_size, 0u);
	EXPECT_EQ(info->mode, 0u);
	EXPECT_EQ(info->rx_attr->mode, 0u);
}

TEST_F(InfoTest, NoAtomicsWithoutDeviceSupport)
{
	vrb_device_desc d = Device(IBV_ATOMIC_NONE);

	ASSERT_EQ(vrb_msg_info_fill(&d, true, info), 0);
	EXPECT_FALSE(info->caps & FI_ATOMIC);
	EXPECT_FALSE(info->tx_attr->caps & FI_ATOMIC);
	EXPECT_FALSE(info->rx_attr->caps & FI_ATOMIC);
}

// ---- Access and modes ------------------------------------------------------------------

TEST(Access, NoneMeansAll)
{
	EXPECT_EQ(vrb_ibv_access(0),
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
}

TEST(Access, SendOnlyNeedsNothingFromTheDevice)
{
	EXPECT_EQ(vrb_ibv_access(FI_SEND), 0);
	EXPECT_EQ(vrb_ibv_access(FI_WRITE), 0);
}

TEST(Access, BuffersTheDeviceWritesNeedLocalWrite)
{
	EXPECT_EQ(vrb_ibv_access(FI_RECV), IBV_ACCESS_LOCAL_WRITE);
	EXPECT_EQ(vrb_ibv_access(FI_READ), IBV_ACCESS_LOCAL_WRITE);
}

TEST(Access, RemoteRights)
{
	EXPECT_EQ(vrb_ibv_access(FI_REMOTE_READ), IBV_ACCESS_REMOTE_READ);
	// Remote writes (and atomics, which ask for FI_REMOTE_WRITE) need
	// local write access, or ibv_reg_mr refuses them.
	EXPECT_EQ(vrb_ibv_access(FI_REMOTE_WRITE),
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
			  IBV_ACCESS_LOCAL_WRITE);
}

TEST(MrMode, BasicIsTheBitsItStandsFor)
{
	fi_info *info = fi_allocinfo();

	info->domain_attr->mr_mode = FI_MR_BASIC;
	EXPECT_EQ(vrb_effective_mr_mode(info),
		  FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY);
	info->mode = FI_LOCAL_MR;
	EXPECT_EQ(vrb_effective_mr_mode(info), VRB_MR_MODE);
	info->mode = 0;
	info->domain_attr->mr_mode = VRB_MR_MODE | FI_MR_ENDPOINT;
	EXPECT_EQ(vrb_effective_mr_mode(info), VRB_MR_MODE | FI_MR_ENDPOINT);
	info->domain_attr->mr_mode = FI_MR_SCALABLE;
	EXPECT_EQ(vrb_effective_mr_mode(info), 0);
	fi_freeinfo(info);
}

// ---- Connection events and private data -----------------------------------------------------

TEST(Cm, EventsTheApplicationSees)
{
	uint32_t ev = 0;
	int err = 0;

	EXPECT_EQ(vrb_cm_translate(RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, &err),
		  VRB_CM_EVENT);
	EXPECT_EQ(ev, (uint32_t)FI_CONNREQ);
	EXPECT_EQ(vrb_cm_translate(RDMA_CM_EVENT_ESTABLISHED, 0, &ev, &err),
		  VRB_CM_EVENT);
	EXPECT_EQ(ev, (uint32_t)FI_CONNECTED);
	EXPECT_EQ(vrb_cm_translate(RDMA_CM_EVENT_DISCONNECTED, 0, &ev, &err),
		  VRB_CM_EVENT);
	EXPECT_EQ(ev, (uint32_t)FI_SHUTDOWN);
}

TEST(Cm, FailuresAreErrorEntries)
{
	uint32_t ev = 0;
	int err = 0;

	EXPECT_EQ(vrb_cm_translate(RDMA_CM_EVENT_REJECTED, 28, &ev, &err),
		  VRB_CM_ERROR);
	EXPECT_EQ(err, FI_ECONNREFUSED);
	EXPECT_EQ(vrb_cm_translate(RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, &ev,
				   &err),
		  VRB_CM_ERROR);
	EXPECT_EQ(err, FI_ETIMEDOUT);
	EXPECT_EQ(vrb_cm_translate(RDMA_CM_EVENT_UNREACHABLE, -EHOSTUNREACH,
				   &ev, &err),
		  VRB_CM_ERROR);
	EXPECT_EQ(err, FI_EHOSTUNREACH);
	EXPECT_EQ(vrb_cm_translate(RDMA_CM_EVENT_ADDR_ERROR, -ENODEV, &ev, &err),
		  VRB_CM_ERROR);
	EXPECT_EQ(err, FI_EADDRNOTAVAIL);
}

TEST(Cm, ResolutionStepsAreNotTheApplicationsBusiness)
{
	uint32_t ev = 0xdead;
	int err = 0;

	for (int e : { RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ROUTE_RESOLVED,
		       RDMA_CM_EVENT_TIMEWAIT_EXIT, RDMA_CM_EVENT_ADDR_CHANGE })
		EXPECT_EQ(vrb_cm_translate(e, 0, &ev, &err), VRB_CM_IGNORE) << e;
	EXPECT_EQ(ev, 0xdeadu);
}

TEST(Cm, ErrorTextNamesEventAndReason)
{
	char buf[200];
	int prov = vrb_cm_prov_errno(RDMA_CM_EVENT_REJECTED, 28);
	std::string text = vrb_cm_strerror(prov, buf, sizeof(buf));

	EXPECT_EQ(text.c_str(), std::string(buf));
	EXPECT_NE(text.find("REJECTED"), std::string::npos) << text;
	EXPECT_NE(text.find("reason 28"), std::string::npos) << text;
	EXPECT_NE(text.find("consumer reject"), std::string::npos) << text;

	prov = vrb_cm_prov_errno(RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	text = vrb_cm_strerror(prov, nullptr, 0);
	EXPECT_NE(text.find("UNREACHABLE"), std::string::npos) << text;
	EXPECT_NE(text.find(strerror(ETIMEDOUT)), std::string::npos) << text;
}

TEST(CmData, RoundTrip)
{
	uint8_t wire[VRB_CM_REQ_DATA];
	uint8_t total = 0;
	const char msg[] = "hello";
	const uint8_t *out;

	ASSERT_EQ(vrb_cm_pack(msg, sizeof(msg), sizeof(wire), wire, &total), 0);
	EXPECT_EQ(total, sizeof(vrb_cm_hdr) + sizeof(msg));
	// rdma_cm hands the receiver the protocol's maximum, padded.
	ASSERT_EQ(vrb_cm_unpack(wire, sizeof(wire), &out), sizeof(msg));
	EXPECT_STREQ((const char *)out, "hello");
}

TEST(CmData, EmptyAndLimits)
{
	uint8_t wire[VRB_CM_REQ_DATA];
	uint8_t total = 0;
	const uint8_t *out;
	char big[VRB_CM_REQ_DATA] = {};

	ASSERT_EQ(vrb_cm_pack(nullptr, 0, sizeof(wire), wire, &total), 0);
	EXPECT_EQ(total, sizeof(vrb_cm_hdr));
	EXPECT_EQ(vrb_cm_unpack(wire, total, &out), 0u);
	EXPECT_EQ(vrb_cm_pack(big, VRB_CM_DATA_SIZE, sizeof(wire), wire,
			      &total),
		  0);
	EXPECT_EQ(vrb_cm_pack(big, VRB_CM_DATA_SIZE + 1, sizeof(wire), wire,
			      &total),
		  -FI_EINVAL);
	EXPECT_EQ(vrb_cm_pack(nullptr, 3, sizeof(wire), wire, &total),
		  -FI_EINVAL);
}

TEST(CmData, DamagedHeaderYieldsNothing)
{
	uint8_t wire[8] = { 200 }; // claims 200 bytes, 4 arrived
	const uint8_t *out;

	EXPECT_EQ(vrb_cm_unpack(wire, sizeof(wire), &out), 0u);
	EXPECT_EQ(out, nullptr);
	EXPECT_EQ(vrb_cm_unpack(wire, 2, &out), 0u);
	EXPECT_EQ(vrb_cm_unpack(nullptr, 60, &out), 0u);
}

// ---- Loading rdma-core ---------------------------------------------------------------------------

TEST(Lib, MissingLibraryIsNoDataWithAReason)
{
	vrb_lib lib;
	char why[512] = "";

	EXPECT_EQ(vrb_lib_load(&lib, "libfabsim-no-such-ibverbs.so.1",
			       "librdmacm.so.1", why, sizeof(why)),
		  -FI_ENODATA);
	EXPECT_NE(std::string(why).find("libfabsim-no-such-ibverbs.so.1"),
		  std::string::npos)
		<< why;
	EXPECT_EQ(lib.ibverbs, nullptr);
	EXPECT_EQ(lib.rdmacm, nullptr);
}

TEST(Lib, LibraryWithoutTheFunctionsIsRefused)
{
	vrb_lib lib;
	char why[512] = "";

	// The C library loads fine but exports no verbs.
	EXPECT_EQ(vrb_lib_load(&lib, "libc.so.6", "libc.so.6", why,
			       sizeof(why)),
		  -FI_ENODATA);
	EXPECT_NE(std::string(why).find("has no ibv_get_device_list"),
		  std::string::npos)
		<< why;
	EXPECT_EQ(lib.ibverbs, nullptr);
}

TEST(Lib, TheDistributionsRdmaCoreLoads)
{
	vrb_lib lib;
	char why[512] = "";
	int ret = vrb_lib_load(&lib, VRB_IBVERBS_SONAME, VRB_RDMACM_SONAME,
			       why, sizeof(why));

	if (ret && std::string(why).find("cannot load") != std::string::npos)
		GTEST_SKIP() << "rdma-core is not installed: " << why;
	ASSERT_EQ(ret, 0) << why;
	EXPECT_NE(lib.get_device_list, nullptr);
	EXPECT_NE(lib.cm_create_qp, nullptr);
	EXPECT_NE(lib.get_devices, nullptr);
	vrb_lib_unload(&lib);
}

} // namespace
