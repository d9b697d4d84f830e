#pragma once
// Output files written so that a reader never sees half a file.
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace symmesh::cli {

// Checks, before any work, that `path` may be written as an output of option `what`: its
// folder exists; it is not one of `inputs` (the scenario, its cluster files, measurements:
// writing there would destroy what the command read); and it is absent or a regular
// file (symmesh replaces nothing else: not /dev/null, a FIFO, a folder or a symlink).
// Throws InvalidArgument naming `what`.
void check_output_path(const std::string& path, const std::string& what,
                       const std::vector<std::string>& inputs = {});

// The files a loaded scenario was read from: itself, its cluster file and their bases.
std::vector<std::string> files_read_for(const Scenario& scenario);

// Writes through a temporary file (unique, created exclusively beside `path`, ending in
// .tmp) and a rename, after check_output_path(path, what). Throws InvalidArgument naming
// `what` (e.g. "--trace") and the reason when the path cannot be written.
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what);

}  // namespace symmesh::cli
