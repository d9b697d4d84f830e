#pragma once
// What an optimizer keeps and moves per parameter element: one owner for the dataflow
// step's memory and update (strategies/step_memory.cpp) and the training step's closed form
// and Programs (strategies/training_step_estimate.cpp, training_step_program.cpp).
//
// State: the fp32 master weight, momentum and variance, 12 B (Rajbhandari et al., "ZeRO",
// SC'20, §3.1: K = 12 for mixed-precision Adam).
//
// Update traffic in HBM per element of the shard a rank updates, for gradients of g bytes
// and weights of w bytes per element:
//   Adam   a fused kernel reads the gradient and the 12 B of state (fp32 master weight,
//          momentum, variance) and writes the state back: g + 24 B; then the master weight
//          is copied into the model's weight (megatron/core/optimizer: the step runs on the
//          fp32 main parameters, then copies them to the model's): 4 + w B.
//   SGD    reads the gradient and the weight and writes the weight: g + 2w B.
// With Megatron's fp32 main gradients and bf16 weights Adam moves 28 + 6 = 34 B, in two
// kernels (multi-tensor apply launches a few per kernel; beside gigabytes of traffic their
// launches do not count).
namespace symmesh {

inline constexpr double kAdamStateBytesPerElement = 12;

constexpr double adam_update_bytes_per_element(double gradient_bytes, double weight_bytes) {
  return (gradient_bytes + 2 * kAdamStateBytesPerElement) + (4 + weight_bytes);
}
constexpr double sgd_update_bytes_per_element(double gradient_bytes, double weight_bytes) {
  return gradient_bytes + 2 * weight_bytes;
}

// Megatron's case: fp32 gradients, bf16 weights; the Adam kernel's share and the copy's.
inline constexpr double kAdamKernelBytesPerElement = 4 + 2 * kAdamStateBytesPerElement;
inline constexpr double kMasterCopyBytesPerElement = 4 + 2;
inline constexpr double kAdamUpdateBytesPerElement = adam_update_bytes_per_element(4, 2);
static_assert(kAdamUpdateBytesPerElement ==
              kAdamKernelBytesPerElement + kMasterCopyBytesPerElement);
inline constexpr int kAdamUpdateKernels = 2;
inline constexpr int kSgdUpdateKernels = 1;

}  // namespace symmesh
