#pragma once
// A ClusterSpec written as a cluster file (the format of scenarios/clusters/*.yaml, read by
// scenario/cluster_reader.hpp): what `symmesh calibrate` writes. Every figure is written
// in the unit people read it in (TFLOP/s, TB/s, GB/s, us, GiB) as a decimal that the
// reader turns back into exactly the same double, unless fewer significant digits are
// asked for (a measurement is not more precise than that).
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"

namespace symmesh::scenario {

struct ClusterFileNotes {
  std::vector<std::string> header;  // comment lines at the top (without "# ")
  std::string gpu;                  // a comment line before each section, when not empty
  std::string intra_node;
  std::string inter_node;
  std::string collectives;
};

struct ClusterFileFormat {
  int significant_digits = 0;  // 0: exact (the reader gets the same doubles back)
};

// The file's text. inter_node is written when the cluster has more than one node or names
// a NIC bandwidth.
std::string cluster_file_text(const ClusterSpec& cluster, const ClusterFileNotes& notes = {},
                              const ClusterFileFormat& format = {});

// `value` / 10^power_of_ten as a plain decimal ("989.4" for 989.4e12 and 12); exact, or
// rounded to `significant_digits` when > 0.
std::string decimal_in_unit(double value, int power_of_ten, int significant_digits = 0);

}  // namespace symmesh::scenario
