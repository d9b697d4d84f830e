#include "core/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"

namespace symmesh {

std::string read_input_file(const std::string& path, const std::string& option) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw InvalidArgument("'" + path + "' is not a regular file", option);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("cannot read '" + path + "'", option);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InvalidArgument("cannot read '" + path + "'", option);
  return text.str();
}

}  // namespace symmesh
