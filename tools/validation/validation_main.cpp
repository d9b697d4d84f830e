// symmesh_validation: the validation table (tools/validation/validation_table.hpp), or the
// calibrate arguments of the manifest. tools/validation/run is the way to call it.
//   symmesh_validation --manifest M --published DIR --clusters DIR
//   symmesh_validation --manifest M --published DIR --calibration-clusters
//   symmesh_validation --manifest M --published DIR --calibration-arguments CLUSTER
//   symmesh_validation --manifest M --published DIR --gemm-fit-csv CLUSTER
#include <iostream>
#include <string>

#include "core/errors.hpp"
#include "tools/validation/validation_table.hpp"

int main(int argc, char** argv) {
  std::string manifest, published, clusters, calibration_of, gemm_of;
  bool list_clusters = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "symmesh_validation: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--manifest")
      manifest = value();
    else if (a == "--published")
      published = value();
    else if (a == "--clusters")
      clusters = value();
    else if (a == "--calibration-arguments")
      calibration_of = value();
    else if (a == "--gemm-fit-csv")
      gemm_of = value();
    else if (a == "--calibration-clusters")
      list_clusters = true;
    else {
      std::cerr << "symmesh_validation: unknown argument '" << a << "'\n";
      return 2;
    }
  }
  if (manifest.empty() || published.empty() ||
      (clusters.empty() && calibration_of.empty() && gemm_of.empty() && !list_clusters)) {
    std::cerr << "usage: symmesh_validation --manifest M --published DIR (--clusters DIR | "
                 "--calibration-clusters | --calibration-arguments CLUSTER)\n";
    return 2;
  }
  try {
    namespace v = symmesh::validation;
    if (!gemm_of.empty())
      std::cout << v::gemm_fit_csv(manifest, published, gemm_of);
    else if (list_clusters)
      std::cout << v::calibrated_clusters(manifest);
    else if (!calibration_of.empty())
      std::cout << v::calibration_arguments(manifest, published, calibration_of);
    else
      std::cout << v::validation_report(v::validation_points(manifest, published, clusters));
  } catch (const symmesh::InvalidArgument& e) {
    std::cerr << "symmesh_validation: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
