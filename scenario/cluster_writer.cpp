#include "scenario/cluster_writer.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh::scenario {
namespace {

// The scientific text of `value`: its shortest round-tripping digits, or rounded.
std::string scientific(double value, int significant_digits) {
  char buffer[64];
  if (significant_digits > 0) {
    std::snprintf(buffer, sizeof buffer, "%.*e", significant_digits - 1, value);
    return buffer;
  }
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  if (ec != std::errc()) throw InvalidArgument("cannot write a number", "cluster writer");
  return std::string(buffer, end);
}

// A YAML double-quoted scalar: quote and backslash escaped, and what the loader would refuse
// (control characters, invalid UTF-8, invisible format characters) as '?', so that a name
// measured on a machine (a GPU's, or one in a --from file) can neither end the line and
// add keys nor make a file that does not load.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : printable_or_marked(text)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A comment line: a line break or any other unprintable character becomes '?'.
void comment(std::ostringstream& y, const std::string& line, const std::string& indent = "") {
  if (line.empty()) return;
  y << indent << "# " << printable_or_marked(line) << "\n";
}

}  // namespace

std::string decimal_in_unit(double value, int power_of_ten, int significant_digits) {
  if (value == 0) return "0";  // 0.000e+00 has no leading digit to place
  // d.ddddde±X: the digits and where the point goes, shifted by the unit.
  const std::string sci = scientific(value, significant_digits);
  const bool negative = sci[0] == '-';
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  int point = 1 + std::atoi(sci.c_str() + e + 1) - power_of_ten;  // digits before the point
  while (digits.size() > 1 && digits.back() == '0' && static_cast<int>(digits.size()) > point)
    digits.pop_back();  // trailing zeros after the point say nothing
  std::string out;
  if (point <= 0)
    out = "0." + std::string(-point, '0') + digits;
  else if (point >= static_cast<int>(digits.size()))
    out = digits + std::string(point - digits.size(), '0');
  else
    out = digits.substr(0, point) + "." + digits.substr(point);
  return negative ? "-" + out : out;
}

std::string cluster_file_text(const ClusterSpec& c, const ClusterFileNotes& notes,
                              const ClusterFileFormat& format) {
  const int digits = format.significant_digits;
  auto in = [&](double value, int power, const char* unit) {
    return decimal_in_unit(value, power, digits) + " " + unit;
  };
  std::ostringstream y;
  for (const std::string& line : notes.header) comment(y, line);
  if (!c.name.empty()) y << "name: " << quoted(c.name) << "\n";
  y << "nodes: " << c.nodes << "\n";
  y << "gpus_per_node: " << c.gpus_per_node << "\n";
  comment(y, notes.gpu);
  y << "gpu:\n";
  if (!c.gpu.name.empty()) y << "  name: " << quoted(c.gpu.name) << "\n";
  y << "  peak: {";
  bool first = true;
  for (const auto& [dtype, rate] : c.gpu.peak_flops_per_s) {
    y << (first ? "" : ", ") << dtype << ": " << in(rate, 12, "TFLOP/s");
    first = false;
  }
  y << "}\n";
  // Capacities are whole bytes: GiB when they are whole GiB (80 GiB), else bytes.
  const double capacity = c.gpu.memory_capacity_bytes;
  const double gib = capacity / (1024.0 * 1024 * 1024);
  y << "  memory: {capacity: "
    << (gib == static_cast<double>(static_cast<int64_t>(gib))
            ? std::to_string(static_cast<int64_t>(gib)) + " GiB"
            : std::to_string(static_cast<int64_t>(capacity)) + " B")
    << ", bandwidth: " << in(c.gpu.memory_bandwidth_bytes_per_s, 12, "TB/s");
  if (c.gpu.memory_sustained_bandwidth_bytes_per_s > 0)
    y << ", sustained_bandwidth: " << in(c.gpu.memory_sustained_bandwidth_bytes_per_s, 12, "TB/s");
  y << "}\n";
  // The roofline's optional figures (core/roofline.hpp), only those the cluster has.
  if (!c.gpu.gemm_efficiency.empty()) {
    y << "  gemm_efficiency: {";
    first = true;
    for (const auto& [dtype, fraction] : c.gpu.gemm_efficiency) {
      y << (first ? "" : ", ") << dtype << ": " << decimal_in_unit(fraction, 0, digits);
      first = false;
    }
    y << "}\n";
  }
  if (c.gpu.sm_count > 0) y << "  sm_count: " << c.gpu.sm_count << "\n";
  if (c.gpu.launch_overhead_s)
    y << "  launch_overhead: " << in(*c.gpu.launch_overhead_s, -6, "us") << "\n";
  comment(y, notes.intra_node);
  y << "intra_node: {kind: " << c.intra_node.kind
    << ", bandwidth: " << in(c.intra_node.bandwidth_bytes_per_s, 9, "GB/s")
    << ", latency: " << in(c.intra_node.latency_s, -6, "us") << "}\n";
  if (c.nodes > 1 || c.inter_node.bandwidth_bytes_per_s > 0) {
    comment(y, notes.inter_node);
    y << "inter_node: {kind: " << c.inter_node.kind
      << ", nics_per_node: " << c.inter_node.nics_per_node
      << ", bandwidth: " << in(c.inter_node.bandwidth_bytes_per_s, 9, "GB/s")
      << ", latency: " << in(c.inter_node.latency_s, -6, "us");
    // The fabric's shape only when it is not the default (one leaf, non-blocking).
    if (c.inter_node.spine_latency_s != InterNodeSpec::kDefaultSpineLatencyS)
      y << ", spine_latency: " << in(c.inter_node.spine_latency_s, -6, "us");
    if (c.inter_node.oversubscription != 1)
      y << ", oversubscription: " << decimal_in_unit(c.inter_node.oversubscription, 0, digits);
    if (c.inter_node.nodes_per_leaf > 0) y << ", nodes_per_leaf: " << c.inter_node.nodes_per_leaf;
    y << "}\n";
  }
  if (!c.collectives.empty()) {
    comment(y, notes.collectives);
    y << "collectives:\n";
    const auto scope = [&](const char* name, const CollectiveScopeTuning& tuning) {
      if (tuning.empty()) return;
      y << "  " << name << ":\n";
      for (int i = 0; i < kBandwidthCollectiveCount; ++i) {
        const auto op = static_cast<BandwidthCollective>(i);
        if (tuning.of(op).empty()) continue;
        y << "    " << to_string(op) << ":\n";
        for (const CollectiveVariant& v : tuning.of(op))
          y << "      - {algorithm: " << to_string(v.algorithm) << ", protocol: " << v.protocol
            << ", base_latency: " << in(v.base_latency_s, -6, "us")
            << ", step_latency: " << in(v.step_latency_s, -6, "us")
            << ", bus_bandwidth: " << in(v.bus_bandwidth_bytes_per_s, 9, "GB/s") << "}\n";
      }
    };
    scope("intra_node", c.collectives.intra_node);
    scope("inter_node", c.collectives.inter_node);
  }
  return y.str();
}

}  // namespace symmesh::scenario
