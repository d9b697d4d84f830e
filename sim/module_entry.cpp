// The one symbol the simulation module exports (see sim/CMakeLists.txt): everything else of
// sim/ and of its copies of core/ and strategies/ stays inside the module.
#include "sim/simulator.hpp"

extern "C" __attribute__((visibility("default"))) symmesh::sim::Simulator*
symmesh_create_simulator() {
  return symmesh::sim::make_simgrid_simulator().release();
}
