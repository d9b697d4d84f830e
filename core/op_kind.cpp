#include "core/op_kind.hpp"

namespace symmesh {

std::string to_string(OpKind kind) {
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
    case OpKind::all_gather:
      return "all_gather";
    case OpKind::reduce_scatter:
      return "reduce_scatter";
    case OpKind::all_reduce:
      return "all_reduce";
    case OpKind::all_to_all:
      return "all_to_all";
    case OpKind::barrier:
      return "barrier";
    case OpKind::optimizer_step:
      return "optimizer_step";
  }
  return "?";
}

const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds{
      OpKind::mm,         OpKind::bmm,        OpKind::addmm,      OpKind::baddbmm,
      OpKind::linear,     OpKind::put_signal, OpKind::all_gather, OpKind::reduce_scatter,
      OpKind::all_reduce, OpKind::all_to_all, OpKind::barrier,
  };
  return kinds;
}

std::optional<OpKind> op_kind_named(std::string_view text) {
  for (OpKind kind : all_op_kinds())
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

bool is_collective(OpKind kind) {
  switch (kind) {
    case OpKind::all_gather:
    case OpKind::reduce_scatter:
    case OpKind::all_reduce:
    case OpKind::all_to_all:
      return true;
    default:
      return false;
  }
}

}  // namespace symmesh
