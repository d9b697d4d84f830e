#include "core/op_kind.hpp"

#include "core/collective_descriptor.hpp"
#include "core/tensor_op_registry.hpp"

namespace symmesh {

std::string to_string(OpKind kind) {
  // A collective's or a tensor op's name is its row's (core/collective_descriptor.cpp,
  // core/tensor_op_registry.cpp).
  if (const CollectiveDescriptor* d = descriptor_of(kind)) return std::string(d->name);
  if (const TensorOpSignature* t = find_tensor_op(kind)) return std::string(t->name);
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
    out.push_back(OpKind::barrier);
    // The forward tensor ops, in their table's order; their backward ops only a step makes.
    for (const TensorOpSignature& t : tensor_op_signatures())
      if (t.forward == t.op) out.push_back(t.op);
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
  if (text == to_string(OpKind::optimizer_step)) return OpKind::optimizer_step;
  for (const TensorOpSignature& t : tensor_op_signatures())
    if (t.forward != t.op && text == t.name) return t.op;
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
  return find_tensor_op(kind) != nullptr;
}

bool is_collective(OpKind kind) {
  return descriptor_of(kind) != nullptr;
}

}  // namespace symmesh
