#pragma once
// `symmesh calibrate --nccl-tests FILE … --base CLUSTER --out NEW.yaml`: the base cluster
// with a `collectives:` section fitted to nccl-tests outputs (evaluation/collective_fit.hpp),
// written as a cluster file, and the fit's error per collective printed.
#include <ostream>
#include <string>
#include <vector>

namespace symmesh::cli {

struct CollectiveCalibrationArgs {
  std::vector<std::string> nccl_tests;  // runs with the default algorithm of their collective
  std::vector<std::string> nvls;        // runs that used NVLink SHARP
  std::string base;                     // required: the cluster the runs were measured on
  std::string out;
  std::string name;  // of the written cluster; the base's when empty
};

// Throws InvalidArgument (exit 2) for a missing --base, an unreadable or malformed file
// (named file:line), or a fit that cannot be made; nothing is written then.
int run_collective_calibration(const CollectiveCalibrationArgs& args, std::ostream& out);

}  // namespace symmesh::cli
