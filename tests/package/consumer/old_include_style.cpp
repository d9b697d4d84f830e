// Must NOT compile (tests/package/run.sh builds it and expects a failure naming
// core/placement.hpp): the package exports <prefix>/include, not <prefix>/include/symmesh,
// so a bare "core/placement.hpp" does not resolve through it and cannot collide with
// another project's core/. Include symmesh as <symmesh/core/placement.hpp>.
#include "core/placement.hpp"

int main() { return symmesh::Placement::replicate().is_replicate() ? 0 : 1; }
