#include "hw/matmul.hpp"

#include <library_types.h>

#include <memory>

#include "core/errors.hpp"
#include "hw/checks.hpp"
#include "hw/kernels.hpp"

namespace symmesh::hw {
namespace {

bool is_fp8(DType d) {
  return d == DType::fp8_e4m3;
}

cudaDataType_t input_type(DType d) {
  switch (d) {
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::fp16:
      return CUDA_R_16F;
    case DType::fp32:
      return CUDA_R_32F;
    case DType::fp64:
      return CUDA_R_64F;
    case DType::fp8_e4m3:
      return CUDA_R_8F_E4M3;
    default:
      throw Unsupported("no cuBLASLt matmul for " + to_string(d), "hw matmul");
  }
}

// The largest power of two (up to 256) dividing the address: cuBLASLt must not assume more.
int alignment_of(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  int a = 256;
  while (a > 1 && v % a) a /= 2;
  return a;
}

size_t fp8_transposed_bytes(const MatmulWork& w) {
  return static_cast<size_t>((w.batch * w.k * w.n + 255) / 256 * 256);
}

}  // namespace

struct MatmulRunner::Prepared {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t x = nullptr, y = nullptr, d = nullptr;  // cuBLASLt's A, B, C=D
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t best{};
  bool have_best = false;
  ~Prepared() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (y) cublasLtMatrixLayoutDestroy(y);
    if (x) cublasLtMatrixLayoutDestroy(x);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

MatmulRunner::MatmulRunner() {
  CUBLAS_CHECK(cublasLtCreate(&handle_));
}

MatmulRunner::~MatmulRunner() {
  for (auto& [key, prepared] : cache_) delete prepared;
  if (handle_) cublasLtDestroy(handle_);
}

MatmulRunner::Prepared& MatmulRunner::prepare(const MatmulWork& w, const MatmulPointers& p,
                                              const void* b_ptr, size_t workspace_bytes) {
  const int align_d = alignment_of(p.c);
  const Key key{static_cast<int>(w.dtype),
                w.transpose_b,
                w.batch,
                w.m,
                w.n,
                w.k,
                w.accumulate,
                alignment_of(p.a),
                alignment_of(b_ptr),
                align_d,
                workspace_bytes};
  if (auto it = cache_.find(key); it != cache_.end()) return *it->second;
  auto owned = std::make_unique<Prepared>();
  Prepared& pr = *owned;

  const bool fp8 = is_fp8(w.dtype);
  const bool fp64 = w.dtype == DType::fp64;
  const cudaDataType_t in = input_type(w.dtype);
  const cudaDataType_t out = fp8 ? CUDA_R_32F : in;
  const cudaDataType_t scale = fp64 ? CUDA_R_64F : CUDA_R_32F;
  CUBLAS_CHECK(
      cublasLtMatmulDescCreate(&pr.op, fp64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, scale));
  // cᵀ [n×m] = X · Y with X = bᵀ [n×k] and Y = aᵀ [k×m], all column-major. b stored
  // [n, k] (a linear layer's weight, or fp8's transposed copy) is column-major k×n: op T.
  const bool b_nk = fp8 || w.transpose_b;
  const cublasOperation_t op_x = b_nk ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_y = CUBLAS_OP_N;
  CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(pr.op, CUBLASLT_MATMUL_DESC_TRANSA, &op_x, sizeof op_x));
  CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(pr.op, CUBLASLT_MATMUL_DESC_TRANSB, &op_y, sizeof op_y));
  if (b_nk)  // b stored transposed: column-major k×n (row-major [n,k])
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pr.x, in, w.k, w.n, w.k));
  else  // row-major [k,n] is column-major n×k
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pr.x, in, w.n, w.k, w.n));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pr.y, in, w.k, w.m, w.k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pr.d, out, w.n, w.m, w.n));
  if (w.batch > 1) {
    const int32_t count = static_cast<int32_t>(w.batch);
    const int64_t sx = w.n * w.k, sy = w.m * w.k, sd = w.m * w.n;
    for (auto [layout, stride] : {std::pair{pr.x, sx}, {pr.y, sy}, {pr.d, sd}}) {
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                    &count, sizeof count));
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pr.preference));
  const uint64_t ws = workspace_bytes;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pr.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  const uint32_t align_x = static_cast<uint32_t>(alignment_of(b_ptr));
  const uint32_t align_y = static_cast<uint32_t>(alignment_of(p.a));
  const uint32_t align_cd = static_cast<uint32_t>(align_d);
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pr.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_x, sizeof align_x));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pr.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_y, sizeof align_y));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pr.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_cd, sizeof align_cd));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pr.preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_cd, sizeof align_cd));

  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, pr.op, pr.x, pr.y, pr.d, pr.d, pr.preference,
                                              1, &pr.best, &found));
  pr.have_best = found > 0;
  cache_[key] = owned.release();
  return pr;
}

std::vector<cublasLtMatmulHeuristicResult_t> MatmulRunner::candidates(const MatmulWork& work,
                                                                      const MatmulPointers& p,
                                                                      size_t workspace_bytes,
                                                                      int max_count) {
  Prepared& pr = prepare(work, p, p.b, workspace_bytes);
  std::vector<cublasLtMatmulHeuristicResult_t> out(max_count > 0 ? max_count : 1);
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, pr.op, pr.x, pr.y, pr.d, pr.d, pr.preference,
                                              static_cast<int>(out.size()), out.data(), &found));
  out.resize(found);
  return out;
}

void MatmulRunner::gemm(const MatmulWork& w, const MatmulPointers& p, const MatmulScratch& s,
                        const cublasLtMatmulAlgo_t* algo, cudaStream_t stream) {
  const bool fp8 = is_fp8(w.dtype);
  const void* x = p.b;
  void* d = p.c;
  if (fp8) {
    if (!s.fp8 || s.fp8_bytes < fp8_transposed_bytes(w) + sizeof(float) * w.batch * w.m * w.n)
      throw BackendError("fp8 matmul without enough scratch", "hw matmul");
    // fp8 tensor cores take b as [n, k]: transpose it unless it is stored that way.
    if (!w.transpose_b) {
      kernels::transpose_bytes(s.fp8, p.b, w.batch, w.k, w.n, stream);
      x = s.fp8;
    }
    d = static_cast<char*>(s.fp8) + fp8_transposed_bytes(w);
  }
  Prepared& pr = prepare(w, p, x, s.workspace_bytes);
  if (!algo) {
    if (!pr.have_best)
      throw BackendError("cuBLASLt found no algorithm for a " + to_string(w.dtype) + " matmul " +
                             std::to_string(w.batch) + "x" + std::to_string(w.m) + "x" +
                             std::to_string(w.n) + "x" + std::to_string(w.k),
                         "hw matmul");
    algo = &pr.best.algo;
  }
  // Bias and accumulation were folded into c (or are added by the fp8 epilogue).
  const bool beta_one = !fp8 && (w.accumulate || p.bias);
  const double one64 = 1, zero64 = 0, beta64 = beta_one ? 1 : 0;
  const float one32 = 1, beta32 = beta_one ? 1.f : 0.f;
  (void)zero64;
  const bool fp64 = w.dtype == DType::fp64;
  const void* alpha = fp64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = fp64 ? static_cast<const void*>(&beta64) : &beta32;
  CUBLAS_CHECK(cublasLtMatmul(handle_, pr.op, alpha, x, pr.x, p.a, pr.y, beta, d, pr.d, d, pr.d,
                              algo, s.workspace, s.workspace_bytes, stream));
}

void MatmulRunner::run_with(const MatmulWork& w, const MatmulPointers& p, const MatmulScratch& s,
                            const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) {
  gemm(w, p, s, &algo, stream);
}

void MatmulRunner::run(const MatmulWork& w, const MatmulPointers& p, const MatmulScratch& s,
                       cudaStream_t stream) {
  if (w.batch == 0 || w.m == 0 || w.n == 0) return;
  const int64_t e = element_size_bytes(w.dtype);
  const size_t c_bytes = static_cast<size_t>(w.batch * w.m * w.n * e);
  if (is_fp8(w.dtype)) {
    float* product = reinterpret_cast<float*>(static_cast<char*>(s.fp8) + fp8_transposed_bytes(w));
    if (w.k == 0)
      CUDA_CHECK(cudaMemsetAsync(product, 0, sizeof(float) * w.batch * w.m * w.n, stream));
    else
      gemm(w, p, s, nullptr, stream);
    kernels::Fp8EpilogueArgs args;
    args.c = p.c;
    args.product = product;
    args.bias = p.bias;
    args.batch = w.batch, args.m = w.m, args.n = w.n;
    args.batch_stride = w.bias_batch_stride, args.row_stride = w.bias_row_stride,
    args.col_stride = w.bias_col_stride;
    args.accumulate = w.accumulate;
    kernels::fp8_epilogue(args, stream);
    return;
  }
  if (p.bias) {
    kernels::BiasArgs args;
    args.dtype = w.dtype;
    args.c = p.c;
    args.bias = p.bias;
    args.batch = w.batch, args.m = w.m, args.n = w.n;
    args.batch_stride = w.bias_batch_stride, args.row_stride = w.bias_row_stride,
    args.col_stride = w.bias_col_stride;
    args.accumulate = w.accumulate;
    kernels::bias_fill(args, stream);
  } else if (w.k == 0 && !w.accumulate) {
    CUDA_CHECK(cudaMemsetAsync(p.c, 0, c_bytes, stream));
  }
  if (w.k > 0) gemm(w, p, s, nullptr, stream);
}

}  // namespace symmesh::hw
