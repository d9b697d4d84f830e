#include "hw/checks.hpp"

#include "core/errors.hpp"

namespace symmesh::hw {
namespace {

std::string place(const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line);
}

}  // namespace

const char* nccl_result_name(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult(unknown)";
  }
}

void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
  throw BackendError(std::string(call) + " failed: " + cudaGetErrorName(error) + " (" +
                         cudaGetErrorString(error) + ")",
                     place(file, line));
}

void throw_nccl_error(ncclResult_t result, const char* call, const char* file, int line) {
  throw BackendError(std::string(call) + " failed: " + nccl_result_name(result) + " (" +
                         ncclGetErrorString(result) + ")",
                     place(file, line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw BackendError(std::string(call) + " failed: " + cublasLtGetStatusName(status) + " (" +
                         cublasLtGetStatusString(status) + ")",
                     place(file, line));
}

}  // namespace symmesh::hw
