// Event frames (tr_event.h): a process of a shared fabric away, back or dead, recorded among the
// packets. Built and parsed back, damaged ones refused, the reader counting them as another
// protocol ("fabsim event") with their content, the tools finding no problem, and the project's
// Lua dissector showing them.
#include <fstream>

#include "traces/tests/test_util.h"

extern "C" {
#include "traces/tr_event.h"
}

namespace {

tr_event Event(uint8_t kind, uint32_t node, uint32_t pid, const char* text) {
  tr_event ev = {};
  ev.kind = kind;
  ev.node = node;
  ev.pid = pid;
  snprintf(ev.text, sizeof(ev.text), "%s", text);
  return ev;
}

TEST(Event, FrameRoundTrips) {
  uint8_t frame[TR_EVENT_FRAME_MAX];
  tr_event in = Event(TR_EVENT_AWAY, 3, 4242, "process 4242 is blocked outside the fabric");
  uint32_t len = tr_event_frame_build(frame, &in);
  EXPECT_EQ(14u + 16u + strlen(in.text), len);
  EXPECT_EQ(0x88, frame[12]);
  EXPECT_EQ(0xb5, frame[13]);
  tr_event out;
  tr_error err;
  ASSERT_EQ(1, tr_event_frame_parse(frame, len, len, &out, &err)) << err.msg;
  EXPECT_EQ(in.kind, out.kind);
  EXPECT_EQ(in.node, out.node);
  EXPECT_EQ(in.pid, out.pid);
  EXPECT_STREQ(in.text, out.text);
  // A short text still makes a whole Ethernet frame.
  tr_event small = Event(TR_EVENT_DIED, 0, 1, "x");
  EXPECT_EQ(60u, tr_event_frame_build(frame, &small));
  EXPECT_STREQ("died", tr_event_kind_name(TR_EVENT_DIED));
}

TEST(Event, DamagedFramesAreRefusedAndOthersIgnored) {
  uint8_t frame[TR_EVENT_FRAME_MAX];
  tr_event ev = Event(TR_EVENT_BACK, 1, 7, "back");
  uint32_t len = tr_event_frame_build(frame, &ev);
  tr_event out;
  tr_error err;
  EXPECT_EQ(-EINVAL, tr_event_frame_parse(frame, 20, len, &out, &err));  // cut
  frame[14 + 4] = 9;                                                    // version
  EXPECT_EQ(-EINVAL, tr_event_frame_parse(frame, len, len, &out, &err));
  EXPECT_NE(std::string(err.msg).find("version"), std::string::npos) << err.msg;
  frame[14 + 4] = TR_EVENT_VERSION;
  frame[14 + 6] = 0xff;  // text longer than the frame
  EXPECT_EQ(-EINVAL, tr_event_frame_parse(frame, len, len, &out, &err));
  frame[14] = 'X';  // not an event: no error, not ours
  EXPECT_EQ(0, tr_event_frame_parse(frame, len, len, &out, &err));
}

// A snap length that cuts the text leaves an event with the text captured; a frame shorter on
// the wire than its text says is damaged.
TEST(Event, ASnapLengthCutsOnlyTheText) {
  uint8_t frame[TR_EVENT_FRAME_MAX];
  tr_event ev = Event(TR_EVENT_AWAY, 2, 7, "process 7 is blocked outside the fabric");
  uint32_t len = tr_event_frame_build(frame, &ev);
  tr_event out;
  tr_error err;
  ASSERT_EQ(1, tr_event_frame_parse(frame, 40, len, &out, &err)) << err.msg;
  EXPECT_STREQ("process 7 ", out.text);
  EXPECT_EQ(TR_EVENT_AWAY, out.kind);
  EXPECT_EQ(2u, out.node);
  EXPECT_EQ(-EINVAL, tr_event_frame_parse(frame, 40, 40, &out, &err));
  EXPECT_NE(std::string(err.msg).find("text of 39 bytes"), std::string::npos) << err.msg;
}

// Events among packets: the reader reports them as "fabsim event" with their content.
TEST(Event, TheReaderCountsThemAsAnotherProtocol) {
  auto list = trtest::Conversation(1000, 200);
  std::string path = trtest::TempPath("events.pcap");
  tr_writer* w;
  tr_error err;
  ASSERT_EQ(0, tr_writer_open(&w, path.c_str(), 0, &err)) << err.msg;
  uint8_t frame[TR_EVENT_FRAME_MAX];
  tr_event away = Event(TR_EVENT_AWAY, 1, 99, "process 99 is blocked outside the fabric");
  uint32_t len = tr_event_frame_build(frame, &away);
  ASSERT_EQ(0, tr_trace_write_packet(w, 500, frame, len, 0, nullptr, &err)) << err.msg;
  for (const auto& p : list)
    ASSERT_EQ(0, tr_trace_write_packet(w, p.ts_ns, p.frame.data(),
                                       static_cast<uint32_t>(p.frame.size()), p.flags, &p.where,
                                       &err));
  ASSERT_EQ(0, tr_writer_close(w, &err)) << err.msg;
  tr_reader* r;
  ASSERT_EQ(0, tr_reader_open(&r, path.c_str(), &err)) << err.msg;
  tr_record rec;
  ASSERT_EQ(1, tr_reader_next(r, &rec, &err)) << err.msg;
  EXPECT_EQ(TR_REC_OTHER, rec.kind);
  EXPECT_STREQ("fabsim event", rec.what);
  EXPECT_EQ(TR_EVENT_AWAY, rec.event.kind);
  EXPECT_EQ(99u, rec.event.pid);
  EXPECT_STREQ(away.text, rec.event.text);
  int n, packets = 0;
  while ((n = tr_reader_next(r, &rec, &err)) > 0) packets += rec.kind == TR_REC_PACKET;
  EXPECT_EQ(0, n) << err.msg;
  EXPECT_GT(packets, 0);
  tr_reader_close(r);
  // The Lua dissector shows it.
  if (!trtest::HaveTshark()) GTEST_SKIP() << "tshark is not installed";
  const std::string lua = "traces/wireshark/fabsim.lua";
  ASSERT_TRUE(std::ifstream(lua).good()) << lua << " is not in the runfiles";
  int st;
  std::string out = trtest::Run("HOME=" + trtest::TempPath("") + " tshark -X lua_script:" + lua +
                                    " -r " + path +
                                    " -T fields -e fabsim.event.kind -e fabsim.event.pid"
                                    " -e fabsim.event.text -Y fabsim.event.kind 2>/dev/null",
                                &st);
  ASSERT_EQ(0, st);
  EXPECT_EQ("1\t99\t" + std::string(away.text) + "\n", out);
}

}  // namespace
