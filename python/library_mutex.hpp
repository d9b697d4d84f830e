#pragma once
// One library call at a time, whichever Python thread makes it (each runs with the GIL
// released): simulations fork, and no thread may fork while another runs
// (sim/forked_run.hpp). One mutex for the whole extension (inline: one instance).
#include <mutex>

namespace symmesh::python {

inline std::mutex& library_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace symmesh::python
