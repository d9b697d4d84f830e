#pragma once
// A sweep point (its size, skip reason and whole simulation report) as bytes and back, so
// that the processes of a distributed sweep (tools/cli/mpi_sweep.hpp) can hand their
// points to the one that writes the outputs. The round trip is exact: every double is kept
// as a hexadecimal float ("%a"), so a point decoded elsewhere prints, ranks and plots as
// the point evaluated here would.
#include <string>

#include "evaluation/sweep_runner.hpp"

namespace symmesh::evaluation {

std::string encode_sweep_point(const SweepPoint& point);
// Throws InvalidArgument naming `where` when `bytes` are not an encoded point.
SweepPoint decode_sweep_point(const std::string& bytes, const std::string& where);

}  // namespace symmesh::evaluation
