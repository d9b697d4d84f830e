#pragma once
// Reading a whole input file that a user names on the command line (measurements, a GEMM
// table, nccl-tests output): one guard for all of them. Only regular files are read: a FIFO
// would block the read forever, a device (/dev/zero) never end.
#include <cstdint>
#include <istream>
#include <string>

namespace symmesh {

// The most bytes any input file may hold (scenarios, clusters, Hugging Face configs,
// measurements, GEMM and nccl-tests tables): the largest the readers accept by their own
// bounds is a 10,000-row nccl-tests table, about 1 MB; past this a file is refused before
// it is parsed, having read no more than this and one byte.
inline constexpr int64_t kMaxInputFileBytes = int64_t{64} << 20;  // 64 MiB

// Why `path` cannot be an input file, as the one message every reader gives for that
// fault: "'P' is not a regular file (a FIFO, a device or a socket)", "'P' is a directory,
// not a file", "'P' is a loop of symbolic links"; "" when it is a regular file or does not
// exist (each caller says "not found" its own way, with where it looked).
std::string input_file_fault(const std::string& path);

// "'P' holds more than 64 MiB, the most an input file may hold (docs/limits.md)" when
// `path` is larger than kMaxInputFileBytes; "" otherwise (also when it cannot be sized).
// For a reader that checks a reference before it reads the file.
std::string input_size_fault(const std::string& path);

// The file's bytes. Throws InvalidArgument naming `option` ("--gemm") when `path` is not a
// regular file, cannot be read, or holds more than kMaxInputFileBytes.
std::string read_input_file(const std::string& path, const std::string& option);

// The bytes of `in`, opened from `path`, at most kMaxInputFileBytes (else InvalidArgument
// at `where`, naming the bound): for a reader that opens the file itself.
std::string read_bounded_input(std::istream& in, const std::string& path,
                               const std::string& where);

}  // namespace symmesh
