#include "tools/cli/mpi_launch.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "core/errors.hpp"
#include "evaluation/module_search.hpp"

namespace symmesh::cli {
namespace {

namespace fs = std::filesystem;

std::optional<int> env_int(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1 << 24) return std::nullopt;
  return static_cast<int>(value);
}

template <typename... Names>
std::optional<int> first_env_int(Names... names) {
  std::optional<int> out;
  ((out = out ? out : env_int(names)), ...);
  return out;
}

}  // namespace

MpiLaunch mpi_launch() {
  MpiLaunch out;
  out.launched =
      std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
  if (!out.launched) return out;
  out.world_size = first_env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE");
  out.rank = first_env_int("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK").value_or(0);
  out.ranks_on_node =
      std::max(1, first_env_int("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS").value_or(1));
  return out;
}

bool mpi_built() {
#ifdef SYMMESH_MPI_BUILT
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> open_mpi(const std::string& command) {
  if (!mpi_built())
    throw Unavailable(
        "started by an MPI launcher, but this symmesh was built without MPI (libopenmpi-dev "
        "at configure time), so its processes cannot share the work; run it without mpirun, "
        "or rebuild with OpenMPI installed",
        command);
  const evaluation::ModuleSearch module =
      evaluation::find_module("SYMMESH_MPI_MODULE", "libsymmesh_mpi.so");
  std::error_code ec;
  if (module.found.empty() || !fs::exists(module.found, ec))
    throw Unavailable("the MPI module is missing (looked in " + evaluation::looked_text(module) +
                          "; it is built next to symmesh and installed in lib/symmesh), so " +
                          command + " cannot run under mpirun",
                      command);
  const fs::path& path = module.found;
  // RTLD_GLOBAL: Open MPI's own plugins (mca_*.so), which it opens in MPI_Init, find
  // libmpi's symbols only in the global scope.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw Unavailable("cannot load the MPI module " + path.string() + ": " + dlerror(), command);
  using Create = Communicator* (*)(char*);
  const auto create = reinterpret_cast<Create>(dlsym(handle, "symmesh_create_mpi_communicator"));
  if (!create) throw Unavailable(path.string() + " is not symmesh's MPI module", command);
  char error[512] = "";
  Communicator* world = create(error);
  if (!world) throw Unavailable(std::string("cannot start MPI: ") + error, command);
  return std::unique_ptr<Communicator>(world);
}

}  // namespace symmesh::cli
