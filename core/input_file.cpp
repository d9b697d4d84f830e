#include "core/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
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

std::string read_input_file(const std::string& path, const std::string& option) {
  if (const std::string fault = input_file_fault(path); !fault.empty())
    throw InvalidArgument(fault, option);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("cannot read '" + path + "'", option);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InvalidArgument("cannot read '" + path + "'", option);
  return text.str();
}

}  // namespace symmesh
