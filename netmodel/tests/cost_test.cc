// Host-side cost models: NIC overheads, registration cost c0 + c_page * pages, and the limits.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

extern "C" {
#include "netmodel/nm_cost.h"
#include "netmodel/nm_preset.h"
}

namespace {

nm_mr_params Mr(uint64_t max_regions, uint64_t max_bytes) {
  nm_mr_params p{};
  p.base_ns = 30000;
  p.per_page_ns = 500;
  p.page_size = 4096;
  p.max_regions = max_regions;
  p.max_bytes = max_bytes;
  return p;
}

TEST(Cost, PagesCountPartialPagesAtBothEnds) {
  nm_mr_params p = Mr(0, 0);
  EXPECT_EQ(0u, nm_mr_pages(&p, 0, 0));
  EXPECT_EQ(1u, nm_mr_pages(&p, 0, 1));
  EXPECT_EQ(1u, nm_mr_pages(&p, 0, 4096));
  EXPECT_EQ(2u, nm_mr_pages(&p, 0, 4097));
  EXPECT_EQ(2u, nm_mr_pages(&p, 4095, 2));     // straddles a boundary
  EXPECT_EQ(3u, nm_mr_pages(&p, 100, 8192));   // 100..8291 covers pages 0, 1, 2
  EXPECT_EQ(256u, nm_mr_pages(&p, 1 << 20, 1 << 20));
}

TEST(Cost, RegistrationCostIsBasePlusPerPage) {
  nm_mr_params p = Mr(0, 0);
  EXPECT_EQ(30000u + 500u, nm_mr_cost_ns(&p, 0, 1));
  EXPECT_EQ(30000u + 500u * 256, nm_mr_cost_ns(&p, 0, 1 << 20));
  // 1 GiB of 4 KiB pages: 30 us + 262144 * 0.5 us = 131.102 ms.
  EXPECT_EQ(131102000u, nm_mr_cost_ns(&p, 0, 1ull << 30));
}

TEST(Cost, LimitsOnRegionsAndBytesAreEnforcedWithoutSideEffects) {
  nm_mr_params p = Mr(2, 10000);
  nm_mr_ledger ledger;
  nm_mr_ledger_init(&ledger, &p);
  nm_time_ns cost = 0;
  nm_error err;
  EXPECT_EQ(0, nm_mr_register(&ledger, 0, 4000, &cost, &err));
  EXPECT_EQ(30500u, cost);
  EXPECT_EQ(-ENOMEM, nm_mr_register(&ledger, 0, 6001, &cost, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "mr.max_bytes"));
  EXPECT_EQ(1u, ledger.regions);
  EXPECT_EQ(4000u, ledger.bytes);
  EXPECT_EQ(0, nm_mr_register(&ledger, 0, 6000, &cost, &err));
  EXPECT_EQ(-ENOSPC, nm_mr_register(&ledger, 0, 1, &cost, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "mr.max_regions"));
  EXPECT_EQ(0, nm_mr_deregister(&ledger, 6000, &err));
  EXPECT_EQ(0, nm_mr_register(&ledger, 0, 1, &cost, &err));
  EXPECT_EQ(-EINVAL, nm_mr_register(&ledger, 0, 0, &cost, &err));
  nm_mr_ledger empty;
  nm_mr_ledger_init(&empty, &p);
  EXPECT_EQ(-EINVAL, nm_mr_deregister(&empty, 1, &err));
}

TEST(Cost, UnlimitedWhenLimitsAreZero) {
  nm_mr_params p = Mr(0, 0);
  nm_mr_ledger ledger;
  nm_mr_ledger_init(&ledger, &p);
  for (int i = 0; i < 1000; i++) ASSERT_EQ(0, nm_mr_register(&ledger, 0, 1ull << 40, nullptr, nullptr));
}

TEST(Cost, NicOverheadsAddTheirParts) {
  nm_nic_params nic{100, 200, 300};
  EXPECT_EQ(400u, nm_nic_send_overhead_ns(&nic));
  EXPECT_EQ(500u, nm_nic_recv_overhead_ns(&nic));
}

TEST(Cost, PresetsUsePublishedRegistrationRanges) {
  size_t n;
  const char* const* names = nm_preset_names(&n);
  for (size_t i = 0; i < n; i++) {
    nm_config cfg;
    ASSERT_EQ(0, nm_preset_load(&cfg, names[i], nullptr));
    if (strcmp(names[i], "ideal") == 0) {
      EXPECT_EQ(0u, cfg.mr.base_ns);
      continue;
    }
    // Tens of microseconds fixed, 0.3-0.7 us per 4 KiB page.
    EXPECT_GE(cfg.mr.base_ns, 10000u) << names[i];
    EXPECT_LT(cfg.mr.base_ns, 100000u) << names[i];
    EXPECT_GE(cfg.mr.per_page_ns, 300u) << names[i];
    EXPECT_LE(cfg.mr.per_page_ns, 700u) << names[i];
    EXPECT_EQ(4096u, cfg.mr.page_size);
  }
}

}  // namespace
