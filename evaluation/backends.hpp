#pragma once
// The one place that chooses a backend (core/backend.hpp) and a cost model by name, and
// that opens the modules they live in — only when they are needed:
//   sim        the SimGrid-modelled cluster (sim/simulator.hpp, libsymmesh_sim.so): opened by
//              the commands that simulate, and by the "simulated" cost model;
//   nccl       this machine's GPUs (hw/nccl_backend.hpp, libsymmesh_hw.so): opened by the
//              commands that execute on GPUs.
// So `symmesh plan` maps neither SimGrid nor any CUDA library, and `simulate` no CUDA one.
// A module is looked for in $SYMMESH_SIM_MODULE / $SYMMESH_HW_MODULE, next to the running
// executable, in an install tree's lib/symmesh, then in the build folder it was built in
// (evaluation/module_search.hpp).
#include <memory>
#include <string>
#include <string_view>

#include "core/backend.hpp"
#include "core/cluster_spec.hpp"
#include "sim/simulator.hpp"
#include "strategies/cost_model.hpp"

namespace symmesh::evaluation {

// Throws InvalidArgument for an unknown name (or "sim" without a cluster), Unavailable when
// its module was not built or cannot be loaded ("… so symmesh run cannot run; symmesh
// simulate can", naming `command`).
std::unique_ptr<Backend> make_backend(std::string_view name, const ClusterSpec* cluster = nullptr,
                                      const std::string& command = "symmesh run");

// "dtensor", "analytic" or "simulated" (which opens the simulation module). Throws
// InvalidArgument for an unknown name or options, naming them.
std::unique_ptr<strategies::CostModel> make_cost_model(std::string_view name,
                                                       const strategies::CostModelOptions& options);

// The simulation module, opened on first use. Throws Unavailable when it cannot be.
const sim::Simulator& simulator();

// What the hardware backend is built against, or why it was not built (for --version),
// known without loading it.
std::string hardware_backend_description();

}  // namespace symmesh::evaluation
