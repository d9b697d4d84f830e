#pragma once
// What the simulation backend is built against (the backend itself: sim/ issue).
#include <string>

namespace symmesh::sim {

// "SimGrid 3.32.0" — the library actually linked, read at run time.
std::string simgrid_description();

}  // namespace symmesh::sim
