#include "core/run_result.hpp"

#include "core/errors.hpp"

namespace symmesh {

std::string Hazard::to_string() const {
  return "put '" + later_label + "' from rank " + std::to_string(later_sender) +
         " overwrote bytes [" + std::to_string(begin_bytes) + ", " + std::to_string(end_bytes) +
         ") of rank " + std::to_string(receiver) + "'s copy of symmetric buffer " +
         std::to_string(handle) + " that put '" + earlier_label + "' from rank " +
         std::to_string(earlier_sender) + " had delivered and rank " + std::to_string(receiver) +
         " had not consumed (no wait_signal covering it) at t=" + std::to_string(time_s) + " s";
}

const OutputBytes& RunResult::output(const std::string& name, int rank) const {
  for (const OutputBytes& o : outputs)
    if (o.name == name && o.rank == rank) return o;
  throw InvalidArgument("no output '" + name + "' on rank " + std::to_string(rank) +
                            (outputs.empty() ? " (outputs need a run that carries data)" : ""),
                        "RunResult::output");
}

}  // namespace symmesh
