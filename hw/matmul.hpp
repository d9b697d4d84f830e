#pragma once
// MatmulWork on cuBLASLt, row-major: c [batch,m,n] (+)= a [batch,m,k] @ b [batch,k,n].
// cuBLASLt is column-major, so the product is computed transposed — cᵀ = bᵀ aᵀ — which
// reads the row-major buffers as they are. bf16 / fp16 accumulate in fp32, fp32 in fp32
// (no TF32, as PyTorch by default), fp64 in fp64. fp8 (e4m3, compute capability 8.9+)
// needs cuBLASLt's "TN" layout: b is transposed into scratch, the product lands in fp32
// scratch and an epilogue kernel adds c and the bias and rounds to e4m3.
//
// The bias of MatmulWork (any strides, 0 broadcasts) is written into c first by a kernel
// (added to c when accumulating) and the GEMM then runs with beta = 1. Internal to hw/.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <map>
#include <tuple>
#include <vector>

#include "core/program.hpp"

namespace symmesh::hw {

struct MatmulPointers {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* bias = nullptr;  // nullptr: none
};

struct MatmulScratch {
  void* workspace = nullptr;  // cuBLASLt workspace
  size_t workspace_bytes = 0;
  void* fp8 = nullptr;  // ExecutionPlan's StreamPlan::fp8_scratch_bytes
  size_t fp8_bytes = 0;
};

class MatmulRunner {
 public:
  MatmulRunner();
  ~MatmulRunner();
  MatmulRunner(const MatmulRunner&) = delete;
  MatmulRunner& operator=(const MatmulRunner&) = delete;

  // Enqueues the matmul on `stream`. Throws BackendError when cuBLASLt has no algorithm.
  void run(const MatmulWork& work, const MatmulPointers& p, const MatmulScratch& scratch,
           cudaStream_t stream);

  // Up to `max_count` algorithms cuBLASLt proposes for a plain c = a @ b (no bias) with
  // these pointers, best first by its heuristic; `time_algorithm` runs one of them.
  std::vector<cublasLtMatmulHeuristicResult_t> candidates(const MatmulWork& work,
                                                          const MatmulPointers& p,
                                                          size_t workspace_bytes, int max_count);
  void run_with(const MatmulWork& work, const MatmulPointers& p, const MatmulScratch& scratch,
                const cublasLtMatmulAlgo_t& algo, cudaStream_t stream);

 private:
  struct Prepared;
  using Key =
      std::tuple<int, bool, int64_t, int64_t, int64_t, int64_t, bool, int, int, int, size_t>;
  Prepared& prepare(const MatmulWork& work, const MatmulPointers& p, const void* b_ptr,
                    size_t workspace_bytes);
  void gemm(const MatmulWork& work, const MatmulPointers& p, const MatmulScratch& scratch,
            const cublasLtMatmulAlgo_t* algo, cudaStream_t stream);

  cublasLtHandle_t handle_ = nullptr;
  std::map<Key, Prepared*> cache_;
};

}  // namespace symmesh::hw
