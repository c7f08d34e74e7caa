// The command line: tr_cli_main (what `fabsim trace` will call) and the fabsim_trace binary.
#include "traces/tests/test_util.h"

#include <jansson.h>

extern "C" {
#include "traces/tr_cli.h"
}

namespace {

struct Result {
  int rc;
  std::string out, err;
};

Result Cli(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  char *o = nullptr, *e = nullptr;
  size_t ol = 0, el = 0;
  FILE* out = open_memstream(&o, &ol);
  FILE* err = open_memstream(&e, &el);
  Result r;
  r.rc = tr_cli_main(static_cast<int>(args.size()), argv.data(), out, err);
  fclose(out);
  fclose(err);
  r.out.assign(o, ol);
  r.err.assign(e, el);
  free(o);
  free(e);
  return r;
}

const std::string kFile = trtest::TestData("oferby_proxy_roce.pcap");

TEST(Cli, Usage) {
  Result r = Cli({"trace"});
  EXPECT_EQ(2, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("usage: trace summary FILE [--json]"));
  r = Cli({"trace", "help"});
  EXPECT_EQ(0, r.rc);
  EXPECT_NE(std::string::npos, r.out.find("check FILE"));
  r = Cli({"trace", "replay", kFile});
  EXPECT_EQ(2, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("unknown subcommand 'replay'"));
  EXPECT_EQ(2, Cli({"trace", "summary"}).rc);
  EXPECT_EQ(2, Cli({"trace", "summary", kFile, "--csv"}).rc);
  EXPECT_EQ(2, Cli({"trace", "summary", kFile, kFile}).rc);
  EXPECT_EQ(2, Cli({"trace", "check"}).rc);
  EXPECT_EQ(2, Cli({"trace", "check", kFile, "extra"}).rc);
}

TEST(Cli, Summary) {
  Result r = Cli({"trace", "summary", kFile});
  EXPECT_EQ(0, r.rc) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("frames    123: 105 IB packets"));
  EXPECT_NE(std::string::npos, r.out.find("RC SEND_LAST_WITH_IMMEDIATE"));
  r = Cli({"trace", "summary", "--json", kFile});
  EXPECT_EQ(0, r.rc) << r.err;
  json_error_t jerr;
  json_t* root = json_loads(r.out.c_str(), 0, &jerr);
  ASSERT_NE(nullptr, root) << jerr.text;
  EXPECT_EQ(105, json_integer_value(json_object_get(root, "packets")));
  EXPECT_EQ(2u, json_array_size(json_object_get(root, "flows")));
  json_decref(root);
  r = Cli({"trace", "summary", "/no/such/file.pcap"});
  EXPECT_EQ(1, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("cannot open /no/such/file.pcap"));
}

TEST(Cli, Check) {
  Result r = Cli({"trace", "check", kFile});
  EXPECT_EQ(0, r.rc) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("123 frames, 105 IB packets, 0 problems"));
  auto b = trtest::ReadFile(kFile);
  b[b.size() - 100] ^= 0x20;  // inside one of the last RoCE packets
  std::string copy = trtest::TempPath("cli_flipped.pcap");
  trtest::WriteFile(copy, b);
  r = Cli({"trace", "check", copy});
  EXPECT_EQ(1, r.rc);
  EXPECT_NE(std::string::npos, r.out.find(": ICRC 0x"));
  EXPECT_NE(std::string::npos, r.err.find("1 problem\n"));
}

TEST(Cli, TheBinary) {
  int st;
  std::string out = trtest::Run("traces/fabsim_trace check " + kFile, &st);
  EXPECT_EQ(0, st);
  EXPECT_NE(std::string::npos, out.find("0 problems"));
  trtest::Run("traces/fabsim_trace summary /no/such.pcap 2>/dev/null", &st);
  EXPECT_EQ(1, st);
  trtest::Run("traces/fabsim_trace 2>/dev/null", &st);
  EXPECT_EQ(2, st);
}

}  // namespace
