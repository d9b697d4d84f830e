#include "core/op_kind.hpp"

#include "core/collective_descriptor.hpp"

namespace symmesh {

std::string to_string(OpKind kind) {
  // A collective's name is its row's (core/collective_descriptor.cpp).
  if (const CollectiveDescriptor* d = descriptor_of(kind)) return std::string(d->name);
  switch (kind) {
    case OpKind::mm:
      return "mm";
    case OpKind::bmm:
      return "bmm";
    case OpKind::addmm:
      return "addmm";
    case OpKind::baddbmm:
      return "baddbmm";
    case OpKind::linear:
      return "linear";
    case OpKind::put_signal:
      return "put_signal";
    case OpKind::barrier:
      return "barrier";
    case OpKind::optimizer_step:
      return "optimizer_step";
    case OpKind::add:
      return "add";
    case OpKind::rms_norm:
      return "rms_norm";
    case OpKind::swiglu:
      return "swiglu";
    case OpKind::gelu:
      return "gelu";
    case OpKind::attention:
      return "attention";
    case OpKind::embedding:
      return "embedding";
    case OpKind::cross_entropy:
      return "cross_entropy";
    case OpKind::rms_norm_dgrad:
      return "rms_norm_dgrad";
    case OpKind::rms_norm_wgrad:
      return "rms_norm_wgrad";
    case OpKind::swiglu_dgrad_gate:
      return "swiglu_dgrad_gate";
    case OpKind::swiglu_dgrad_up:
      return "swiglu_dgrad_up";
    case OpKind::gelu_dgrad:
      return "gelu_dgrad";
    case OpKind::attention_dgrad:
      return "attention_dgrad";
    case OpKind::embedding_wgrad:
      return "embedding_wgrad";
    case OpKind::cross_entropy_stats:
      return "cross_entropy_stats";
    case OpKind::cross_entropy_loss:
      return "cross_entropy_loss";
    case OpKind::cross_entropy_dgrad:
      return "cross_entropy_dgrad";
    default:
      break;
  }
  return "?";
}

const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> out{OpKind::mm,      OpKind::bmm,    OpKind::addmm,
                            OpKind::baddbmm, OpKind::linear, OpKind::put_signal};
    // The collectives a file may write, in the table's order.
    for (const CollectiveDescriptor& d : collective_descriptors())
      if (d.op_kind) out.push_back(*d.op_kind);
    for (OpKind k : {OpKind::barrier, OpKind::add, OpKind::rms_norm, OpKind::swiglu,
                     OpKind::gelu, OpKind::attention, OpKind::embedding, OpKind::cross_entropy})
      out.push_back(k);
    return out;
  }();
  return kinds;
}

std::optional<OpKind> op_kind_named(std::string_view text) {
  for (OpKind kind : all_op_kinds())
    if (text == to_string(kind)) return kind;
  return std::nullopt;
}

std::optional<OpKind> generated_op_kind_named(std::string_view text) {
  static const std::vector<OpKind> generated{
      OpKind::optimizer_step,     OpKind::rms_norm_dgrad,      OpKind::rms_norm_wgrad,
      OpKind::swiglu_dgrad_gate,  OpKind::swiglu_dgrad_up,     OpKind::gelu_dgrad,
      OpKind::attention_dgrad,    OpKind::embedding_wgrad,     OpKind::cross_entropy_stats,
      OpKind::cross_entropy_loss, OpKind::cross_entropy_dgrad,
  };
  for (OpKind kind : generated)
    if (text == to_string(kind)) return kind;
  return std::nullopt;
}

bool is_matmul(OpKind kind) {
  switch (kind) {
    case OpKind::mm:
    case OpKind::bmm:
    case OpKind::addmm:
    case OpKind::baddbmm:
    case OpKind::linear:
      return true;
    default:
      return false;
  }
}

bool is_tensor_op(OpKind kind) {
  switch (kind) {
    case OpKind::add:
    case OpKind::rms_norm:
    case OpKind::swiglu:
    case OpKind::gelu:
    case OpKind::attention:
    case OpKind::embedding:
    case OpKind::cross_entropy:
    case OpKind::rms_norm_dgrad:
    case OpKind::rms_norm_wgrad:
    case OpKind::swiglu_dgrad_gate:
    case OpKind::swiglu_dgrad_up:
    case OpKind::gelu_dgrad:
    case OpKind::attention_dgrad:
    case OpKind::embedding_wgrad:
    case OpKind::cross_entropy_stats:
    case OpKind::cross_entropy_loss:
    case OpKind::cross_entropy_dgrad:
      return true;
    default:
      return false;
  }
}

bool is_collective(OpKind kind) {
  return descriptor_of(kind) != nullptr;
}

}  // namespace symmesh
