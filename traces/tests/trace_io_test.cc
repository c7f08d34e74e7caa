// Trace files: the writer's nanosecond pcap (deterministic, snap length, markers), and the
// reader on every format it accepts and on damaged files — clear errors, never a crash.
#include "traces/tests/test_util.h"

namespace {

using trtest::Bytes;
using trtest::Pcap;
using trtest::Pcapng;
using trtest::Rec;
using trtest::Written;

std::string Save(const std::string& name, const Bytes& b) {
  std::string path = trtest::TempPath(name);
  trtest::WriteFile(path, b);
  return path;
}

struct ReadAll {
  std::vector<tr_record> recs;
  std::vector<Bytes> data;
  int end = 0;
  std::string error;
  tr_reader_info info{};
  uint64_t cut_marker = 0;
};

ReadAll Read(const std::string& path) {
  ReadAll out;
  tr_reader* r;
  tr_error err;
  if (tr_reader_open(&r, path.c_str(), &err)) {
    out.end = err.code;
    out.error = err.msg;
    return out;
  }
  tr_reader_get_info(r, &out.info);
  tr_record rec;
  while ((out.end = tr_reader_next(r, &rec, &err)) > 0) {
    out.recs.push_back(rec);
    out.data.emplace_back(rec.data, rec.data + rec.caplen);
    out.recs.back().data = nullptr;
  }
  if (out.end < 0) out.error = err.msg;
  out.cut_marker = tr_reader_cut_marker(r);
  tr_reader_close(r);
  return out;
}

// ---- writing ----

TEST(Writer, NanosecondPcapThatReadsBackWithMarks) {
  auto list = trtest::Conversation(1700000000123456789ull, 1000);
  std::string path = trtest::TempPath("conv.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, list));
  Bytes file = trtest::ReadFile(path);
  ASSERT_GE(file.size(), 24u);
  EXPECT_EQ(Bytes({0x4d, 0x3c, 0xb2, 0xa1}), Bytes(file.begin(), file.begin() + 4));
  EXPECT_EQ(1, file[20]);  // link type Ethernet
  ReadAll all = Read(path);
  ASSERT_EQ(0, all.end) << all.error;
  EXPECT_STREQ("pcap (nanosecond)", all.info.format);
  EXPECT_EQ(TR_SNAPLEN_FULL, all.info.snaplen);
  size_t i = 0;
  int64_t expect_offset = 24;
  for (const Written& w : list) {
    if (w.flags) {
      ASSERT_LT(i, all.recs.size());
      const tr_record& m = all.recs[i];
      EXPECT_EQ(TR_REC_MARKER, m.kind);
      EXPECT_EQ(w.flags, m.mark.flags);
      EXPECT_EQ(w.where.reason, m.mark.where.reason);
      EXPECT_EQ(w.where.node, m.mark.where.node);
      EXPECT_EQ(w.where.port, m.mark.where.port);
      EXPECT_EQ(w.where.link, m.mark.where.link);
      EXPECT_EQ(w.ts_ns, m.ts_ns);
      expect_offset += 16 + TR_MARK_FRAME_LEN;
      i++;
    }
    ASSERT_LT(i, all.recs.size());
    const tr_record& r = all.recs[i];
    EXPECT_EQ(i + 1, r.frame);
    EXPECT_EQ(expect_offset + 16, r.offset);
    EXPECT_EQ(TR_REC_PACKET, r.kind) << r.problem.msg;
    EXPECT_EQ(w.ts_ns, r.ts_ns);
    EXPECT_EQ(w.frame, all.data[i]);
    EXPECT_EQ(w.flags, r.mark.flags);
    EXPECT_STREQ("", r.problem.msg);
    expect_offset += 16 + static_cast<int64_t>(w.frame.size());
    i++;
  }
  EXPECT_EQ(all.recs.size(), i);
}

TEST(Writer, SamePacketsSameBytes) {
  auto list = trtest::Conversation();
  std::string a = trtest::TempPath("same_a.pcap"), b = trtest::TempPath("same_b.pcap");
  ASSERT_TRUE(trtest::WriteTrace(a, list));
  ASSERT_TRUE(trtest::WriteTrace(b, trtest::Conversation()));
  Bytes fa = trtest::ReadFile(a), fb = trtest::ReadFile(b);
  EXPECT_GT(fa.size(), 20000u);
  EXPECT_TRUE(fa == fb);
  // The same through a stream.
  std::string c = trtest::TempPath("same_c.pcap");
  tr_writer* w;
  tr_error err;
  ASSERT_EQ(0, tr_writer_fopen(&w, fopen(c.c_str(), "wb"), 0, &err)) << err.msg;
  for (const auto& p : list)
    ASSERT_EQ(0, tr_trace_write_packet(w, p.ts_ns, p.frame.data(),
                                       static_cast<uint32_t>(p.frame.size()), p.flags, &p.where,
                                       &err));
  ASSERT_EQ(0, tr_writer_close(w, &err)) << err.msg;
  EXPECT_TRUE(fa == trtest::ReadFile(c));
}

// Several writers appending to one file, one at a time in turn (as the processes of a shared
// fabric do under its lock): one header, every record in the order written, the same bytes as
// one writer would give.
TEST(Writer, SharedFileTakesTurnsOfSeveralWriters) {
  auto list = trtest::Conversation();
  std::string one = trtest::TempPath("shared_one.pcap");
  ASSERT_TRUE(trtest::WriteTrace(one, list));
  std::string path = trtest::TempPath("shared.pcap");
  trtest::WriteFile(path, Bytes{});  // an empty file: the first writer writes the header
  tr_writer* w[3];
  tr_error err;
  for (auto& x : w) ASSERT_EQ(0, tr_writer_open_shared(&x, path.c_str(), 0, &err)) << err.msg;
  for (size_t i = 0; i < list.size(); i++) {
    const auto& p = list[i];
    ASSERT_EQ(0, tr_trace_write_packet(w[i % 3], p.ts_ns, p.frame.data(),
                                       static_cast<uint32_t>(p.frame.size()), p.flags, &p.where,
                                       &err))
        << err.msg;
  }
  for (auto& x : w) ASSERT_EQ(0, tr_writer_close(x, &err)) << err.msg;
  EXPECT_TRUE(trtest::ReadFile(one) == trtest::ReadFile(path));
  // A file that is not a nanosecond Ethernet pcap is refused.
  std::string other = Save("shared_other.pcap", Bytes(100, 0x5a));
  tr_writer* bad = nullptr;
  EXPECT_EQ(-EIO, tr_writer_open_shared(&bad, other.c_str(), 0, &err));
  EXPECT_NE(std::string(err.msg).find("shared_other.pcap"), std::string::npos) << err.msg;
}

TEST(Writer, HeadersOnlySnapLength) {
  auto list = trtest::Conversation();
  std::string path = trtest::TempPath("headers.pcap");
  ASSERT_TRUE(trtest::WriteTrace(path, list, TR_SNAPLEN_HEADERS));
  ReadAll all = Read(path);
  ASSERT_EQ(0, all.end) << all.error;
  EXPECT_EQ(TR_SNAPLEN_HEADERS, all.info.snaplen);
  size_t truncated = 0, i = 0;
  for (const Written& w : list) {
    if (w.flags) i++;
    const tr_record& r = all.recs[i++];
    ASSERT_EQ(TR_REC_PACKET, r.kind) << r.problem.msg;
    EXPECT_EQ(std::min<size_t>(w.frame.size(), TR_SNAPLEN_HEADERS), r.caplen);
    EXPECT_EQ(w.frame.size(), r.wirelen);
    EXPECT_EQ(w.pkt.psn, r.pkt.psn);
    EXPECT_EQ(w.pkt.payload_len, r.pkt.payload_len);
    EXPECT_EQ(w.flags, r.mark.flags);
    EXPECT_EQ(w.pkt.flags & TR_PKT_TAGHDR, r.pkt.flags & TR_PKT_TAGHDR);
    if (w.frame.size() > TR_SNAPLEN_HEADERS) {
      truncated++;
      EXPECT_TRUE(r.pkt.flags & TR_PKT_TRUNCATED);
      EXPECT_FALSE(r.pkt.icrc_captured);
    }
  }
  EXPECT_GT(truncated, 20u);
  tr_check_result res;
  EXPECT_EQ(0, tr_check_file(path.c_str(), stderr, &res));
  tr_writer_stats st;
  tr_writer* w;
  tr_error err;
  ASSERT_EQ(0, tr_writer_open(&w, trtest::TempPath("stats.pcap").c_str(), 200, &err));
  Bytes f = list[0].frame;
  ASSERT_EQ(0, tr_trace_write_packet(w, 0, f.data(), static_cast<uint32_t>(f.size()), TR_DROPPED,
                                     nullptr, &err));
  tr_writer_get_stats(w, &st);
  EXPECT_EQ(1u, st.frames);
  EXPECT_EQ(1u, st.markers);
  EXPECT_EQ(f.size(), st.frame_bytes);
  EXPECT_EQ(24u + 16 + 60 + 16 + 200, st.written_bytes);
  EXPECT_EQ(0, tr_writer_close(w, &err));
}

TEST(Writer, RefusesBadArguments) {
  tr_writer* w;
  tr_error err;
  EXPECT_EQ(-EINVAL, tr_writer_open(&w, trtest::TempPath("x.pcap").c_str(), 64, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "snap length 64")) << err.msg;
  EXPECT_EQ(nullptr, w);
  EXPECT_EQ(-ENOENT, tr_writer_open(&w, "/nonexistent/dir/x.pcap", 0, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "/nonexistent/dir/x.pcap")) << err.msg;
  ASSERT_EQ(0, tr_writer_open(&w, trtest::TempPath("x.pcap").c_str(), 0, &err));
  Bytes f = trtest::Build(trtest::Pkt(0x04, 2, 0));
  EXPECT_EQ(-EINVAL, tr_trace_write_packet(w, 0, f.data(), 10, 0, nullptr, &err));
  EXPECT_EQ(-EINVAL, tr_trace_write_packet(w, 0, f.data(), static_cast<uint32_t>(f.size()), 0x100,
                                           nullptr, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "mark flags 0x100")) << err.msg;
  tr_packet bad = trtest::Pkt(0x04, 1, 0);
  EXPECT_EQ(-EINVAL, tr_trace_write_built(w, 0, &bad, 0, nullptr, &err));
  tr_packet good = trtest::Pkt(0x04, 2, 0);
  EXPECT_EQ(0, tr_trace_write_built(w, 5, &good, TR_RETRANSMIT, nullptr, &err)) << err.msg;
  EXPECT_EQ(0, tr_writer_close(w, &err));
  ReadAll all = Read(trtest::TempPath("x.pcap"));
  ASSERT_EQ(2u, all.recs.size());
  EXPECT_EQ(TR_RETRANSMIT, all.recs[1].mark.flags);
  EXPECT_EQ(TR_WHERE_UNKNOWN, all.recs[1].mark.where.node);
}

TEST(Writer, ReportsAFullDisk) {
  FILE* f = fopen("/dev/full", "wb");
  if (!f) GTEST_SKIP() << "no /dev/full here";
  tr_writer* w;
  tr_error err;
  ASSERT_EQ(0, tr_writer_fopen(&w, f, 0, &err));
  Bytes fr = trtest::Build(trtest::Pkt(0x04, 2, 0));
  for (int i = 0; i < 200; i++)
    tr_trace_write_packet(w, 0, fr.data(), static_cast<uint32_t>(fr.size()), 0, nullptr, &err);
  EXPECT_EQ(-EIO, tr_writer_close(w, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "failed")) << err.msg;
}

// ---- the formats the reader accepts ----

TEST(Reader, BothMagicsBothByteOrders) {
  Bytes f = trtest::Build(trtest::Pkt(0x04, 0x22, 42));
  for (bool be : {false, true}) {
    for (uint32_t magic : {0xa1b2c3d4u, 0xa1b23c4du}) {
      bool nano = magic == 0xa1b23c4du;
      std::string path = Save("m.pcap", Pcap(magic, be, 1, {{7, nano ? 123456789u : 123456u, f, 0}}));
      ReadAll all = Read(path);
      ASSERT_EQ(0, all.end) << all.error;
      ASSERT_EQ(1u, all.recs.size());
      EXPECT_EQ(be, all.info.swapped);
      EXPECT_STREQ(nano ? "pcap (nanosecond)" : "pcap", all.info.format);
      EXPECT_EQ(7000000000ull + (nano ? 123456789u : 123456000u), all.recs[0].ts_ns);
      EXPECT_EQ(TR_REC_PACKET, all.recs[0].kind);
      EXPECT_EQ(42u, all.recs[0].pkt.psn);
      EXPECT_EQ(40, all.recs[0].offset);
    }
  }
}

// A record's seconds are unsigned 32 bits (the pcap format): times from 2038 on read as such,
// not as before 1970.
TEST(Reader, TimesFrom2038On) {
  Bytes f = trtest::Build(trtest::Pkt(0x04, 0x22, 42));
  for (uint32_t sec : {0x7fffffffu, 0x80000000u, 0xfffffffeu}) {
    std::string path = Save("t.pcap", Pcap(0xa1b23c4du, false, 1, {{sec, 5, f, 0}, {sec + 1, 7, f, 0}}));
    ReadAll all = Read(path);
    ASSERT_EQ(0, all.end) << all.error;
    ASSERT_EQ(2u, all.recs.size());
    EXPECT_EQ(sec * 1000000000ull + 5, all.recs[0].ts_ns) << sec;
    EXPECT_EQ((sec + 1ull) * 1000000000ull + 7, all.recs[1].ts_ns) << sec;
  }
}

TEST(Reader, Pcapng) {
  Bytes a = trtest::Build(trtest::Pkt(0x04, 0x22, 1)), b = trtest::Build(trtest::Pkt(0x11, 0x11, 1, false));
  for (bool be : {false, true}) {
    std::vector<int64_t> offsets;
    std::string path = Save("n.pcapng", Pcapng(be, 1, {{1, 5, a, 0}, {1, 9, b, 0}}, &offsets));
    ReadAll all = Read(path);
    ASSERT_EQ(0, all.end) << all.error;
    EXPECT_STREQ("pcapng", all.info.format);
    ASSERT_EQ(2u, all.recs.size());
    EXPECT_EQ(1000000005ull, all.recs[0].ts_ns);
    EXPECT_EQ(1000000009ull, all.recs[1].ts_ns);
    EXPECT_EQ(offsets[0], all.recs[0].offset);
    EXPECT_EQ(offsets[1], all.recs[1].offset);
    EXPECT_EQ(a, all.data[0]);
    EXPECT_EQ(TR_REC_PACKET, all.recs[1].kind);
  }
}

TEST(Reader, OtherLinkTypesAndUnknownOnes) {
  Bytes f = trtest::Build(trtest::Pkt(0x04, 0x22, 3));
  Bytes raw(f.begin() + 14, f.end());
  ReadAll all = Read(Save("raw.pcap", Pcap(0xa1b2c3d4u, false, 101, {{0, 0, raw, 0}})));
  ASSERT_EQ(0, all.end) << all.error;
  EXPECT_EQ(TR_LINKTYPE_RAW, all.info.linktype);
  EXPECT_EQ(TR_REC_PACKET, all.recs[0].kind);
  all = Read(Save("wifi.pcap", Pcap(0xa1b2c3d4u, false, 105, {{0, 0, raw, 0}})));
  EXPECT_EQ(-EINVAL, all.end);
  EXPECT_NE(std::string::npos, all.error.find("link type 105")) << all.error;
  // Ethernet frames read as raw IP: no RoCE packet, so check has checked nothing and says so.
  tr_check_result res{};
  EXPECT_EQ(1, tr_check_file(Save("eth_as_raw.pcap", Pcap(0xa1b2c3d4u, false, 101, {{0, 0, f, 0}})).c_str(),
                             nullptr, &res));
  EXPECT_EQ(1u, res.frames);
  EXPECT_EQ(0u, res.packets);
  EXPECT_EQ(1u, res.problems);
  // A file header and no frame at all: nothing was checked either.
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  EXPECT_EQ(1, tr_check_file(Save("no_frames.pcap", Pcap(0xa1b2c3d4u, false, 1, {})).c_str(), out,
                             &res));
  fclose(out);
  EXPECT_EQ(0u, res.frames);
  EXPECT_EQ(1u, res.problems);
  EXPECT_EQ("the file holds no frame: nothing was checked\n", std::string(text, len));
  free(text);
}

// ---- damaged files ----

TEST(Reader, EmptyAndForeignFiles) {
  ReadAll all = Read(Save("empty.pcap", {}));
  EXPECT_EQ(-EINVAL, all.end);
  EXPECT_NE(std::string::npos, all.error.find("byte offset 0: file of 0 bytes is too short"))
      << all.error;
  all = Read(Save("text.pcap", Bytes{'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}));
  EXPECT_EQ(-EINVAL, all.end);
  EXPECT_NE(std::string::npos, all.error.find("magic 68 65 6c 6c is neither pcap")) << all.error;
  all = Read("/nonexistent.pcap");
  EXPECT_EQ(-ENOENT, all.end);
  EXPECT_NE(std::string::npos, all.error.find("/nonexistent.pcap")) << all.error;
  Bytes header_only = Pcap(0xa1b2c3d4u, false, 1, {});
  header_only.resize(10);
  all = Read(Save("short_header.pcap", header_only));
  EXPECT_EQ(-EINVAL, all.end);
  EXPECT_NE(std::string::npos, all.error.find("byte offset 0")) << all.error;
}

TEST(Reader, TruncatedFileNamesTheFrameAndOffset) {
  Bytes f = trtest::Build(trtest::Pkt(0x04, 0x22, 3));
  Bytes file = Pcap(0xa1b2c3d4u, false, 1, {{0, 0, f, 0}, {0, 1, f, 0}, {0, 2, f, 0}});
  int64_t third = 24 + 2 * (16 + static_cast<int64_t>(f.size()));
  file.resize(static_cast<size_t>(third) + 16 + 20);  // third record cut in its data
  ReadAll all = Read(Save("cut.pcap", file));
  EXPECT_EQ(2u, all.recs.size());
  EXPECT_EQ(-EINVAL, all.end);
  EXPECT_NE(std::string::npos,
            all.error.find("frame 3 (byte offset " + std::to_string(third) + ") (record start)"))
      << all.error;
  EXPECT_NE(std::string::npos, all.error.find("truncated")) << all.error;
  file.resize(static_cast<size_t>(third) + 7);  // cut in its record header
  all = Read(Save("cut2.pcap", file));
  EXPECT_EQ(-EINVAL, all.end);
  EXPECT_NE(std::string::npos, all.error.find("frame 3")) << all.error;
  tr_check_result res;
  EXPECT_EQ(1, tr_check_file(trtest::TempPath("cut2.pcap").c_str(), nullptr, &res));
  EXPECT_EQ(2u, res.packets);
  EXPECT_EQ(1u, res.problems);
}

TEST(Reader, LyingLengths) {
  Bytes f = trtest::Build(trtest::Pkt(0x04, 0x22, 3));
  // captured length above every limit libpcap accepts
  Bytes file = Pcap(0xa1b2c3d4u, false, 1, {{0, 0, f, 0}});
  file[24 + 8] = 0xff;
  file[24 + 9] = 0xff;
  file[24 + 10] = 0xff;
  file[24 + 11] = 0x7f;
  ReadAll all = Read(Save("huge.pcap", file));
  EXPECT_EQ(-EINVAL, all.end);
  EXPECT_NE(std::string::npos, all.error.find("frame 1 (byte offset 24)")) << all.error;
  // original length below the captured length
  all = Read(Save("orig.pcap", Pcap(0xa1b2c3d4u, false, 1, {{0, 0, f, 20}})));
  ASSERT_EQ(0, all.end) << all.error;
  ASSERT_EQ(1u, all.recs.size());
  EXPECT_EQ(TR_REC_MALFORMED, all.recs[0].kind);
  EXPECT_NE(nullptr, strstr(all.recs[0].problem.msg, "frame 1 (byte offset 40): wire length 20"))
      << all.recs[0].problem.msg;
}

TEST(Reader, GarbageFramesAreCountedNotFatal) {
  std::vector<Rec> recs;
  uint32_t seed = 12345;
  for (int i = 0; i < 300; i++) {
    Bytes b(static_cast<size_t>(i % 97));
    for (auto& x : b) x = static_cast<uint8_t>((seed = seed * 1103515245u + 12345u) >> 16);
    if (i % 3 == 0 && b.size() > 14) {  // aim some at the RoCE parser
      b[12] = 0x08;
      b[13] = 0x00;
    }
    recs.push_back({0, static_cast<uint32_t>(i), b, 0});
  }
  ReadAll all = Read(Save("garbage.pcap", Pcap(0xa1b2c3d4u, false, 1, recs)));
  EXPECT_EQ(0, all.end) << all.error;
  EXPECT_EQ(300u, all.recs.size());
  for (const auto& r : all.recs)
    if (r.kind == TR_REC_MALFORMED) {
      EXPECT_EQ(0u, std::string(r.problem.msg).find("frame "));
    }
  tr_check_result res;
  EXPECT_EQ(1, tr_check_file(trtest::TempPath("garbage.pcap").c_str(), nullptr, &res));
  EXPECT_EQ(300u, res.frames);
}

// ---- markers ----

Bytes Marker(uint16_t flags, const Bytes& frame) {
  Bytes m(TR_MARK_FRAME_LEN);
  tr_where where = {TR_REASON_LOSS, 1, 2, 3};
  tr_mark_frame_build(m.data(), flags, &where, frame.data(), static_cast<uint32_t>(frame.size()),
                      static_cast<uint32_t>(frame.size()));
  return m;
}

TEST(Markers, DanglingDoubledSplicedAndDamaged) {
  Bytes a = trtest::Build(trtest::Pkt(0x04, 0x22, 3)), b = trtest::Build(trtest::Pkt(0x04, 0x22, 4));
  // a marker at the end of the file (one cut in pieces): the file ends, and says where it was cut;
  // a summary of it is no failure, a check names it
  std::string dangling = Save("dangling.pcap", Pcap(0xa1b2c3d4u, false, 1, {{0, 0, a, 0}, {0, 1, Marker(1, b), 0}}));
  ReadAll all = Read(dangling);
  EXPECT_EQ(0, all.end) << all.error;
  EXPECT_EQ(2u, all.recs.size());  // the frame, and the marker as what it is
  EXPECT_EQ(2u, all.cut_marker);
  tr_summary* sum;
  tr_error serr;
  EXPECT_EQ(0, tr_summary_file(dangling.c_str(), &sum, &serr)) << serr.msg;
  tr_summary_free(sum);
  tr_check_result res;
  EXPECT_EQ(1, tr_check_file(dangling.c_str(), nullptr, &res));
  EXPECT_EQ(1u, res.problems);
  // two markers in a row
  all = Read(Save("double.pcap", Pcap(0xa1b2c3d4u, false, 1,
                                      {{0, 0, Marker(1, a), 0}, {0, 1, Marker(2, a), 0}, {0, 2, a, 0}})));
  ASSERT_EQ(0, all.end) << all.error;
  EXPECT_NE(nullptr, strstr(all.recs[1].problem.msg, "follows the marker of frame 1")) << all.recs[1].problem.msg;
  EXPECT_EQ(TR_CORRUPTED, all.recs[2].mark.flags);
  // a marker describing another frame than the one after it
  all = Read(Save("splice.pcap", Pcap(0xa1b2c3d4u, false, 1, {{0, 0, Marker(1, a), 0}, {0, 1, b, 0}})));
  ASSERT_EQ(0, all.end) << all.error;
  EXPECT_NE(nullptr, strstr(all.recs[1].problem.msg, "frame 2 (byte offset 116): the marker before it describes another frame"))
      << all.recs[1].problem.msg;
  EXPECT_EQ(0, all.recs[1].mark.flags) << "the mark landed on another frame";
  // a damaged marker
  Bytes m = Marker(1, a);
  m[18] = 9;  // version
  all = Read(Save("badmark.pcap", Pcap(0xa1b2c3d4u, false, 1, {{0, 0, m, 0}, {0, 1, a, 0}})));
  ASSERT_EQ(0, all.end) << all.error;
  EXPECT_EQ(TR_REC_MALFORMED, all.recs[0].kind);
  EXPECT_NE(nullptr, strstr(all.recs[0].problem.msg, "marker version 9")) << all.recs[0].problem.msg;
  EXPECT_EQ(0, all.recs[1].mark.flags);
  m = Marker(0x40, a);  // unknown flag
  all = Read(Save("badflag.pcap", Pcap(0xa1b2c3d4u, false, 1, {{0, 0, m, 0}, {0, 1, a, 0}})));
  EXPECT_EQ(TR_REC_MALFORMED, all.recs[0].kind);
  char buf[64];
  EXPECT_STREQ("dropped,retransmit", tr_mark_flags_str(TR_DROPPED | TR_RETRANSMIT, buf, sizeof(buf)));
  EXPECT_STREQ("queue full", tr_mark_reason_name(TR_REASON_BUFFER));
  EXPECT_STREQ("unknown", tr_mark_reason_name(200));
}

}  // namespace
