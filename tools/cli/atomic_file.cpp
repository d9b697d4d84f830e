#include "tools/cli/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/errors.hpp"

namespace symmesh::cli {

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what) {
  const std::string tmp = path + ".tmp";
  // The reason ("No such file or directory", "Is a directory") tells the user what to fix.
  auto fail = [&](const std::string& reason) {
    return InvalidArgument("cannot write '" + path + "': " + reason, what);
  };
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw fail(errno != 0 ? std::strerror(errno) : "cannot create " + tmp);
    out << text;
    if (!out.flush()) {
      const std::string reason = errno != 0 ? std::strerror(errno) : "write failed";
      out.close();
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw fail(reason);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string reason = ec.message();
    std::filesystem::remove(tmp, ec);
    throw fail(reason);
  }
}

}  // namespace symmesh::cli
