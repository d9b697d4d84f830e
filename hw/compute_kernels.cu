// The small local kernels of a Program: reduce, the 3-level strided copy, a matmul's
// broadcast bias, and the fp8 matmul's transpose and epilogue. Values are widened to float
// (double for fp64) and rounded back to nearest even, as the simulator's emulation does.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "core/errors.hpp"
#include "hw/checks.hpp"
#include "hw/kernels.hpp"

namespace symmesh::hw::kernels {
namespace {

template <typename T>
struct Value {  // float-like types: widened to float
  __device__ static float load(const T& v) { return static_cast<float>(v); }
  __device__ static T store(double v) { return T(static_cast<float>(v)); }
};
template <>
struct Value<double> {
  __device__ static double load(double v) { return v; }
  __device__ static double store(double v) { return v; }
};
template <>
struct Value<__nv_bfloat16> {
  __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(double v) {
    return __float2bfloat16(static_cast<float>(v));
  }
};
template <>
struct Value<__half> {
  __device__ static float load(__half v) { return __half2float(v); }
  __device__ static __half store(double v) { return __float2half(static_cast<float>(v)); }
};

unsigned int blocks_for(int64_t work, int threads) {
  const int64_t blocks = (work + threads - 1) / threads;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

template <typename T>
__global__ void reduce_float_kernel(T* dst, const T* src, int64_t elements, double scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < elements;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const auto sum = Value<T>::load(dst[i]) + Value<T>::load(src[i]);
    dst[i] = Value<T>::store(scale == 1.0 ? static_cast<double>(sum) : sum * scale);
  }
}

template <typename T>
__global__ void reduce_integer_kernel(T* dst, const T* src, int64_t elements, double scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < elements;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T sum = static_cast<T>(dst[i] + src[i]);
    dst[i] = scale == 1.0 ? sum : static_cast<T>(static_cast<double>(sum) * scale);
  }
}

template <typename T>
void launch_reduce_float(void* dst, const void* src, int64_t n, double scale, cudaStream_t s) {
  reduce_float_kernel<T><<<blocks_for(n, 256), 256, 0, s>>>(static_cast<T*>(dst),
                                                            static_cast<const T*>(src), n, scale);
}
template <typename T>
void launch_reduce_integer(void* dst, const void* src, int64_t n, double scale, cudaStream_t s) {
  reduce_integer_kernel<T><<<blocks_for(n, 256), 256, 0, s>>>(static_cast<T*>(dst),
                                                              static_cast<const T*>(src), n, scale);
}

template <bool kVector>
__global__ void strided_copy_kernel(CopyArgs a) {
  const int64_t lines = a.planes * a.rows;
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const int64_t p = line / a.rows, r = line % a.rows;
    char* d = static_cast<char*>(a.dst) + p * a.dst_plane_stride + r * a.dst_stride;
    const char* s = static_cast<const char*>(a.src) + p * a.src_plane_stride + r * a.src_stride;
    if (kVector) {
      for (int64_t i = threadIdx.x; i < a.row_bytes / 16; i += blockDim.x)
        reinterpret_cast<uint4*>(d)[i] = reinterpret_cast<const uint4*>(s)[i];
    } else {
      for (int64_t i = threadIdx.x; i < a.row_bytes; i += blockDim.x) d[i] = s[i];
    }
  }
}

template <typename T>
__global__ void bias_fill_kernel(BiasArgs a) {
  T* c = static_cast<T*>(a.c);
  const T* bias = static_cast<const T*>(a.bias);
  const int64_t total = a.batch * a.m * a.n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / (a.m * a.n), row = (i / a.n) % a.m, col = i % a.n;
    const auto v =
        Value<T>::load(bias[b * a.batch_stride + row * a.row_stride + col * a.col_stride]);
    c[i] = Value<T>::store(a.accumulate ? static_cast<double>(Value<T>::load(c[i]) + v)
                                        : static_cast<double>(v));
  }
}

__global__ void transpose_bytes_kernel(unsigned char* dst, const unsigned char* src, int64_t batch,
                                       int64_t rows, int64_t cols) {
  const int64_t total = batch * rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / (rows * cols), r = (i / cols) % rows, c = i % cols;
    dst[b * rows * cols + c * rows + r] = src[i];
  }
}

__global__ void fp8_epilogue_kernel(Fp8EpilogueArgs a) {
  auto* c = static_cast<__nv_fp8_e4m3*>(a.c);
  const auto* bias = static_cast<const __nv_fp8_e4m3*>(a.bias);
  const int64_t total = a.batch * a.m * a.n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = a.product[i];
    if (a.accumulate) v += static_cast<float>(c[i]);
    if (bias) {
      const int64_t b = i / (a.m * a.n), row = (i / a.n) % a.m, col = i % a.n;
      v += static_cast<float>(bias[b * a.batch_stride + row * a.row_stride + col * a.col_stride]);
    }
    c[i] = __nv_fp8_e4m3(v);
  }
}

}  // namespace

void reduce(DType dtype, void* dst, const void* src, int64_t elements, double scale,
            cudaStream_t stream) {
  if (elements <= 0) return;
  switch (dtype) {
    case DType::bf16:
      launch_reduce_float<__nv_bfloat16>(dst, src, elements, scale, stream);
      break;
    case DType::fp16:
      launch_reduce_float<__half>(dst, src, elements, scale, stream);
      break;
    case DType::fp32:
      launch_reduce_float<float>(dst, src, elements, scale, stream);
      break;
    case DType::fp64:
      launch_reduce_float<double>(dst, src, elements, scale, stream);
      break;
    case DType::fp8_e4m3:
      launch_reduce_float<__nv_fp8_e4m3>(dst, src, elements, scale, stream);
      break;
    case DType::fp8_e5m2:
      launch_reduce_float<__nv_fp8_e5m2>(dst, src, elements, scale, stream);
      break;
    case DType::int8:
      launch_reduce_integer<int8_t>(dst, src, elements, scale, stream);
      break;
    case DType::int32:
      launch_reduce_integer<int32_t>(dst, src, elements, scale, stream);
      break;
    case DType::int64:
      launch_reduce_integer<long long>(dst, src, elements, scale, stream);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
}

void strided_copy(const CopyArgs& a, cudaStream_t stream) {
  const int64_t lines = a.planes * a.rows;
  if (lines <= 0 || a.row_bytes <= 0) return;
  const auto aligned = [](int64_t v) { return v % 16 == 0; };
  const bool vector = aligned(reinterpret_cast<uintptr_t>(a.dst)) &&
                      aligned(reinterpret_cast<uintptr_t>(a.src)) && aligned(a.row_bytes) &&
                      aligned(a.src_stride) && aligned(a.dst_stride) &&
                      aligned(a.src_plane_stride) && aligned(a.dst_plane_stride);
  const unsigned int blocks = static_cast<unsigned int>(lines < 4096 ? lines : 4096);
  if (vector)
    strided_copy_kernel<true><<<blocks, 256, 0, stream>>>(a);
  else
    strided_copy_kernel<false><<<blocks, 256, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void bias_fill(const BiasArgs& a, cudaStream_t stream) {
  const int64_t total = a.batch * a.m * a.n;
  if (total <= 0) return;
  const unsigned int blocks = blocks_for(total, 256);
  switch (a.dtype) {
    case DType::bf16:
      bias_fill_kernel<__nv_bfloat16><<<blocks, 256, 0, stream>>>(a);
      break;
    case DType::fp16:
      bias_fill_kernel<__half><<<blocks, 256, 0, stream>>>(a);
      break;
    case DType::fp32:
      bias_fill_kernel<float><<<blocks, 256, 0, stream>>>(a);
      break;
    case DType::fp64:
      bias_fill_kernel<double><<<blocks, 256, 0, stream>>>(a);
      break;
    default:
      throw Unsupported("no bias kernel for " + to_string(a.dtype), "hw bias_fill");
  }
  CUDA_CHECK(cudaGetLastError());
}

void transpose_bytes(void* dst, const void* src, int64_t batch, int64_t rows, int64_t cols,
                     cudaStream_t stream) {
  const int64_t total = batch * rows * cols;
  if (total <= 0) return;
  transpose_bytes_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(
      static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), batch, rows, cols);
  CUDA_CHECK(cudaGetLastError());
}

void fp8_epilogue(const Fp8EpilogueArgs& a, cudaStream_t stream) {
  const int64_t total = a.batch * a.m * a.n;
  if (total <= 0) return;
  fp8_epilogue_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmesh::hw::kernels
