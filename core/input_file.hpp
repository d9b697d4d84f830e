#pragma once
// Reading a whole input file that a user names on the command line (measurements, a GEMM
// table, nccl-tests output): one guard for all of them. Only regular files are read: a FIFO
// would block the read forever, a device (/dev/zero) never end.
#include <string>

namespace symmesh {

// Why `path` cannot be an input file, as the one message every reader gives for that
// fault: "'P' is not a regular file (a FIFO, a device or a socket)", "'P' is a directory,
// not a file", "'P' is a loop of symbolic links"; "" when it is a regular file or does not
// exist (each caller says "not found" its own way, with where it looked).
std::string input_file_fault(const std::string& path);

// The file's bytes. Throws InvalidArgument naming `option` ("--gemm") when `path` is not a
// regular file or cannot be read.
std::string read_input_file(const std::string& path, const std::string& option);

}  // namespace symmesh
