#pragma once
// Every kernel launcher of hw/, in one header (the shape of DeepEP's api.cuh). Arguments
// are device pointers and plain values; each launcher checks the launch (CUDA_CHECK on
// cudaGetLastError) and returns at once — the stream runs the kernel.
//
// The one-sided kernels implement docs/one-sided.md on NCCL 2.28's device
// API (the "Hardware mapping" section): a put copies into the peer's copy of a symmetric
// window through its load/store (LSA) pointer, fences at system scope and adds 1 to the
// peer's counter slot for this sender; a wait polls the own slot with acquire loads until
// it reaches the expected count, or records a timeout and returns — never hangs.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"

namespace symmesh::hw::kernels {

// Written (first one wins) by a kernel that gave up waiting, in device memory; the host
// copies it back after the run and throws symmesh::Timeout.
struct DeviceError {
  int code = 0;     // 0 none, 1 wait_signal timed out, 2 barrier timed out
  int launch = -1;  // index of the launch in the rank's plan
  int peer = -1;    // communicator rank waited for
  int pad = 0;
  unsigned long long observed = 0;  // the counter's value when it gave up
  unsigned long long expected = 0;
};
enum : int { kNoError = 0, kWaitTimeout = 1, kBarrierTimeout = 2 };

struct PutArgs {
  const void* src = nullptr;      // local pointer (local arena or own symmetric copy)
  ncclWindow_t window = nullptr;  // the symmetric arena's window
  size_t dst_offset = 0;          // in the window
  size_t bytes = 0;
  int peer = -1;             // communicator rank of the receiver
  size_t signal_offset = 0;  // the receiver's counter slot for this sender, in the window
  unsigned int* block_counter = nullptr;  // one per put launch, zero between runs
};
void put_signal(const PutArgs& args, cudaStream_t stream);

struct WaitArgs {
  const unsigned long long* slot = nullptr;  // own counter slot for the sender (local)
  unsigned long long expected = 0;
  unsigned long long timeout_ns = 0;
  DeviceError* error = nullptr;  // device memory, one per rank
  int launch = -1;
  int peer = -1;
};
void wait_signal(const WaitArgs& args, cudaStream_t stream);

// Every member adds 1 to its slot in every other member's barrier slots, then waits until
// each of its own slots reaches `generation`.
struct BarrierArgs {
  ncclWindow_t window = nullptr;
  size_t slots_offset = 0;  // `size` uint64 slots, slot s for sender s
  int size = 0;
  int me = -1;
  unsigned long long generation = 0;
  unsigned long long timeout_ns = 0;
  DeviceError* error = nullptr;
  int launch = -1;
};
void barrier(const BarrierArgs& args, cudaStream_t stream);

// dst[i] = (dst[i] + src[i]) · scale for i < elements (any DType; integers scale in double).
void reduce(DType dtype, void* dst, const void* src, int64_t elements, double scale,
            cudaStream_t stream);

// CopyWork's 3-level strided copy, byte-exact (16-byte vectors where everything aligns).
struct CopyArgs {
  void* dst = nullptr;
  const void* src = nullptr;
  int64_t planes = 0, rows = 0, row_bytes = 0;
  int64_t src_plane_stride = 0, dst_plane_stride = 0, src_stride = 0, dst_stride = 0;
};
void strided_copy(const CopyArgs& args, cudaStream_t stream);

// c[b][i][j] = (accumulate ? c[b][i][j] : 0) + bias[b·bs + i·rs + j·cs] (bf16/fp16/fp32/fp64),
// before a GEMM with beta = 1: the broadcast bias of MatmulWork, any strides.
struct BiasArgs {
  DType dtype = DType::fp32;
  void* c = nullptr;
  const void* bias = nullptr;
  int64_t batch = 0, m = 0, n = 0;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
  bool accumulate = false;
};
void bias_fill(const BiasArgs& args, cudaStream_t stream);

// dst[b][j][i] = src[b][i][j] for one-byte elements: an fp8 B [k, n] row-major becomes the
// [n, k] that cuBLASLt's fp8 "TN" layout needs.
void transpose_bytes(void* dst, const void* src, int64_t batch, int64_t rows, int64_t cols,
                     cudaStream_t stream);

// fp8 matmul epilogue: c = e4m3(product + (accumulate ? c : 0) + bias), product fp32.
struct Fp8EpilogueArgs {
  void* c = nullptr;
  const float* product = nullptr;
  const void* bias = nullptr;  // e4m3, nullptr for none
  int64_t batch = 0, m = 0, n = 0;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
  bool accumulate = false;
};
void fp8_epilogue(const Fp8EpilogueArgs& args, cudaStream_t stream);

}  // namespace symmesh::hw::kernels
