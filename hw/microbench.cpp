#include "hw/microbench.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>

#include "hw/checks.hpp"
#include "hw/devices.hpp"
#include "hw/matmul.hpp"

namespace symmesh::hw {
namespace {

// Owns device buffers and events for one benchmark.
struct Buffers {
  std::vector<void*> memory;
  std::vector<cudaEvent_t> events;
  cudaStream_t stream = nullptr;
  ~Buffers() {
    for (void* p : memory) cudaFree(p);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
  }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 256)));
    memory.push_back(p);
    CUDA_CHECK(cudaMemset(p, 0x3c, bytes));  // small non-zero values in every float type
    return p;
  }
  cudaEvent_t event() {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreate(&e));
    events.push_back(e);
    return e;
  }
};

}  // namespace

GemmTiming benchmark_gemm(DType dtype, int64_t m, int64_t n, int64_t k, int iterations,
                          int max_candidates) {
  if (dtype != DType::bf16 && dtype != DType::fp16 && dtype != DType::fp32 && dtype != DType::fp64)
    throw Unsupported("GEMM benchmark for " + to_string(dtype) + " (bf16, fp16, fp32, fp64 only)",
                      "benchmark_gemm");
  if (m <= 0 || n <= 0 || k <= 0 || iterations < 1)
    throw InvalidArgument("GEMM benchmark needs positive sizes and iterations", "benchmark_gemm");
  const GpuInventory gpus = visible_gpus();
  if (gpus.count() == 0)
    throw DeviceUnavailable(no_gpu_message("the GEMM benchmark", gpus.why_none), "benchmark_gemm");
  CUDA_CHECK(cudaSetDevice(0));

  const size_t e = static_cast<size_t>(element_size_bytes(dtype));
  Buffers buffers;
  CUDA_CHECK(cudaStreamCreateWithFlags(&buffers.stream, cudaStreamNonBlocking));
  MatmulWork work;
  work.m = m, work.n = n, work.k = k, work.dtype = dtype;
  MatmulPointers p;
  p.a = buffers.alloc(e * m * k);
  p.b = buffers.alloc(e * k * n);
  p.c = buffers.alloc(e * m * n);
  MatmulScratch scratch;
  scratch.workspace_bytes = size_t{32} << 20;
  scratch.workspace = buffers.alloc(scratch.workspace_bytes);

  MatmulRunner runner;
  const auto candidates = runner.candidates(work, p, scratch.workspace_bytes, max_candidates);
  if (candidates.empty())
    throw BackendError("cuBLASLt proposes no algorithm for this GEMM", "benchmark_gemm");
  cudaEvent_t start = buffers.event(), stop = buffers.event();
  auto time = [&](const cublasLtMatmulAlgo_t& algo) {
    runner.run_with(work, p, scratch, algo, buffers.stream);  // warm-up
    CUDA_CHECK(cudaEventRecord(start, buffers.stream));
    for (int i = 0; i < iterations; ++i) runner.run_with(work, p, scratch, algo, buffers.stream);
    CUDA_CHECK(cudaEventRecord(stop, buffers.stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3 / iterations;
  };
  GemmTiming out;
  out.dtype = dtype, out.m = m, out.n = n, out.k = k;
  out.heuristic_s = time(candidates.front().algo);
  out.best_s = out.heuristic_s;
  for (size_t i = 1; i < candidates.size(); ++i)
    out.best_s = std::min(out.best_s, time(candidates[i].algo));
  out.candidates = static_cast<int>(candidates.size());
  return out;
}

}  // namespace symmesh::hw
