#pragma once
// A Program built op by op from Python and run on the simulator: the compiled half of
// symmesh.symm_mem (python/symmesh/symm_mem.py), which writes a per-rank program in
// torch.distributed._symmetric_memory's terms into a _symmesh.Program.
#include <pybind11/pybind11.h>

namespace symmesh::python {

// Adds _symmesh.BufferRef, _symmesh.Program and _symmesh.simulate_program to `module`.
void register_program(pybind11::module_& module);

}  // namespace symmesh::python
