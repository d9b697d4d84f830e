#include "core/collective_tuning.hpp"

#include "core/collective_descriptor.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh {

std::string to_string(LibraryAlgorithm algorithm) {
  switch (algorithm) {
    case LibraryAlgorithm::ring:
      return "ring";
    case LibraryAlgorithm::tree:
      return "tree";
    case LibraryAlgorithm::nvls:
      return "nvls";
    case LibraryAlgorithm::pairwise:
      return "pairwise";
    case LibraryAlgorithm::direct:
      return "direct";
  }
  return "?";
}

bool parse_library_algorithm(const std::string& text, LibraryAlgorithm& out) {
  for (LibraryAlgorithm a : {LibraryAlgorithm::ring, LibraryAlgorithm::tree, LibraryAlgorithm::nvls,
                             LibraryAlgorithm::pairwise, LibraryAlgorithm::direct})
    if (text == to_string(a)) {
      out = a;
      return true;
    }
  return false;
}

bool CollectiveScopeTuning::empty() const {
  for (const auto& list : variants)
    if (!list.empty()) return false;
  return true;
}

namespace {

// Which algorithms can run which collective: the row's (core/collective_descriptor.cpp).
bool algorithm_runs(LibraryAlgorithm a, BandwidthCollective op, bool intra_node) {
  return collective_may_use(descriptor_of(op), a, intra_node);
}

void validate_scope(const CollectiveScopeTuning& scope, const std::string& name, bool intra) {
  for (int i = 0; i < kBandwidthCollectiveCount; ++i) {
    const auto op = static_cast<BandwidthCollective>(i);
    const auto& list = scope.of(op);
    for (size_t v = 0; v < list.size(); ++v) {
      const CollectiveVariant& variant = list[v];
      const std::string where =
          "cluster.collectives." + name + "." + to_string(op) + "[" + std::to_string(v) + "]";
      if (!algorithm_runs(variant.algorithm, op, intra))
        throw InvalidArgument("NCCL has no " + to_string(variant.algorithm) + " " + to_string(op) +
                                  (intra ? "" : " across nodes"),
                              where + ".algorithm");
      if (variant.protocol != "LL" && variant.protocol != "LL128" && variant.protocol != "Simple")
        throw InvalidArgument("unknown protocol '" + variant.protocol + "' (LL, LL128 or Simple)",
                              where + ".protocol");
      if (!(variant.bus_bandwidth_bytes_per_s > 0))
        throw InvalidArgument("must be > 0, got " + number_text(variant.bus_bandwidth_bytes_per_s),
                              where + ".bus_bandwidth");
      if (!(variant.base_latency_s >= 0))
        throw InvalidArgument("must be >= 0, got " + number_text(variant.base_latency_s),
                              where + ".base_latency");
      if (!(variant.step_latency_s >= 0))
        throw InvalidArgument("must be >= 0, got " + number_text(variant.step_latency_s),
                              where + ".step_latency");
    }
  }
}

}  // namespace

void CollectiveTuning::validate() const {
  validate_scope(intra_node, "intra_node", true);
  validate_scope(inter_node, "inter_node", false);
}

}  // namespace symmesh
