// The bytes a distributed sweep's processes send each other: every field of a point comes
// back as it was, doubles to the bit (the expectations are the values put in, not what the
// codec printed), and bytes that are not a point are refused naming where they came from.
#include "evaluation/sweep_point_codec.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "tests/thrown.hpp"

namespace symmesh::evaluation {
namespace {

// Bit patterns: -0.0 and 0.0, and each nan, differ here.
uint64_t bits(double d) {
  return std::bit_cast<uint64_t>(d);
}

SweepPoint awkward_point() {
  SweepPoint p;
  p.nodes = 4;
  p.gpus = 32;
  p.mesh = {2, 2, 8};
  p.recompute_fallback = true;
  p.micro_batch = 3;
  p.zero = 1;
  SimulationReport& r = p.report;
  r.scenario = "quoted \"name\"\nwith a newline and ünïcode";
  r.backend = "sim";
  r.cluster = "4 x DGX H100";
  r.mesh = "2x2x8 (dp,pp,tp)";
  r.cost_model = "dtensor";
  r.placement_search = "priority-queue";
  r.total_time_s = 0.1 + 0.2;  // 0.30000000000000004: %.6g would lose it
  OpReport op;
  op.name = "up";
  op.op = "mm";
  op.time_s = 1.0 / 3.0;
  op.start_s = -0.0;
  op.end_s = std::numeric_limits<double>::denorm_min();
  op.exposed_comm_s = std::numeric_limits<double>::max();
  op.on_comm_stream = true;
  op.comm_time_s = std::numeric_limits<double>::infinity();
  op.compute_time_s = 2.5e-300;
  op.peak_memory_bytes_per_rank = int64_t{1} << 62;
  op.bytes = -1;
  op.input_placements = std::vector<Placements>{
      {Placement::shard(0), Placement::replicate(), Placement::partial(ReduceOp::avg)},
      {Placement::replicate(), Placement::shard(1), Placement::partial()}};
  op.output_placements = Placements{Placement::shard(0), Placement::shard(1), Placement::partial()};
  op.out_placements =
      Placements{Placement::shard(0), Placement::replicate(), Placement::replicate()};
  op.implementation = "fused-allgather-mm";
  op.chunks = 4;
  op.max_abs_error = std::numeric_limits<double>::quiet_NaN();
  op.error_bound = std::numeric_limits<double>::infinity();
  op.group_size = 16;
  op.bandwidth = CollectiveBandwidth{1.0 / 7.0, 3e300};
  op.micro_batches = 7;
  op.redistributions.push_back({"a",
                                {Placement::partial(ReduceOp::avg)},
                                {Placement::replicate()},
                                "all_reduce over tp (32.00 MiB)",
                                12.345678901234567});
  r.ops.push_back(op);
  OpReport plain;  // no optional field set
  plain.name = "r0";
  plain.op = "all_reduce";
  r.ops.push_back(plain);
  r.collectives.push_back({CollectiveOp::matmul_reducescatter, "fused ring", 3, 1 << 20});
  r.collectives.push_back({CollectiveOp::all_gather, "ring", 1, 0});
  r.warnings = {"one", ""};
  StepReport step;
  step.peak_memory_bytes = 123456789012;
  step.memory_breakdown = "parameters 1.00 GiB";
  step.peak_op = "down.dgrad";
  step.capacity_bytes = 80 * (int64_t{1} << 30);
  step.gpu = "H100";
  step.serial_estimate_s = 1e-9;
  step.overlapped_estimate_s = 7e-10;
  step.layouts_priced = 99;
  step.states_expanded = 100;
  step.search_s = 0.001;
  step.beam_width = 8;
  step.gradient_reductions = 2;
  step.pipeline_stages = 2;
  step.virtual_stages = 2;
  step.micro_batches = 8;
  step.bubble_fraction = 1.0 / 16.0;
  step.stage_peak_bytes = {1, 2};
  r.step = step;
  ModelThroughput model;
  model.model = "llama3-8b";
  model.tokens_per_step = 32768;
  model.tokens_per_s = 1e7 / 3;
  model.tokens_per_s_per_gpu = 1e7 / 96;
  model.model_flops_per_s_per_gpu = 4.2e14;
  model.mfu = 0.4242424242424242;
  model.recompute = Recompute::full;
  r.model = model;
  return p;
}

void expect_same_placements(const Placements& a, const Placements& b) {
  EXPECT_EQ(to_string(a), to_string(b));
  EXPECT_EQ(a, b);
}

TEST(SweepPointCodec, EveryFieldOfASimulatedPointComesBackExactly) {
  const SweepPoint in = awkward_point();
  const SweepPoint out = decode_sweep_point(encode_sweep_point(in), "test");
  EXPECT_EQ(out.nodes, 4);
  EXPECT_EQ(out.gpus, 32);
  EXPECT_EQ(out.mesh, (std::vector<int>{2, 2, 8}));
  EXPECT_TRUE(out.recompute_fallback);
  EXPECT_EQ(out.micro_batch, 3);
  EXPECT_EQ(out.zero, 1);
  EXPECT_FALSE(out.skip_reason.has_value());
  const SimulationReport& r = out.report;
  EXPECT_EQ(r.scenario, in.report.scenario);
  EXPECT_EQ(r.backend, "sim");
  EXPECT_EQ(r.cluster, "4 x DGX H100");
  EXPECT_EQ(r.mesh, "2x2x8 (dp,pp,tp)");
  EXPECT_EQ(r.cost_model, "dtensor");
  EXPECT_EQ(r.placement_search, "priority-queue");
  EXPECT_EQ(bits(r.total_time_s), bits(0.1 + 0.2));
  ASSERT_EQ(r.ops.size(), 2u);
  const OpReport& op = r.ops[0];
  const OpReport& want = in.report.ops[0];
  EXPECT_EQ(op.name, "up");
  EXPECT_EQ(op.op, "mm");
  for (auto [got, expected] : {std::pair{op.time_s, want.time_s},
                               {op.start_s, want.start_s},
                               {op.end_s, want.end_s},
                               {op.exposed_comm_s, want.exposed_comm_s},
                               {op.comm_time_s, want.comm_time_s},
                               {op.compute_time_s, want.compute_time_s}})
    EXPECT_EQ(bits(got), bits(expected)) << expected;
  EXPECT_TRUE(std::signbit(op.start_s));  // -0.0 stays negative
  EXPECT_TRUE(op.on_comm_stream);
  EXPECT_EQ(op.peak_memory_bytes_per_rank, int64_t{1} << 62);
  EXPECT_EQ(op.bytes, -1);
  ASSERT_TRUE(op.input_placements.has_value());
  ASSERT_EQ(op.input_placements->size(), 2u);
  expect_same_placements((*op.input_placements)[0], (*want.input_placements)[0]);
  expect_same_placements((*op.input_placements)[1], (*want.input_placements)[1]);
  expect_same_placements(*op.output_placements, *want.output_placements);
  expect_same_placements(*op.out_placements, *want.out_placements);
  EXPECT_EQ(op.implementation, "fused-allgather-mm");
  EXPECT_EQ(op.chunks, 4);
  ASSERT_TRUE(op.max_abs_error.has_value());
  EXPECT_TRUE(std::isnan(*op.max_abs_error));
  ASSERT_TRUE(op.error_bound.has_value());
  EXPECT_TRUE(std::isinf(*op.error_bound));
  EXPECT_EQ(op.group_size, 16);
  ASSERT_TRUE(op.bandwidth.has_value());
  EXPECT_EQ(bits(op.bandwidth->algbw_bytes_per_s), bits(1.0 / 7.0));
  EXPECT_EQ(bits(op.bandwidth->busbw_bytes_per_s), bits(3e300));
  EXPECT_EQ(op.micro_batches, 7);
  ASSERT_EQ(op.redistributions.size(), 1u);
  EXPECT_EQ(op.redistributions[0].tensor, "a");
  expect_same_placements(op.redistributions[0].from, {Placement::partial(ReduceOp::avg)});
  expect_same_placements(op.redistributions[0].to, {Placement::replicate()});
  EXPECT_EQ(op.redistributions[0].steps, "all_reduce over tp (32.00 MiB)");
  EXPECT_EQ(bits(op.redistributions[0].estimated_us), bits(12.345678901234567));
  const OpReport& plain = r.ops[1];
  EXPECT_FALSE(plain.input_placements || plain.output_placements || plain.out_placements ||
               plain.max_abs_error || plain.error_bound || plain.bandwidth);
  EXPECT_EQ(plain.group_size, 0);
  EXPECT_EQ(plain.implementation, "unfused");
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].op, CollectiveOp::matmul_reducescatter);
  EXPECT_EQ(r.collectives[0].implementation, "fused ring");
  EXPECT_EQ(r.collectives[0].count, 3);
  EXPECT_EQ(r.collectives[0].bytes, 1 << 20);
  EXPECT_EQ(r.collectives[1].op, CollectiveOp::all_gather);
  EXPECT_EQ(r.warnings, (std::vector<std::string>{"one", ""}));
  ASSERT_TRUE(r.step.has_value());
  EXPECT_EQ(r.step->peak_memory_bytes, 123456789012);
  EXPECT_EQ(r.step->memory_breakdown, "parameters 1.00 GiB");
  EXPECT_EQ(r.step->peak_op, "down.dgrad");
  EXPECT_EQ(r.step->capacity_bytes, 80 * (int64_t{1} << 30));
  EXPECT_EQ(r.step->gpu, "H100");
  EXPECT_EQ(bits(r.step->serial_estimate_s), bits(1e-9));
  EXPECT_EQ(bits(r.step->overlapped_estimate_s), bits(7e-10));
  EXPECT_EQ(r.step->layouts_priced, 99);
  EXPECT_EQ(r.step->states_expanded, 100);
  EXPECT_EQ(bits(r.step->search_s), bits(0.001));
  EXPECT_EQ(r.step->beam_width, 8);
  EXPECT_EQ(r.step->gradient_reductions, 2);
  EXPECT_EQ(r.step->pipeline_stages, 2);
  EXPECT_EQ(r.step->virtual_stages, 2);
  EXPECT_EQ(r.step->micro_batches, 8);
  EXPECT_EQ(bits(r.step->bubble_fraction), bits(1.0 / 16.0));
  EXPECT_EQ(r.step->stage_peak_bytes, (std::vector<int64_t>{1, 2}));
  ASSERT_TRUE(r.model.has_value());
  EXPECT_EQ(r.model->model, "llama3-8b");
  EXPECT_EQ(r.model->tokens_per_step, 32768);
  EXPECT_EQ(bits(r.model->tokens_per_s), bits(1e7 / 3));
  EXPECT_EQ(bits(r.model->tokens_per_s_per_gpu), bits(1e7 / 96));
  EXPECT_EQ(bits(r.model->model_flops_per_s_per_gpu), bits(4.2e14));
  EXPECT_EQ(bits(r.model->mfu), bits(0.4242424242424242));
  EXPECT_EQ(r.model->recompute, Recompute::full);
}

TEST(SweepPointCodec, ASkippedPointKeepsItsReasonAndNoReport) {
  SweepPoint in;
  in.nodes = 3;
  in.gpus = 24;
  in.skip_reason = "no listed mesh shape covers 24 GPUs";
  const SweepPoint out = decode_sweep_point(encode_sweep_point(in), "test");
  EXPECT_EQ(out.skip_reason, in.skip_reason);
  EXPECT_TRUE(out.mesh.empty());
  EXPECT_EQ(out.micro_batch, 0);
  EXPECT_EQ(out.zero, -1);
  EXPECT_FALSE(out.report.step.has_value());
  EXPECT_TRUE(out.report.ops.empty());
}

TEST(SweepPointCodec, BytesThatAreNotAPointAreRefusedNamingWhere) {
  for (const std::string bytes : {"", "{", "[]", R"({"nodes": 1})",
                                  // a double that is no hexadecimal float
                                  R"({"nodes":1,"gpus":8,"mesh":[8],"recompute_fallback":false,
                                      "micro_batch":0,"zero":-1,"report":{"scenario":"s",
                                      "backend":"sim","cluster":"c","mesh":"8",
                                      "cost_model":"dtensor","placement_search":"",
                                      "total_time_s":"soon","ops":[],"collectives":[],
                                      "warnings":[]}})"}) {
    const auto e = testing::thrown<InvalidArgument>(
        [&] { decode_sweep_point(bytes, "sweep point from process 2"); });
    EXPECT_EQ(e.where(), "sweep point from process 2") << bytes;
    EXPECT_NE(e.message().find("not an encoded sweep point"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace symmesh::evaluation
