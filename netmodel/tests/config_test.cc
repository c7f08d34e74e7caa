// Configuration: presets load, precedence (env > JSON > preset), and every class of bad value
// is rejected with -EINVAL and a message naming the key, the value and what is allowed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "netmodel/nm_config.h"
#include "netmodel/nm_preset.h"
}

namespace {

// A fake environment, so tests never touch the process's own.
struct Env {
  std::map<std::string, std::string> vars;
  static const char* Lookup(void* ctx, const char* name) {
    auto* env = static_cast<Env*>(ctx);
    auto it = env->vars.find(name);
    return it == env->vars.end() ? nullptr : it->second.c_str();
  }
};

struct Loaded {
  int rc;
  nm_config cfg;
  std::string msg;
};

Loaded Load(const std::string& json, const Env& env = Env()) {
  Loaded out{};
  nm_error err{};
  out.rc = nm_config_load_text(&out.cfg, json.c_str(), Env::Lookup, const_cast<Env*>(&env), &err);
  out.msg = err.msg;
  return out;
}

// The message must name the key, show the value and say what is allowed.
void ExpectRejected(const Loaded& l, const std::string& key, const std::string& value) {
  EXPECT_EQ(-EINVAL, l.rc);
  EXPECT_NE(std::string::npos, l.msg.find(key)) << l.msg;
  EXPECT_NE(std::string::npos, l.msg.find(value)) << l.msg;
  EXPECT_NE(std::string::npos, l.msg.find("allowed")) << l.msg;
}

// A config file of the test's, with `text` in it; gone with the object.
class TempFile {
 public:
  explicit TempFile(const char* text) {
    const char* dir = getenv("TEST_TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/nm_config_testXXXXXX";
    int fd = mkstemp(&path_[0]);
    EXPECT_GE(fd, 0);
    if (fd >= 0)
      close(fd);
    Write(text);
  }
  ~TempFile() { remove(path_.c_str()); }
  void Write(const char* text) {
    FILE* f = fopen(path_.c_str(), "w");
    ASSERT_NE(nullptr, f);
    fputs(text, f);
    fclose(f);
  }
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

TEST(ConfigPresets, EveryPresetLoadsAndPassesTheChecks) {
  size_t n;
  const char* const* names = nm_preset_names(&n);
  ASSERT_EQ(5u, n);
  for (size_t i = 0; i < n; i++) {
    nm_config cfg;
    nm_error err;
    ASSERT_EQ(0, nm_preset_load(&cfg, names[i], &err)) << err.msg;
    EXPECT_EQ(0, nm_config_check(&cfg, &err)) << names[i] << ": " << err.msg;
    EXPECT_STREQ(names[i], cfg.preset);
    EXPECT_GE(cfg.link.mtu_bytes, 1024u);
  }
  nm_config ideal;
  nm_preset_load(&ideal, "ideal", nullptr);
  EXPECT_EQ(NM_BANDWIDTH_INFINITE, ideal.link.bandwidth_bps);
  EXPECT_EQ(0u, ideal.link.latency_ns + ideal.sw.latency_ns + ideal.nic.tx_delay_ns);
  EXPECT_EQ(0.0, ideal.impair.loss_rate);
}

TEST(ConfigPresets, DefaultIsTheDocumentedOne) {
  Loaded l = Load("");
  ASSERT_EQ(0, l.rc) << l.msg;
  EXPECT_STREQ(NM_PRESET_DEFAULT, l.cfg.preset);
  EXPECT_STREQ("roce-100g", l.cfg.preset);
  EXPECT_EQ(100000000000ull, l.cfg.link.bandwidth_bps);
}

TEST(ConfigPrecedence, EnvironmentOverJsonOverPreset) {
  const std::string json = R"({"preset": "roce-25g",
    "link": {"mtu": 2048, "latency_ns": 777},
    "switch": {"flow_control": "drop", "buffer_bytes": 100000},
    "loss": {"rate": 0.01, "drop": [{"flow": 3, "nth": 2}]},
    "faults": {"link_down": [{"link": 0, "down_ns": 10, "up_ns": 20}]},
    "seed": 42})";
  Env env;
  env.vars["FI_SIM_LINK_MTU"] = "4096";
  env.vars["FI_SIM_SEED"] = "7";
  Loaded l = Load(json, env);
  ASSERT_EQ(0, l.rc) << l.msg;
  EXPECT_STREQ("roce-25g", l.cfg.preset);
  EXPECT_EQ(25000000000ull, l.cfg.link.bandwidth_bps);  // preset
  EXPECT_EQ(777u, l.cfg.link.latency_ns);               // JSON over preset
  EXPECT_EQ(4096u, l.cfg.link.mtu_bytes);               // env over JSON
  EXPECT_EQ(7u, l.cfg.seed);
  EXPECT_EQ(NM_FLOW_CONTROL_DROP, l.cfg.sw.flow_control);
  EXPECT_EQ(0.01, l.cfg.impair.loss_rate);
  ASSERT_EQ(1u, l.cfg.drop_count);
  EXPECT_EQ(3u, l.cfg.drops[0].flow);
  EXPECT_EQ(2u, l.cfg.drops[0].nth);
  ASSERT_EQ(1u, l.cfg.fault_count);
  EXPECT_EQ(20u, l.cfg.faults[0].up_at);

  env.vars["FI_SIM_PRESET"] = "ib-ndr-400g";  // the preset from the environment wins too
  Loaded m = Load(json, env);
  ASSERT_EQ(0, m.rc) << m.msg;
  EXPECT_STREQ("ib-ndr-400g", m.cfg.preset);
  EXPECT_EQ(400000000000ull, m.cfg.link.bandwidth_bps);
  EXPECT_EQ(777u, m.cfg.link.latency_ns);

  // A bad preset in the file is an error even where the environment's wins.
  ExpectRejected(Load(R"({"preset": "bogus"})", env), "preset", "bogus");
  ExpectRejected(Load(R"({"preset": 5})", env), "preset", "5");
}

TEST(ConfigPrecedence, EnvironmentListsAndTopology) {
  Env env;
  env.vars["FI_SIM_LOSS_DROP"] = "1:5,2:7";
  env.vars["FI_SIM_FAULTS_LINK_DOWN"] = "3:100:200,4:1000";
  env.vars["FI_SIM_TOPOLOGY_KIND"] = "fattree";
  env.vars["FI_SIM_TOPOLOGY_HOSTS"] = "64";
  env.vars["FI_SIM_TOPOLOGY_HOSTS_PER_LEAF"] = "16";
  env.vars["FI_SIM_TOPOLOGY_UPLINKS_PER_LEAF"] = "8";
  env.vars["FI_SIM_LINK_BANDWIDTH_GBPS"] = "12.5";
  Loaded l = Load("", env);
  ASSERT_EQ(0, l.rc) << l.msg;
  ASSERT_EQ(2u, l.cfg.drop_count);
  EXPECT_EQ(7u, l.cfg.drops[1].nth);
  ASSERT_EQ(2u, l.cfg.fault_count);
  EXPECT_EQ(NM_TIME_NEVER, l.cfg.faults[1].up_at);
  EXPECT_EQ(NM_TOPO_FATTREE, l.cfg.topology.kind);
  EXPECT_EQ(12500000000ull, l.cfg.link.bandwidth_bps);
}

TEST(ConfigPrecedence, EnvpArrayLookup) {
  const char* envp[] = {"PATH=/bin", "FI_SIM_SEED=99", "FI_SIM_SEEDX=1", nullptr};
  EXPECT_STREQ("99", nm_env_from_envp(envp, "FI_SIM_SEED"));
  EXPECT_EQ(nullptr, nm_env_from_envp(envp, "FI_SIM_LINK_MTU"));
  nm_config cfg;
  nm_error err;
  ASSERT_EQ(0, nm_config_load(&cfg, nullptr, nm_env_from_envp, envp, &err)) << err.msg;
  EXPECT_EQ(99u, cfg.seed);
}

TEST(ConfigKeys, EnvNamesMapBothWays) {
  char name[64];
  nm_config_env_name("link.bandwidth_gbps", name, sizeof(name));
  EXPECT_STREQ("FI_SIM_LINK_BANDWIDTH_GBPS", name);
  EXPECT_STREQ("loss.burst_length", nm_config_key_from_env("FI_SIM_LOSS_BURST_LENGTH"));
  EXPECT_EQ(nullptr, nm_config_key_from_env("FI_SIM_NODE"));  // the provider's, not ours
  size_t count = nm_config_key_count();
  EXPECT_GE(count, 30u);
  for (size_t i = 0; i < count; i++) {
    const nm_config_key_info* k = nm_config_key(i);
    nm_config_env_name(k->key, name, sizeof(name));
    EXPECT_STREQ(k->key, nm_config_key_from_env(name));
    EXPECT_NE(nullptr, k->allowed);
  }
  EXPECT_EQ(nullptr, nm_config_key(count));
}

TEST(ConfigFile, LoadsFromAFileAndReportsMissingOnes) {
  TempFile file("{\"preset\": \"ib-hdr-200g\",\n \"link\": {\"latency_ns\": 5}}\n");
  const char* path = file.path();
  nm_config cfg;
  nm_error err;
  ASSERT_EQ(0, nm_config_load(&cfg, path, nullptr, nullptr, &err)) << err.msg;
  EXPECT_STREQ("ib-hdr-200g", cfg.preset);
  EXPECT_EQ(5u, cfg.link.latency_ns);
  remove(path);
  EXPECT_EQ(-ENOENT, nm_config_load(&cfg, path, nullptr, nullptr, &err));
  EXPECT_NE(std::string::npos, std::string(err.msg).find(path));
  // A directory opens for reading but is no file: said so, not a parse
  // error "near end of file".
  EXPECT_EQ(-EINVAL, nm_config_load(&cfg, "/tmp", nullptr, nullptr, &err));
  EXPECT_NE(std::string::npos, std::string(err.msg).find("is a directory")) << err.msg;
  // A pipe nobody writes to is refused at once: opening it would wait for ever.
  ASSERT_EQ(0, mkfifo(path, 0600)) << strerror(errno);
  EXPECT_EQ(-EINVAL, nm_config_load(&cfg, path, nullptr, nullptr, &err));
  EXPECT_NE(std::string::npos, std::string(err.msg).find("is a pipe")) << err.msg;
  EXPECT_EQ(-EINVAL, nm_config_file_usable(path, &err));
}

// A bad value says where it came from: the file (by its path) or the variable.
TEST(ConfigErrors, ABadValueNamesItsFileOrVariable) {
  TempFile file("{\"seed\": \"five\"}\n");
  const char* path = file.path();
  nm_config cfg;
  nm_error err;
  EXPECT_EQ(-EINVAL, nm_config_load(&cfg, path, nullptr, nullptr, &err));
  EXPECT_EQ(0u, std::string(err.msg).find(std::string("config file ") + path + ": seed:"))
      << err.msg;
  file.Write("{\"preset\": \"nope\"}\n");
  EXPECT_EQ(-EINVAL, nm_config_load(&cfg, path, nullptr, nullptr, &err));
  EXPECT_EQ(0u, std::string(err.msg).find(std::string("config file ") + path + ": preset:"))
      << err.msg;
  const char* envp[] = {"FI_SIM_PRESET=bogus", nullptr};
  EXPECT_EQ(-EINVAL, nm_config_load(&cfg, nullptr, nm_env_from_envp, envp, &err));
  EXPECT_EQ(0u, std::string(err.msg).find("FI_SIM_PRESET (environment): preset:")) << err.msg;
}

TEST(ConfigErrors, UnparsableJsonGivesLineAndColumn) {
  Loaded l = Load("{\n  \"link\": {\n    \"mtu\": 4096,,\n  }\n}");
  EXPECT_EQ(-EINVAL, l.rc);
  EXPECT_NE(std::string::npos, l.msg.find("line 3")) << l.msg;
  EXPECT_NE(std::string::npos, l.msg.find("column")) << l.msg;
  Loaded dup = Load(R"({"seed": 1, "seed": 2})");
  EXPECT_EQ(-EINVAL, dup.rc);
  EXPECT_NE(std::string::npos, dup.msg.find("duplicate")) << dup.msg;
  Loaded not_object = Load("[1, 2]");
  EXPECT_EQ(-EINVAL, not_object.rc);
  EXPECT_NE(std::string::npos, not_object.msg.find("[1,2]")) << not_object.msg;
}

TEST(ConfigErrors, UnknownKeys) {
  ExpectRejected(Load(R"({"link": {"mtux": 4096}})"), "link.mtux", "mtu");
  ExpectRejected(Load(R"({"bandwidth": 4})"), "bandwidth", "link");
  ExpectRejected(Load(R"({"loss": {"drop": [{"flow": 1, "nth": 2, "when": 3}]}})"),
                 "loss.drop[0]", "when");
}

// A whole number written as JSON writes large ones (1e15, as the allowed ranges are written)
// is a number; a fraction is not, nor what is past the range.
TEST(ConfigValues, AWholeNumberInExponentFormIsANumber) {
  Loaded l = Load(R"({"link": {"latency_ns": 1e3}})");
  ASSERT_EQ(0, l.rc) << l.msg;
  EXPECT_EQ(1000u, l.cfg.link.latency_ns);
  ExpectRejected(Load(R"({"link": {"latency_ns": 1.5}})"), "link.latency_ns", "1.5");
  ExpectRejected(Load(R"({"link": {"latency_ns": 1e20}})"), "link.latency_ns", "out of range");
  ExpectRejected(Load(R"({"link": {"latency_ns": -1e3}})"), "link.latency_ns", "negative");
}

// A list entry that is no object is told the object form the file takes (the environment's
// "0:10:5" is not one).
TEST(ConfigErrors, AListEntryIsToldTheObjectForm) {
  Loaded l = Load(R"({"faults": {"link_down": ["0:10:5"]}})");
  ExpectRejected(l, "faults.link_down[0]", "\"0:10:5\"");
  EXPECT_NE(std::string::npos, l.msg.find(R"({"link": L, "down_ns": T)")) << l.msg;
  l = Load(R"({"loss": {"drop": ["1:2"]}})");
  EXPECT_NE(std::string::npos, l.msg.find(R"({"flow": F, "nth": N})")) << l.msg;
}

// A file that also holds its caller's keys: those are left alone, and named among the
// allowed ones when a key is unknown.
TEST(ConfigFile, KeysOfTheCallersAreLeftToIt) {
  TempFile file("{\"seed\": 4, \"mine\": {\"any\": 1}}\n");
  const char* path = file.path();
  const char* const foreign[] = {"mine", "also", nullptr};
  nm_config cfg;
  nm_error err;
  ASSERT_EQ(0, nm_config_load_sharing(&cfg, path, foreign, nullptr, nullptr, &err)) << err.msg;
  EXPECT_EQ(4u, cfg.seed);
  EXPECT_EQ(-EINVAL, nm_config_load(&cfg, path, nullptr, nullptr, &err));
  file.Write("{\"mien\": 1}\n");
  EXPECT_EQ(-EINVAL, nm_config_load_sharing(&cfg, path, foreign, nullptr, nullptr, &err));
  EXPECT_NE(std::string::npos, std::string(err.msg).find("mr, mine, also)")) << err.msg;
}

TEST(ConfigErrors, WrongTypes) {
  ExpectRejected(Load(R"({"link": {"mtu": "4096"}})"), "link.mtu", "\"4096\"");
  ExpectRejected(Load(R"({"link": {"mtu": 4096.5}})"), "link.mtu", "4096.5");
  ExpectRejected(Load(R"({"link": {"mtu": true}})"), "link.mtu", "true");
  ExpectRejected(Load(R"({"link": 5})"), "link", "5");
  ExpectRejected(Load(R"({"switch": {"flow_control": 1}})"), "switch.flow_control", "1");
  ExpectRejected(Load(R"({"loss": {"drop": {"flow": 1}}})"), "loss.drop", "{\"flow\":1}");
  ExpectRejected(Load(R"({"preset": 3})"), "preset", "3");
  Env env;
  env.vars["FI_SIM_LINK_MTU"] = "big";
  ExpectRejected(Load("", env), "link.mtu", "\"big\"");
  Loaded l = Load("", env);
  EXPECT_NE(std::string::npos, l.msg.find("FI_SIM_LINK_MTU")) << l.msg;
  env.vars["FI_SIM_LINK_MTU"] = "4096 ";
  ExpectRejected(Load("", env), "link.mtu", "\"4096 \"");
}

TEST(ConfigErrors, NegativeValues) {
  ExpectRejected(Load(R"({"link": {"latency_ns": -5}})"), "link.latency_ns", "-5");
  ExpectRejected(Load(R"({"loss": {"rate": -0.1}})"), "loss.rate", "-0.1");
  Env env;
  env.vars["FI_SIM_SEED"] = "-1";
  ExpectRejected(Load("", env), "seed", "\"-1\"");
  env.vars.clear();
  env.vars["FI_SIM_LINK_BANDWIDTH_GBPS"] = "-25";
  ExpectRejected(Load("", env), "link.bandwidth_gbps", "\"-25\"");
}

TEST(ConfigErrors, OutOfRange) {
  ExpectRejected(Load(R"({"link": {"mtu": 10}})"), "link.mtu", "10");
  ExpectRejected(Load(R"({"link": {"bandwidth_gbps": 1e9}})"), "link.bandwidth_gbps", "1");
  ExpectRejected(Load(R"({"loss": {"rate": 1.5}})"), "loss.rate", "1.5");
  ExpectRejected(Load(R"({"mr": {"page_size": 5000}})"), "mr.page_size", "5000");
  ExpectRejected(Load(R"({"loss": {"burst_rate": 0.6, "burst_length": 1}})"), "loss.burst_rate",
                 "0.6");
  ExpectRejected(Load(R"({"loss": {"drop": [{"flow": 1, "nth": 0}]}})"), "loss.drop[0].nth", "0");
  ExpectRejected(Load(R"({"faults": {"link_down": [{"link": 0, "down_ns": 9, "up_ns": 9}]}})"),
                 "faults.link_down[0].up_ns", "9");
  ExpectRejected(Load(R"({"faults": {"link_down": [{"link": 99, "down_ns": 9}]}})"),
                 "faults.link_down[0].link", "99");
  ExpectRejected(Load(R"({"switch": {"buffer_bytes": 100}})"), "switch.buffer_bytes", "100");
  ExpectRejected(Load(R"({"topology": {"kind": "pair", "hosts": 3}})"), "topology.hosts", "3");
  ExpectRejected(Load(R"({"loss": {"reorder_rate": 0.1}})"), "loss.reorder_rate", "0.1");
  Env env;
  env.vars["FI_SIM_SEED"] = "99999999999999999999999";
  ExpectRejected(Load("", env), "seed", "99999999999999999999999");
  env.vars.clear();
  env.vars["FI_SIM_LOSS_DROP"] = "1:2:3";
  ExpectRejected(Load("", env), "loss.drop", "1:2:3");
  // An empty field or entry is malformed, not one less (0::5 was "down at
  // 5, never up").
  env.vars.clear();
  env.vars["FI_SIM_FAULTS_LINK_DOWN"] = "0::5";
  ExpectRejected(Load("", env), "faults.link_down", "0::5");
  for (const char* drop : {"1:2:", "1:2,", ":1:2", "1:2,,3:4"}) {
    env.vars.clear();
    env.vars["FI_SIM_LOSS_DROP"] = drop;
    Loaded l = Load("", env);
    EXPECT_EQ(-EINVAL, l.rc) << drop;
    EXPECT_NE(std::string::npos, l.msg.find("malformed")) << drop << ": " << l.msg;
  }
  env.vars.clear();
  env.vars["FI_SIM_LOSS_DROP"] = "";
  EXPECT_EQ(0, Load("", env).rc) << "an empty list";
}

TEST(ConfigErrors, UnknownNames) {
  ExpectRejected(Load(R"({"preset": "roce-1t"})"), "preset", "roce-1t");
  Env env;
  env.vars["FI_SIM_PRESET"] = "nope";
  ExpectRejected(Load("", env), "preset", "nope");
  ExpectRejected(Load(R"({"topology": {"kind": "torus"}})"), "topology.kind", "torus");
  ExpectRejected(Load(R"({"switch": {"flow_control": "xoff"}})"), "switch.flow_control",
                 "xoff");
}

TEST(ConfigValues, FlowControlByCredits) {
  nm_config cfg;
  nm_error err;
  ASSERT_EQ(0, nm_preset_load(&cfg, "roce-100g", &err));
  ASSERT_EQ(0, nm_config_set(&cfg, "switch.flow_control", "credit", &err)) << err.msg;
  EXPECT_EQ(NM_FLOW_CONTROL_CREDIT, cfg.sw.flow_control);
}

TEST(ConfigSet, DirectSetterUsesTheSameChecks) {
  nm_config cfg;
  nm_error err;
  ASSERT_EQ(0, nm_preset_load(&cfg, "ideal", &err));
  EXPECT_EQ(0, nm_config_set(&cfg, "link.mtu", "1024", &err));
  EXPECT_EQ(1024u, cfg.link.mtu_bytes);
  EXPECT_EQ(-EINVAL, nm_config_set(&cfg, "link.mtu", "1", &err));
  EXPECT_EQ(-EINVAL, nm_config_set(&cfg, "no.such", "1", &err));
  EXPECT_NE(std::string::npos, std::string(err.msg).find("no.such"));
}

}  // namespace
