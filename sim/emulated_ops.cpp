#include "sim/emulated_ops.hpp"

#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/errors.hpp"
#include "core/tensor_op_reference.hpp"
#include "sim/half_precision.hpp"

namespace symmesh::sim {
namespace {

// Typed loads and stores through memcpy: emulated buffers carry arbitrary byte offsets.
template <typename T>
std::vector<T> load(const unsigned char* p, int64_t count) {
  std::vector<T> out(static_cast<size_t>(count));
  if (count > 0) std::memcpy(out.data(), p, static_cast<size_t>(count) * sizeof(T));
  return out;
}
template <typename T>
void store(unsigned char* p, const std::vector<T>& values) {
  if (!values.empty()) std::memcpy(p, values.data(), values.size() * sizeof(T));
}

// Values of a floating dtype widened to Wide (float for 16-bit types) and narrowed back.
template <typename Wide>
std::vector<Wide> load_wide(DType dtype, const unsigned char* p, int64_t count) {
  if (dtype == DType::bf16 || dtype == DType::fp16) {
    const auto bits = load<uint16_t>(p, count);
    std::vector<Wide> out(bits.size());
    for (size_t i = 0; i < bits.size(); ++i)
      out[i] = dtype == DType::bf16 ? bf16_to_float(bits[i]) : fp16_to_float(bits[i]);
    return out;
  }
  return load<Wide>(p, count);
}
template <typename Wide>
void store_wide(DType dtype, unsigned char* p, const std::vector<Wide>& values) {
  if (dtype == DType::bf16 || dtype == DType::fp16) {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const float v = static_cast<float>(values[i]);
      bits[i] = dtype == DType::bf16 ? float_to_bf16(v) : float_to_fp16(v);
    }
    store(p, bits);
    return;
  }
  store(p, values);
}

// Any floating dtype's values as double (16-bit types through float, exactly), and back.
std::vector<double> widened(DType dtype, const unsigned char* p, int64_t count) {
  if (dtype == DType::fp64) return load<double>(p, count);
  const auto narrow = load_wide<float>(dtype, p, count);
  return std::vector<double>(narrow.begin(), narrow.end());
}
void narrowed(DType dtype, unsigned char* p, const std::vector<double>& values) {
  if (dtype == DType::fp64) return store(p, values);
  store_wide<float>(dtype, p, std::vector<float>(values.begin(), values.end()));
}

[[noreturn]] void unsupported(DType dtype, const char* op) {
  throw Unsupported("emulating " + std::string(op) + " in " + to_string(dtype) +
                        " is not supported (fp32, fp64, bf16, fp16" +
                        (std::string(op) == "reduce" ? ", int32, int64" : "") + ")",
                    "sim emulation");
}

template <typename T>
void matmul_as(const MatmulWork& w, const unsigned char* a, const unsigned char* b,
               unsigned char* c, const unsigned char* bias) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto av = load_wide<T>(w.dtype, a, w.batch * w.m * w.k);
  const auto bv = load_wide<T>(w.dtype, b, w.batch * w.k * w.n);
  auto cv = w.accumulate ? load_wide<T>(w.dtype, c, w.batch * w.m * w.n)
                         : std::vector<T>(static_cast<size_t>(w.batch * w.m * w.n), T(0));
  for (int64_t i = 0; i < w.batch; ++i) {
    Eigen::Map<const Matrix> am(av.data() + i * w.m * w.k, w.m, w.k);
    Eigen::Map<Matrix> cm(cv.data() + i * w.m * w.n, w.m, w.n);
    if (w.transpose_b)  // b is [n, k] row-major: a linear layer's weight
      cm.noalias() +=
          am * Eigen::Map<const Matrix>(bv.data() + i * w.k * w.n, w.n, w.k).transpose();
    else
      cm.noalias() += am * Eigen::Map<const Matrix>(bv.data() + i * w.k * w.n, w.k, w.n);
  }
  if (bias != nullptr && w.batch > 0 && w.m > 0 && w.n > 0) {
    const int64_t extent = (w.batch - 1) * w.bias_batch_stride + (w.m - 1) * w.bias_row_stride +
                           (w.n - 1) * w.bias_col_stride + 1;
    const auto bv = load_wide<T>(w.dtype, bias, extent);
    for (int64_t i = 0; i < w.batch; ++i)
      for (int64_t r = 0; r < w.m; ++r)
        for (int64_t j = 0; j < w.n; ++j)
          cv[static_cast<size_t>((i * w.m + r) * w.n + j)] += bv[static_cast<size_t>(
              i * w.bias_batch_stride + r * w.bias_row_stride + j * w.bias_col_stride)];
  }
  store_wide<T>(w.dtype, c, cv);
}

template <typename T>
void reduce_as(const ReduceWork& w, unsigned char* dst, const unsigned char* src) {
  const auto s = load_wide<T>(w.dtype, src, w.elements);
  auto d = load_wide<T>(w.dtype, dst, w.elements);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<T>((d[i] + s[i]) * w.scale);
  store_wide<T>(w.dtype, dst, d);
}

template <typename T>
void reduce_integer(const ReduceWork& w, unsigned char* dst, const unsigned char* src) {
  if (w.scale != 1.0)
    throw Unsupported(
        "an integer reduce with scale " + std::to_string(w.scale) + " (only 1 is emulated)",
        "sim emulation");
  const auto s = load<T>(src, w.elements);
  auto d = load<T>(dst, w.elements);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<T>(d[i] + s[i]);
  store(dst, d);
}

}  // namespace

void emulate_matmul(const MatmulWork& work, const unsigned char* a, const unsigned char* b,
                    unsigned char* c, const unsigned char* bias) {
  switch (work.dtype) {
    case DType::fp64:
      return matmul_as<double>(work, a, b, c, bias);
    case DType::fp32:
    case DType::bf16:
    case DType::fp16:
      return matmul_as<float>(work, a, b, c, bias);
    default:
      unsupported(work.dtype, "matmul");
  }
}

void emulate_reduce(const ReduceWork& work, unsigned char* dst, const unsigned char* src) {
  switch (work.dtype) {
    case DType::fp64:
      return reduce_as<double>(work, dst, src);
    case DType::fp32:
    case DType::bf16:
    case DType::fp16:
      return reduce_as<float>(work, dst, src);
    case DType::int32:
      return reduce_integer<int32_t>(work, dst, src);
    case DType::int64:
      return reduce_integer<int64_t>(work, dst, src);
    default:
      unsupported(work.dtype, "reduce");
  }
}

void emulate_copy(const CopyWork& w, unsigned char* dst, const unsigned char* src) {
  if (w.bytes() <= 0) return;
  // Gather every run first, then scatter: correct even when source and destination overlap.
  std::vector<unsigned char> staged(static_cast<size_t>(w.bytes()));
  size_t at = 0;
  for (int64_t p = 0; p < w.planes; ++p)
    for (int64_t r = 0; r < w.rows; ++r, at += static_cast<size_t>(w.row_bytes))
      std::memcpy(staged.data() + at, src + p * w.src_plane_stride_bytes + r * w.src_stride_bytes,
                  static_cast<size_t>(w.row_bytes));
  at = 0;
  for (int64_t p = 0; p < w.planes; ++p)
    for (int64_t r = 0; r < w.rows; ++r, at += static_cast<size_t>(w.row_bytes))
      std::memcpy(dst + p * w.dst_plane_stride_bytes + r * w.dst_stride_bytes, staged.data() + at,
                  static_cast<size_t>(w.row_bytes));
}

void emulate_tensor_op(const TensorOpWork& w, const std::vector<const unsigned char*>& inputs,
                       unsigned char* out) {
  if (w.dtype != DType::fp32 && w.dtype != DType::fp64 && w.dtype != DType::bf16 &&
      w.dtype != DType::fp16)
    unsupported(w.dtype, "tensor ops");
  const TensorOpCall call = w.reference_call();
  std::vector<std::vector<double>> values;
  for (int k = 0; k < w.inputs; ++k)
    values.push_back(widened(w.dtype, inputs.at(k), numel(w.in_shapes[k])));
  const std::vector<double> result = tensor_op_reference(call, values);
  narrowed(w.dtype, out, result);
}

}  // namespace symmesh::sim
