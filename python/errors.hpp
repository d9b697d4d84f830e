#pragma once
// symmesh's exceptions (core/errors.hpp) as Python exceptions, with the text the CLI prints
// after "symmesh: error: " (what(): "file:line:col: message") and the parts as attributes
// (message, where, rank). The hierarchy, which python/symmesh/__init__.py documents:
//   symmesh.Error                            every symmesh error
//     symmesh.ScenarioError (+ ValueError)   InvalidArgument: bad input (CLI exit code 2)
//       symmesh.DoesNotFitError              a step over the GPU's memory
//     symmesh.UnsupportedError (+ ValueError)  well-formed but not supported (exit code 2)
//     symmesh.UnavailableError (+ RuntimeError)  a backend that cannot run here (exit code 1)
//     symmesh.SimulationError (+ RuntimeError)   a failed run: timeout, backend error (exit 1)
#include <pybind11/pybind11.h>

namespace symmesh::python {

// Creates the classes in `module` and registers the translation of symmesh::Error.
void register_errors(pybind11::module_& module);

}  // namespace symmesh::python
