// evaluation/collective_fit.hpp: runs made from known NCCL-shaped costs (formulas written
// here, not core/nccl_cost_model's) are fitted back to those costs, and a published run is
// fitted well enough to predict its own rows.
#include "evaluation/collective_fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/errors.hpp"
#include "core/nccl_cost_model.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {
namespace {

const std::string kRoot = SYMMESH_SOURCE_DIR;

ClusterSpec dgx_h100() {
  return load_cluster(kRoot + "/scenarios/clusters/dgx-h100.yaml");
}

// A run of `gpus` on `nodes` hosts, sizes 8 B × 4^i up to 4 GiB, each timed by `time_s`.
template <class Time>
NcclTestsRun made_run(BandwidthCollective op, int gpus, int nodes, Time time_s) {
  NcclTestsRun run;
  run.file = "made.txt";
  run.collective = op;
  run.gpus = gpus;
  run.nodes = nodes;
  for (int64_t bytes = 8; bytes <= (int64_t{4} << 30); bytes *= 4) {
    NcclTestsRow row;
    row.bytes = bytes;
    row.time_s = time_s(static_cast<double>(bytes), gpus);
    run.rows.push_back(row);
  }
  return run;
}

TEST(CollectiveFit, RecoversOneRingVariantWithItsStepLatency) {
  // all_reduce: time = 20 us + 2(p-1) × 1 us + bytes × 2(p-1)/p / 300 GB/s, at p = 4 and 8
  // (two group sizes, so the step latency is identifiable).
  const auto time = [](double bytes, int p) {
    return 20e-6 + 2 * (p - 1) * 1e-6 + bytes * 2.0 * (p - 1) / p / 300e9;
  };
  const CollectiveFit fit =
      fit_collectives({{made_run(BandwidthCollective::all_reduce, 4, 1, time), false},
                       {made_run(BandwidthCollective::all_reduce, 8, 1, time), false}},
                      dgx_h100());
  const auto& variants = fit.tuning.intra_node.of(BandwidthCollective::all_reduce);
  ASSERT_GE(variants.size(), 1u);
  // Whatever the envelope's split, the variant serving the largest sizes is the bandwidth one.
  const CollectiveVariant& simple = variants.back();
  EXPECT_EQ(simple.algorithm, LibraryAlgorithm::ring);
  EXPECT_EQ(simple.protocol, "Simple");
  EXPECT_NEAR(simple.bus_bandwidth_bytes_per_s / 300e9, 1, 1e-6);
  ASSERT_EQ(fit.errors.size(), 1u);
  EXPECT_LT(fit.errors[0].max_relative_error, 1e-6);
  EXPECT_EQ(fit.errors[0].points, 2 * 15);  // 8 B … 4 GiB by ×4: 15 sizes per run
  if (variants.size() == 1) {
    EXPECT_NEAR(simple.base_latency_s / 20e-6, 1, 1e-6);
    EXPECT_NEAR(simple.step_latency_s / 1e-6, 1, 1e-6);
  }
}

TEST(CollectiveFit, OneGroupSizeFitsNoStepLatency) {
  // p = 8 only: base and steps × step are one constant, so step stays 0 and base takes it:
  // 20 us + 7 × 1 us = 27 us for an all_gather (p-1 steps).
  const auto time = [](double bytes, int p) {
    return 20e-6 + (p - 1) * 1e-6 + bytes * (p - 1.0) / p / 350e9;
  };
  const CollectiveFit fit =
      fit_collectives({{made_run(BandwidthCollective::all_gather, 8, 1, time), false}}, dgx_h100());
  const auto& v = fit.tuning.intra_node.of(BandwidthCollective::all_gather);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].step_latency_s, 0);
  EXPECT_NEAR(v[0].base_latency_s / 27e-6, 1, 1e-6);
  EXPECT_NEAR(v[0].bus_bandwidth_bytes_per_s / 350e9, 1, 1e-6);
}

TEST(CollectiveFit, TwoProtocolsMakeALowerEnvelope) {
  // LL: 5 us, 40 GB/s; Simple: 30 us, 400 GB/s (reduce_scatter, p = 8, factor 7/8); the
  // envelope is their minimum (they cross near 1 MB of bus bytes: 25 us / (1/40 - 1/400
  // ns/B) = 1.11e6 B).
  const auto time = [](double bytes, int p) {
    const double bus = bytes * (p - 1.0) / p;
    return std::min(5e-6 + bus / 40e9, 30e-6 + bus / 400e9);
  };
  const CollectiveFit fit = fit_collectives(
      {{made_run(BandwidthCollective::reduce_scatter, 8, 1, time), false}}, dgx_h100());
  const auto& v = fit.tuning.intra_node.of(BandwidthCollective::reduce_scatter);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].protocol, "LL128");  // two variants: the last two names, by bandwidth
  EXPECT_EQ(v[1].protocol, "Simple");
  EXPECT_NEAR(v[0].base_latency_s / 5e-6, 1, 1e-6);
  EXPECT_NEAR(v[0].bus_bandwidth_bytes_per_s / 40e9, 1, 1e-6);
  EXPECT_NEAR(v[1].base_latency_s / 30e-6, 1, 1e-6);
  EXPECT_NEAR(v[1].bus_bandwidth_bytes_per_s / 400e9, 1, 1e-6);
}

TEST(CollectiveFit, AcrossNodesTheBandwidthIsPerNic) {
  // 2 nodes × 8 GPUs of a DGX H100 (8 NICs per node): the group's channels use
  // min(8 × 8/8, 8/1) = 8 NICs, so a group bus bandwidth of 8 × 45 GB/s is 45 GB/s per NIC.
  const auto time = [](double bytes, int p) { return 50e-6 + bytes * (p - 1.0) / p / (8 * 45e9); };
  const CollectiveFit fit = fit_collectives(
      {{made_run(BandwidthCollective::all_gather, 16, 2, time), false}}, dgx_h100());
  const auto& v = fit.tuning.inter_node.of(BandwidthCollective::all_gather);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NEAR(v[0].bus_bandwidth_bytes_per_s / 45e9, 1, 1e-6);
  EXPECT_TRUE(fit.tuning.intra_node.empty());
  EXPECT_EQ(fit.errors[0].scope, "inter_node");
  // One GPU per node on 10 nodes: each node's one rank reaches its own NIC only, 1 NIC.
  NcclTestsRun ten;
  ten.gpus = 10;
  ten.nodes = 10;
  EXPECT_EQ(group_nics(dgx_h100(), run_geometry(dgx_h100(), ten)), 1);
}

TEST(CollectiveFit, ARunWithIdleNicsFitsALowerBoundThatRoundTrips) {
  // 10 nodes × 1 GPU: the group's share of a node is all 8 NICs, so a measured 40 GB/s bus
  // bandwidth (under the one NIC's 50 GB/s line rate) is stored as 40 / 8 = 5 GB/s per NIC,
  // and predicting the same run gives min(8 × 5, 1 × 50) = 40 GB/s back.
  const auto time = [](double bytes, int p) { return 50e-6 + bytes * (p - 1.0) / p / 40e9; };
  const ClusterSpec cluster = dgx_h100();
  const NcclTestsRun run = made_run(BandwidthCollective::all_gather, 10, 10, time);
  const CollectiveFit fit = fit_collectives({{run, false}}, cluster);
  const auto& v = fit.tuning.inter_node.of(BandwidthCollective::all_gather);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NEAR(v[0].bus_bandwidth_bytes_per_s / 5e9, 1, 1e-6);
  ClusterSpec fitted = cluster;
  fitted.nodes = 10;
  fitted.collectives = fit.tuning;
  const GroupGeometry g = run_geometry(fitted, run);
  for (const NcclTestsRow& row : run.rows)
    EXPECT_NEAR(estimate_library_collective(fitted, BandwidthCollective::all_gather, g,
                                            static_cast<double>(row.bytes))
                        .time_s /
                    row.time_s,
                1, 0.03)
        << row.bytes << " B";
}

TEST(CollectiveFit, NamesAlgorithmsAndRefusesNvlsAcrossNodes) {
  const auto time = [](double bytes, int) { return 10e-6 + bytes / 100e9; };
  const CollectiveFit fit =
      fit_collectives({{made_run(BandwidthCollective::all_to_all, 8, 1, time), false},
                       {made_run(BandwidthCollective::sendrecv, 8, 1, time), false},
                       {made_run(BandwidthCollective::all_reduce, 8, 1, time), true}},
                      dgx_h100());
  EXPECT_EQ(fit.tuning.intra_node.of(BandwidthCollective::all_to_all)[0].algorithm,
            LibraryAlgorithm::pairwise);
  EXPECT_EQ(fit.tuning.intra_node.of(BandwidthCollective::sendrecv)[0].algorithm,
            LibraryAlgorithm::direct);
  EXPECT_EQ(fit.tuning.intra_node.of(BandwidthCollective::all_reduce)[0].algorithm,
            LibraryAlgorithm::nvls);
  EXPECT_THROW(
      fit_collectives({{made_run(BandwidthCollective::all_reduce, 16, 2, time), true}}, dgx_h100()),
      InvalidArgument);
  // 16 GPUs on one host does not fit 8 GPUs per node.
  EXPECT_THROW(fit_collectives({{made_run(BandwidthCollective::all_reduce, 16, 1, time), false}},
                               dgx_h100()),
               InvalidArgument);
}

// Files within the row bound may still add up past it for one fit: refused, not fitted
// for minutes (about 2 s per 10,000 points).
TEST(CollectiveFit, MorePointsThanTheBoundOverSeveralFilesAreRefused) {
  const auto time = [](double bytes, int) { return 20e-6 + bytes / 300e9; };
  NcclTestsRun run = made_run(BandwidthCollective::all_reduce, 8, 1, time);
  const NcclTestsRow row = run.rows.back();
  run.rows.assign(kMostNcclTestsRows / 2 + 1, row);
  try {
    fit_collectives({{run, false}, {run, false}}, dgx_h100());
    FAIL() << "a fit of more points than the bound ran";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "made.txt");
    EXPECT_NE(e.message().find("10002 points to fit intra_node all_reduce (ring), more than "
                               "the 10000"),
              std::string::npos)
        << e.message();
  }
}

TEST(CollectiveFit, FitQualityOnAPublishedRing) {
  // A fit quality check, not a validation: Together's 1x8 H100 ring all_reduce (31 sizes,
  // 8 B … 8 GiB) fitted, then each of its own rows predicted with
  // estimate_library_collective on a cluster holding the fit: median |error| under 10 %.
  const NcclTestsRun run = read_nccl_tests_file(
      kRoot + "/tools/validation/published/nccl/h100_1x8_together_allreduce_ring.txt");
  ClusterSpec cluster = dgx_h100();
  cluster.collectives = fit_collectives({{run, false}}, cluster).tuning;
  const GroupGeometry group{8, 1, 8, 1};
  std::vector<double> errors;
  for (const NcclTestsRow& row : run.rows) {
    const double predicted = estimate_library_collective(cluster, BandwidthCollective::all_reduce,
                                                         group, static_cast<double>(row.bytes))
                                 .time_s;
    errors.push_back(std::abs(predicted - row.time_s) / row.time_s);
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2];
  std::printf(
      "fit quality, together 1x8 ring all_reduce: median %.1f %%, max %.1f %% over %zu rows\n",
      100 * median, 100 * errors.back(), errors.size());
  EXPECT_LT(median, 0.10) << "median error " << median;
}

}  // namespace
}  // namespace symmesh::evaluation
