// What must hold before any NCCL call, checked without a GPU: one GPU per rank, memory,
// compute capability, executor options, the Program's own argument checks that the
// hardware relies on (one-sided cases 15 and 16), and the error macros.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "hw/checks.hpp"
#include "hw/program_executor.hpp"
#include "hw/toolkit_info.hpp"
#include "tests/hw/hw_test_support.hpp"

namespace symmesh::hw {
namespace {

using ::testing::HasSubstr;

TEST(RankCount, MoreRanksThanGpusIsRefusedWithTheReason) {
  try {
    check_world_fits(8, 2);
    FAIL() << "expected DeviceUnavailable";
  } catch (const DeviceUnavailable& e) {
    EXPECT_EQ(e.message(), "8 ranks but only 2 GPUs visible; NCCL refuses two ranks on one GPU");
  }
  try {
    check_world_fits(2, 1);
    FAIL();
  } catch (const DeviceUnavailable& e) {
    EXPECT_EQ(e.message(), "2 ranks but only 1 GPU visible; NCCL refuses two ranks on one GPU");
  }
  EXPECT_NO_THROW(check_world_fits(4, 8));
  try {
    check_world_fits(1, 0);
    FAIL();
  } catch (const DeviceUnavailable& e) {
    EXPECT_THAT(e.message(), HasSubstr("no GPU visible: symmesh run needs one GPU per rank"));
  }
}

TEST(RankCount, VisibleGpusNeverThrows) {
  const GpuInventory gpus = visible_gpus();
  if (gpus.count() == 0) {
    EXPECT_FALSE(gpus.why_none.empty());
  }
  for (const auto& g : gpus.gpus) EXPECT_GT(g.memory_bytes, 0);
}

GpuInventory fake_gpus(int count, int64_t memory, int capability) {
  GpuInventory out;
  for (int i = 0; i < count; ++i) out.gpus.push_back({"FakeGPU", capability, memory, 132});
  return out;
}

TEST(Preflight, AProgramLargerThanTheGpuIsRefusedBeforeNccl) {
  Program p(2);
  p.symm_alloc(p.world_group(), int64_t{40} << 30);
  const auto plan = plan_for_hardware(p, {});
  EXPECT_NO_THROW(check_devices_for(plan, fake_gpus(2, int64_t{80} << 30, 90), {0, 1}, 2, {0, 1}));
  try {
    check_devices_for(plan, fake_gpus(2, int64_t{24} << 30, 90), {0, 1}, 2, {0, 1});
    FAIL();
  } catch (const DeviceUnavailable& e) {
    EXPECT_THAT(e.message(), HasSubstr("rank 0 needs 40.00 GiB"));
    EXPECT_THAT(e.message(), HasSubstr("GPU 0 (FakeGPU) has 24.00 GiB"));
  }
  EXPECT_THROW(check_devices_for(plan, fake_gpus(1, int64_t{80} << 30, 90), {0, 1}, 2, {0, 1}),
               DeviceUnavailable);
}

TEST(Preflight, Fp8MatmulsNeedComputeCapability89) {
  Program p(1);
  MatmulWork w;
  w.m = w.n = w.k = 16;
  w.dtype = DType::fp8_e4m3;
  w.a = p.local_alloc(0, 256), w.b = p.local_alloc(0, 256), w.c = p.local_alloc(0, 256);
  p.matmul(0, p.stream(0, "main"), w, {"mm", OpCategory::compute, ""});
  const auto plan = plan_for_hardware(p, {});
  EXPECT_NO_THROW(check_devices_for(plan, fake_gpus(1, int64_t{80} << 30, 90), {0}, 1, {0}));
  try {
    check_devices_for(plan, fake_gpus(1, int64_t{80} << 30, 80), {0}, 1, {0});
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_THAT(e.message(), HasSubstr("compute capability 8.9"));
  }
}

TEST(ExecutorOptions, ValidateNamesTheField) {
  ExecutorOptions o;
  EXPECT_NO_THROW(o.validate());
  o.wait_timeout_s = 0;
  EXPECT_THROW(o.validate(), InvalidArgument);
  o = {};
  o.warmup_runs = -1;
  EXPECT_THROW(o.validate(), InvalidArgument);
}

TEST(ExecuteProgram, WithoutGpusItSaysSoBeforeAnyNcclCall) {
  if (visible_gpus().count() > 0) GTEST_SKIP() << "a GPU is visible";
  Program p(1);
  p.barrier(p.world_group(), "main");
  try {
    execute_program(p, {});
    FAIL() << "expected DeviceUnavailable";
  } catch (const DeviceUnavailable& e) {
    EXPECT_THAT(e.message(), HasSubstr("no GPU visible"));
  }
}

TEST(OneSidedErrors, PeerAndBoundsAreCheckedWhenTheProgramIsBuilt) {
  // Cases 15 and 16: the Program refuses them, so no kernel ever sees them.
  Program p(2);
  const auto h = p.symm_alloc(p.world_group(), 64);
  const auto src = p.local_alloc(0, 32);
  const StreamId s = p.stream(0, "main");
  EXPECT_THROW(p.put_signal(0, s, src, h, 0, 2, {}), InvalidArgument);
  EXPECT_THROW(p.put_signal(0, s, src, h, 0, -1, {}), InvalidArgument);
  EXPECT_THROW(p.put_signal(0, s, src, h, 33, 1, {}), InvalidArgument);
  EXPECT_NO_THROW(p.put_signal(0, s, src, h, 32, 1, {}));
  EXPECT_THROW(p.wait_signal(0, s, h, 5, {}), InvalidArgument);
}

TEST(ErrorChecks, MacrosThrowBackendErrorWithPlaceAndLibraryName) {
  try {
    CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_THAT(e.what(), HasSubstr("devices_test.cpp:"));
    EXPECT_THAT(e.what(), HasSubstr("cudaErrorMemoryAllocation"));
  }
  try {
    NCCL_CHECK(ncclInvalidUsage);
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_THAT(e.what(), HasSubstr("devices_test.cpp:"));
    EXPECT_THAT(e.what(), HasSubstr("ncclInvalidUsage failed: ncclInvalidUsage (invalid usage"));
  }
  try {
    CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_THAT(e.what(), HasSubstr("CUBLAS_STATUS_NOT_SUPPORTED"));
  }
}

TEST(Toolkit, DescribesVersionsAndTheOneSidedPath) {
  EXPECT_THAT(toolkit_description(), HasSubstr("NCCL 2."));
  EXPECT_THAT(one_sided_path(), HasSubstr("device API"));
  EXPECT_THAT(executor_description(), HasSubstr("threads"));
}

}  // namespace
}  // namespace symmesh::hw
