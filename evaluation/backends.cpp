#include "evaluation/backends.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "core/errors.hpp"
#include "core/executable_dir.hpp"
#include "evaluation/module_search.hpp"
#ifdef SYMMESH_HW_BUILT
#include "hw/toolkit_info.hpp"
#endif

namespace symmesh::evaluation {
namespace {

namespace fs = std::filesystem;

// Opens `path` and returns its entry point `symbol`. The module stays loaded for the life
// of the process: CUDA, NCCL and SimGrid keep threads and handlers that must not outlive
// their code.
void* open_entry(const ModuleSearch& module, const char* symbol, const std::string& what,
                 const std::string& command) {
  std::error_code ec;
  if (module.found.empty() || !fs::exists(module.found, ec)) {
    throw Unavailable("the " + what + " module is missing (looked in " + looked_text(module) +
                          "; it is built next to symmesh and installed in lib/symmesh), so " +
                          command + " cannot run",
                      command);
  }
  const fs::path& path = module.found;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw Unavailable("cannot load the " + what + " module " + path.string() + ": " + dlerror(),
                      command);
  void* entry = dlsym(handle, symbol);
  if (!entry)
    throw Unavailable(path.string() + " is not symmesh's " + what + " module (no " + symbol + ")",
                      command);
  return entry;
}

std::unique_ptr<Backend> load_hardware_backend(const std::string& command) {
#ifndef SYMMESH_HW_BUILT
  throw Unavailable(
      "this symmesh was built without the hardware backend (hw/ needs the CUDA "
      "toolkit with NCCL at configure time), so " +
          command + " cannot run; symmesh simulate can",
      command);
#else
  using Create = Backend* (*)();
  const auto create = reinterpret_cast<Create>(
      open_entry(find_module("SYMMESH_HW_MODULE", "libsymmesh_hw.so"),
                 "symmesh_create_nccl_backend", "hardware backend", command));
  return std::unique_ptr<Backend>(create());
#endif
}

}  // namespace

const sim::Simulator& simulator() {
  static std::once_flag once;
  static std::unique_ptr<sim::Simulator> loaded;
  std::call_once(once, [] {
    using Create = sim::Simulator* (*)();
    const auto create = reinterpret_cast<Create>(
        open_entry(find_module("SYMMESH_SIM_MODULE", "libsymmesh_sim.so"),
                   "symmesh_create_simulator", "simulation", "symmesh simulate"));
    loaded.reset(create());
  });
  return *loaded;
}

std::unique_ptr<Backend> make_backend(std::string_view name, const ClusterSpec* cluster,
                                      const std::string& command) {
  if (name == "sim") {
    if (!cluster) throw InvalidArgument("the sim backend needs a cluster", "backend");
    return simulator().make_backend(*cluster);
  }
  if (name == "nccl") return load_hardware_backend(command);
  throw InvalidArgument("unknown backend '" + std::string(name) + "' (sim or nccl)", "--backend");
}

std::unique_ptr<strategies::CostModel> make_cost_model(
    std::string_view name, const strategies::CostModelOptions& options) {
  if (name == "simulated") return simulator().make_cost_model(name, options);
  return strategies::make_cost_model(name, options);
}

std::string hardware_backend_description() {
#ifdef SYMMESH_HW_BUILT
  return hw::executor_description() + "; one-sided: " + hw::one_sided_path();
#else
  return "not built (no CUDA toolkit with NCCL at configure time)";
#endif
}

}  // namespace symmesh::evaluation
