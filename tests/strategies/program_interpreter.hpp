#pragma once
// A test oracle for Programs: executes every rank's streams with real bytes and no notion
// of time, independently of the simulator. Puts land at once; a wait passes when the
// (peer -> me) counter of its group and signal index exceeds the waits consumed; events and
// barriers order streams. Matmul/reduce arithmetic in fp32 or fp64 only. Throws on a deadlock.
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/program.hpp"
#include "core/tensor_op_reference.hpp"

namespace symmesh::testing {

class ProgramInterpreter {
 public:
  explicit ProgramInterpreter(const Program& program) : p_(program) {
    for (const auto& a : p_.local_allocations())
      local_.push_back(a.initial.empty() ? std::vector<unsigned char>(a.size_bytes, 0) : a.initial);
    for (const auto& h : p_.symmetric_allocations())
      for (int r : p_.group(h.group).ranks) symm_[{h.id, r}].assign(h.size_bytes, 0);
  }

  void run() {
    std::vector<std::vector<size_t>> pc(p_.world_size());
    for (int r = 0; r < p_.world_size(); ++r) pc[r].assign(p_.streams(r).size(), 0);
    for (;;) {
      bool progress = false, done = true;
      for (int r = 0; r < p_.world_size(); ++r)
        for (size_t s = 0; s < pc[r].size(); ++s) {
          const auto& ops = p_.streams(r)[s].ops;
          while (pc[r][s] < ops.size() && step(r, ops[pc[r][s]])) {
            ++pc[r][s];
            progress = true;
          }
          done &= pc[r][s] == ops.size();
        }
      if (done) return;
      if (!progress) throw std::runtime_error("interpreter: deadlock");
    }
  }

  unsigned char* at(int rank, const BufferRef& ref) {
    auto& bytes =
        ref.space == BufferRef::Space::local ? local_.at(ref.id) : symm_.at({ref.id, rank});
    return bytes.data() + ref.offset_bytes;
  }

  template <typename T>
  std::vector<T> read(int rank, const BufferRef& ref) {
    std::vector<T> out(ref.size_bytes / sizeof(T));
    // An empty shard has no storage behind it: memcpy's pointers must not be null even for 0 bytes.
    if (!out.empty()) std::memcpy(out.data(), at(rank, ref), out.size() * sizeof(T));
    return out;
  }

 private:
  template <typename T>
  void matmul(int r, const MatmulWork& w) {
    const T* a = reinterpret_cast<const T*>(at(r, w.a));
    const T* b = reinterpret_cast<const T*>(at(r, w.b));
    T* c = reinterpret_cast<T*>(at(r, w.c));
    const T* bias = w.bias.id >= 0 ? reinterpret_cast<const T*>(at(r, w.bias)) : nullptr;
    for (int64_t q = 0; q < w.batch; ++q)
      for (int64_t i = 0; i < w.m; ++i)
        for (int64_t j = 0; j < w.n; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < w.k; ++k)
            acc += double(a[(q * w.m + i) * w.k + k]) *
                   (w.transpose_b ? b[(q * w.n + j) * w.k + k] : b[(q * w.k + k) * w.n + j]);
          if (bias)
            acc += bias[q * w.bias_batch_stride + i * w.bias_row_stride + j * w.bias_col_stride];
          T& out = c[(q * w.m + i) * w.n + j];
          out = static_cast<T>(w.accumulate ? out + acc : acc);
        }
  }

  template <typename T>
  void reduce(int r, const ReduceWork& w) {
    T* dst = reinterpret_cast<T*>(at(r, w.dst));
    const T* src = reinterpret_cast<const T*>(at(r, w.src));
    for (int64_t i = 0; i < w.elements; ++i)
      dst[i] = static_cast<T>((double(dst[i]) + src[i]) * w.scale);
  }

  // The op's reference values on this rank's pieces, with the pieces' offsets.
  template <typename T>
  void tensor_op(int r, const TensorOpWork& w) {
    std::vector<std::vector<double>> inputs;
    for (int k = 0; k < w.inputs; ++k) {
      const T* src = reinterpret_cast<const T*>(at(r, w.in[k]));
      inputs.emplace_back(src, src + numel(w.in_shapes[k]));
    }
    const std::vector<double> out = tensor_op_reference(w.reference_call(), inputs);
    T* dst = reinterpret_cast<T*>(at(r, w.out));
    for (size_t i = 0; i < out.size(); ++i) dst[i] = static_cast<T>(out[i]);
  }

  bool step(int r, const StreamOp& op) {
    using K = StreamOp::Kind;
    switch (op.kind()) {
      case K::put_signal:
      case K::signal: {
        const int peer = p_.peer_rank_of(op);
        // A zero-byte put (a zero-size tensor's all-gather) has no storage to point at.
        if (op.kind() == K::put_signal && op.put().src.size_bytes > 0) {
          const PutSignalArgs& put = op.put();
          std::memmove(at(peer, put.dst()), at(r, put.src), put.src.size_bytes);
        }
        ++counters_[{p_.group_of(op), op.signal_index(), r, peer}];
        return true;
      }
      case K::wait_signal: {
        const int peer = p_.peer_rank_of(op);
        const auto key = std::make_tuple(p_.group_of(op), op.signal_index(), peer, r);
        auto& consumed = consumed_[key];
        if (counters_[key] <= consumed) return false;
        ++consumed;
        return true;
      }
      case K::matmul: {
        const MatmulWork& w = p_.matmul_of(op);
        if (w.dtype == DType::fp32)
          matmul<float>(r, w);
        else if (w.dtype == DType::fp64)
          matmul<double>(r, w);
        else
          throw std::runtime_error("interpreter: matmul dtype");
        return true;
      }
      case K::reduce: {
        const ReduceWork w = op.reduce();
        if (w.dtype == DType::fp32)
          reduce<float>(r, w);
        else if (w.dtype == DType::fp64)
          reduce<double>(r, w);
        else
          throw std::runtime_error("interpreter: reduce dtype");
        return true;
      }
      case K::copy: {
        const CopyWork& w = p_.copy_of(op);
        if (w.bytes() <= 0) return true;  // nothing to move, and no storage to point at
        std::vector<unsigned char> tmp(w.bytes());
        size_t pos = 0;
        for (int64_t pl = 0; pl < w.planes; ++pl)
          for (int64_t row = 0; row < w.rows; ++row, pos += w.row_bytes)
            std::memcpy(tmp.data() + pos,
                        at(r, w.src) + pl * w.src_plane_stride_bytes + row * w.src_stride_bytes,
                        w.row_bytes);
        pos = 0;
        for (int64_t pl = 0; pl < w.planes; ++pl)
          for (int64_t row = 0; row < w.rows; ++row, pos += w.row_bytes)
            std::memcpy(at(r, w.dst) + pl * w.dst_plane_stride_bytes + row * w.dst_stride_bytes,
                        tmp.data() + pos, w.row_bytes);
        return true;
      }
      case K::tensor_op: {
        const TensorOpWork& w = p_.tensor_op_of(op);
        if (w.dtype == DType::fp32)
          tensor_op<float>(r, w);
        else if (w.dtype == DType::fp64)
          tensor_op<double>(r, w);
        else
          throw std::runtime_error("interpreter: tensor op dtype");
        return true;
      }
      case K::record_event:
        recorded_[op.event()] = true;
        return true;
      case K::wait_event:
        return recorded_[op.event()];
      case K::barrier: {
        // The n-th barrier of a group on a rank meets the n-th barrier of every member.
        const int group = op.group();
        const int ordinal = barrier_seen_[{group, r}];
        auto& arrived = barrier_arrivals_[{group, ordinal}];
        if (!barrier_marked_[{group, r, ordinal}]) {
          barrier_marked_[{group, r, ordinal}] = true;
          ++arrived;
        }
        if (arrived < static_cast<int>(p_.group(group).ranks.size())) return false;
        ++barrier_seen_[{group, r}];
        return true;
      }
      case K::free:
        return true;
    }
    return true;
  }

  const Program& p_;
  std::vector<std::vector<unsigned char>> local_;
  std::map<std::pair<int, int>, std::vector<unsigned char>> symm_;
  std::map<std::tuple<int, int, int, int>, int64_t> counters_,
      consumed_;  // (group, index, sender, receiver)
  std::map<int, bool> recorded_;
  std::map<std::pair<int, int>, int> barrier_seen_, barrier_arrivals_;
  std::map<std::tuple<int, int, int>, bool> barrier_marked_;
};

}  // namespace symmesh::testing
