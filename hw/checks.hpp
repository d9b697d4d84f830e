#pragma once
// CUDA_CHECK / NCCL_CHECK / CUBLAS_CHECK: evaluate a library call once and, when it
// fails, throw symmesh::BackendError naming the call, file:line, the library's error name
// and its text. Internal to hw/ (it names CUDA, NCCL and cuBLAS types).
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace symmesh::hw {

// Thrown as BackendError with where = "file:line", so what() reads
// "hw/rank_runtime.cpp:42: cudaMalloc(&p, bytes) failed: cudaErrorMemoryAllocation (out of
// memory)".
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl_error(ncclResult_t result, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

// The name of a NCCL result ("ncclInvalidUsage"): NCCL prints only its text.
const char* nccl_result_name(ncclResult_t result);

}  // namespace symmesh::hw

#define CUDA_CHECK(call)                                                                \
  do {                                                                                  \
    const cudaError_t symmesh_cuda_status_ = (call);                                    \
    if (symmesh_cuda_status_ != cudaSuccess)                                            \
      ::symmesh::hw::throw_cuda_error(symmesh_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define NCCL_CHECK(call)                                                                \
  do {                                                                                  \
    const ncclResult_t symmesh_nccl_status_ = (call);                                   \
    if (symmesh_nccl_status_ != ncclSuccess)                                            \
      ::symmesh::hw::throw_nccl_error(symmesh_nccl_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                  \
  do {                                                                                      \
    const cublasStatus_t symmesh_cublas_status_ = (call);                                   \
    if (symmesh_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                    \
      ::symmesh::hw::throw_cublas_error(symmesh_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)
