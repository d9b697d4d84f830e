// put_signal / wait_signal / barrier on NCCL 2.28's device API (LSA pointers of a
// symmetric window). Memory order, per docs/one-sided.md:
//   put:  every thread copies its share into the peer's copy, then fences at system scope;
//         the last block to finish (a per-launch block counter) fences again and adds 1 to
//         the peer's counter slot with a system-scope release — so a visible signal means
//         this put's bytes, and every earlier put's on the stream, are visible.
//   wait: one thread polls the own slot with system-scope acquire loads until it reaches
//         the expected count; work after the kernel on the stream sees the data. A
//         %globaltimer deadline bounds it: on expiry the first kernel to give up records
//         what it waited for in the rank's DeviceError (device memory, read by the host
//         after the run) and every later wait of the rank returns at once.
#include <nccl_device.h>

#include <cuda/atomic>

#include "hw/checks.hpp"
#include "hw/kernels.hpp"

namespace symmesh::hw::kernels {
namespace {

using SystemCounter = cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>;

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ bool gave_up(DeviceError* error) {
  return *reinterpret_cast<volatile int*>(&error->code) != kNoError;
}

__device__ void record_timeout(DeviceError* error, int code, int launch, int peer,
                               unsigned long long observed, unsigned long long expected) {
  if (atomicCAS(&error->code, kNoError, -1) == kNoError) {
    error->launch = launch;
    error->peer = peer;
    error->observed = observed;
    error->expected = expected;
    __threadfence_system();
    *reinterpret_cast<volatile int*>(&error->code) = code;
    __threadfence_system();
  }
}

// Polls `slot` until it reaches `expected`; false on timeout (or when another wait of this
// rank already gave up).
__device__ bool poll_until(unsigned long long* slot, unsigned long long expected,
                           unsigned long long timeout_ns, DeviceError* error, int code, int launch,
                           int peer) {
  SystemCounter counter(*slot);
  const unsigned long long start = now_ns();
  for (;;) {
    const unsigned long long seen = counter.load(cuda::memory_order_acquire);
    if (seen >= expected) return true;
    if (gave_up(error)) return false;
    if (now_ns() - start > timeout_ns) {
      record_timeout(error, code, launch, peer, seen, expected);
      return false;
    }
    __nanosleep(100);
  }
}

// Copies `bytes` with every thread of the grid: 16-byte vectors over the part where source
// and destination are both 16-byte aligned, bytes elsewhere.
__device__ void grid_copy(char* dst, const char* src, size_t bytes) {
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
  if (bytes >= head + 16 && ((reinterpret_cast<uintptr_t>(src) + head) & 15) == 0) {
    const size_t vectors = (bytes - head) / 16;
    const size_t tail = head + vectors * 16;
    for (size_t i = tid; i < head; i += threads) dst[i] = src[i];
    const uint4* s = reinterpret_cast<const uint4*>(src + head);
    uint4* d = reinterpret_cast<uint4*>(dst + head);
    for (size_t i = tid; i < vectors; i += threads) d[i] = s[i];
    for (size_t i = tail + tid; i < bytes; i += threads) dst[i] = src[i];
  } else {
    for (size_t i = tid; i < bytes; i += threads) dst[i] = src[i];
  }
}

__global__ void put_signal_kernel(PutArgs a) {
  char* dst = static_cast<char*>(ncclGetPeerPointer(a.window, a.dst_offset, a.peer));
  grid_copy(dst, static_cast<const char*>(a.src), a.bytes);
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned int done = atomicAdd(a.block_counter, 1u);
  if (done != gridDim.x - 1) return;
  // Last block: every block's bytes are fenced; publish them with the signal.
  __threadfence_system();
  auto* slot =
      static_cast<unsigned long long*>(ncclGetPeerPointer(a.window, a.signal_offset, a.peer));
  SystemCounter(*slot).fetch_add(1ull, cuda::memory_order_release);
  atomicExch(a.block_counter, 0u);  // the next run of this launch counts from zero
}

__global__ void wait_signal_kernel(WaitArgs a) {
  poll_until(const_cast<unsigned long long*>(a.slot), a.expected, a.timeout_ns, a.error,
             kWaitTimeout, a.launch, a.peer);
}

__global__ void barrier_kernel(BarrierArgs a) {
  __threadfence_system();
  for (int peer = threadIdx.x; peer < a.size; peer += blockDim.x) {
    if (peer == a.me) continue;
    auto* slot = static_cast<unsigned long long*>(
        ncclGetPeerPointer(a.window, a.slots_offset + sizeof(unsigned long long) * a.me, peer));
    SystemCounter(*slot).fetch_add(1ull, cuda::memory_order_release);
  }
  for (int peer = threadIdx.x; peer < a.size; peer += blockDim.x) {
    if (peer == a.me) continue;
    auto* own = static_cast<unsigned long long*>(
        ncclGetLocalPointer(a.window, a.slots_offset + sizeof(unsigned long long) * peer));
    if (!poll_until(own, a.generation, a.timeout_ns, a.error, kBarrierTimeout, a.launch, peer))
      break;
  }
  __syncthreads();
}

unsigned int put_blocks(size_t bytes) {
  // 64 KiB per block, at most 1024 blocks: enough to fill NVLink from many SMs while a
  // small put stays one block.
  const size_t blocks = (bytes + (size_t{64} << 10) - 1) >> 16;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > 1024 ? 1024 : blocks));
}

}  // namespace

void put_signal(const PutArgs& args, cudaStream_t stream) {
  put_signal_kernel<<<put_blocks(args.bytes), 256, 0, stream>>>(args);
  CUDA_CHECK(cudaGetLastError());
}

void wait_signal(const WaitArgs& args, cudaStream_t stream) {
  wait_signal_kernel<<<1, 1, 0, stream>>>(args);
  CUDA_CHECK(cudaGetLastError());
}

void barrier(const BarrierArgs& args, cudaStream_t stream) {
  const int threads = args.size < 1 ? 1 : (args.size > 1024 ? 1024 : args.size);
  barrier_kernel<<<1, threads, 0, stream>>>(args);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmesh::hw::kernels
