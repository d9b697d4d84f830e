#include "core/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/errors.hpp"

namespace symmesh {

std::string input_file_fault(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows links
  if (ec == std::errc::too_many_symbolic_link_levels)
    return "'" + path + "' is a loop of symbolic links";
  if (ec || !fs::exists(status) || fs::is_regular_file(status)) return "";
  if (fs::is_directory(status)) return "'" + path + "' is a directory, not a file";
  return "'" + path + "' is not a regular file (a FIFO, a device or a socket)";
}

namespace {
std::string too_large(const std::string& path) {
  return "'" + path + "' holds more than " + std::to_string(kMaxInputFileBytes >> 20) +
         " MiB, the most an input file may hold (docs/limits.md)";
}
}  // namespace

std::string input_size_fault(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  return !ec && bytes > static_cast<std::uintmax_t>(kMaxInputFileBytes) ? too_large(path) : "";
}

std::string read_input_file(const std::string& path, const std::string& option) {
  if (const std::string fault = input_file_fault(path); !fault.empty())
    throw InvalidArgument(fault, option);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("cannot read '" + path + "'", option);
  return read_bounded_input(in, path, option);
}

std::string read_bounded_input(std::istream& in, const std::string& path,
                               const std::string& where) {
  // Read in pieces up to the bound and one byte past it, so that neither a huge file nor
  // one that grows while read (a log being written) is held whole.
  std::string text;
  char piece[1 << 16];
  while (in && static_cast<int64_t>(text.size()) <= kMaxInputFileBytes) {
    in.read(piece, sizeof piece);
    text.append(piece, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw InvalidArgument("cannot read '" + path + "'", where);
  if (static_cast<int64_t>(text.size()) > kMaxInputFileBytes)
    throw InvalidArgument(too_large(path), where);
  return text;
}

}  // namespace symmesh
