#include "sim/run_result.hpp"

#include "core/errors.hpp"

namespace symmesh::sim {

std::string kind_name(StreamOp::Kind kind) {
  switch (kind) {
    case StreamOp::Kind::put_signal:
      return "put_signal";
    case StreamOp::Kind::wait_signal:
      return "wait_signal";
    case StreamOp::Kind::matmul:
      return "matmul";
    case StreamOp::Kind::reduce:
      return "reduce";
    case StreamOp::Kind::copy:
      return "copy";
    case StreamOp::Kind::record_event:
      return "record_event";
    case StreamOp::Kind::wait_event:
      return "wait_event";
    case StreamOp::Kind::barrier:
      return "barrier";
    case StreamOp::Kind::free:
      return "free";
  }
  return "unknown";
}

const OutputBytes& RunResult::output(const std::string& name, int rank) const {
  for (const OutputBytes& o : outputs)
    if (o.name == name && o.rank == rank) return o;
  throw InvalidArgument("no output '" + name + "' on rank " + std::to_string(rank) +
                            (outputs.empty() ? " (outputs need SimOptions::carry_data)" : ""),
                        "RunResult::output");
}

void attach_labels(const Program& program, RunResult& result) {
  for (TimelineEntry& e : result.timeline) {
    const Stream& stream = program.streams(e.rank).at(e.stream);
    const StreamOp& op = stream.ops.at(e.op_index);
    e.stream_name = stream.name;
    e.kind = op.kind;
    e.label = op.label;
  }
}

}  // namespace symmesh::sim
