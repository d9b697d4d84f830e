#pragma once
// Emulated numerics: the local compute ops of a Program performed on real bytes, so that a
// sharded run can be checked against an unsharded one. Pointers are into the emulated
// memory of one rank, already bounds-checked by the caller (sim/rank_memory.hpp); they may
// be unaligned and may overlap — every op reads its inputs in full before writing.
//
// dtypes: matmul computes fp32 and fp64 natively with Eigen; bf16 and fp16 are widened to
// float, multiplied with float accumulation and rounded back (as tensor cores do). reduce
// also handles int32 and int64 (with scale 1). fp8 and int8 are rejected as Unsupported.
#include <vector>

#include "core/program.hpp"

namespace symmesh::sim {

// c = a @ b (+ bias) or c += a @ b (+ bias), batched, row-major: a [batch,m,k],
// b [batch,k,n], c [batch,m,n]; `bias` (nullptr when work.bias.id < 0) is indexed with the
// work's bias strides, so a stride of 0 broadcasts.
void emulate_matmul(const MatmulWork& work, const unsigned char* a, const unsigned char* b,
                    unsigned char* c, const unsigned char* bias = nullptr);
// dst[i] = (dst[i] + src[i]) * scale for i < elements.
void emulate_reduce(const ReduceWork& work, unsigned char* dst, const unsigned char* src);
// The strided box copy of CopyWork, byte-exact.
void emulate_copy(const CopyWork& work, unsigned char* dst, const unsigned char* src);
// A tensor op on one rank's pieces (core/tensor_op_reference.hpp), computed in double from
// the dtype's values and rounded back to it: `inputs` in the op's order.
void emulate_tensor_op(const TensorOpWork& work, const std::vector<const unsigned char*>& inputs,
                       unsigned char* out);

}  // namespace symmesh::sim
