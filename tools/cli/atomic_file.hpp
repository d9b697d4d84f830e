#pragma once
// Output files written so that a reader never sees half a file.
#include <string>

namespace symmesh::cli {

// Writes through a temporary file and a rename. Throws InvalidArgument naming `what` (e.g.
// "--trace") and the reason when the path cannot be written.
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what);

}  // namespace symmesh::cli
