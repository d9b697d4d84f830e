#pragma once
// What mixed-precision Adam keeps and moves per parameter element: one owner for the
// dataflow step's memory (strategies/step_memory.cpp) and the training step's closed form
// (strategies/training_step_estimate.cpp).
//
// State: the fp32 master weight, momentum and variance, 12 B (Rajbhandari et al., "ZeRO",
// SC'20, §3.1: K = 12 for mixed-precision Adam).
//
// Update traffic in HBM per element of the shard a rank updates, as Megatron-LM's
// optimizer runs it (megatron/core/optimizer: a fused Adam over the fp32 main parameters,
// then the main parameters copied into the bf16 model weights):
//   Adam   reads the fp32 gradient, master weight, momentum and variance (16 B) and
//          writes the last three (12 B)                                          28 B
//   copy   reads the fp32 master weight (4 B) and writes the bf16 weight (2 B)    6 B
// 34 B in all, in two kernels (multi-tensor apply launches a few per kernel; beside
// gigabytes of traffic their launches do not count).
namespace symmesh {

inline constexpr double kAdamStateBytesPerElement = 12;
inline constexpr double kAdamKernelBytesPerElement = 16 + 12;
inline constexpr double kMasterCopyBytesPerElement = 4 + 2;
inline constexpr double kAdamUpdateBytesPerElement =
    kAdamKernelBytesPerElement + kMasterCopyBytesPerElement;
inline constexpr int kAdamUpdateKernels = 2;

}  // namespace symmesh
