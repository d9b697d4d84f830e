#pragma once
// Reading a whole input file that a user names on the command line (measurements, a GEMM
// table, nccl-tests output): one guard for all of them. Only regular files are read: a FIFO
// would block the read forever, a device (/dev/zero) never end.
#include <string>

namespace symmesh {

// The file's bytes. Throws InvalidArgument naming `option` ("--gemm") when `path` is not a
// regular file or cannot be read.
std::string read_input_file(const std::string& path, const std::string& option);

}  // namespace symmesh
