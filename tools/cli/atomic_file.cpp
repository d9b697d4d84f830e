#include "tools/cli/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace symmesh::cli {

namespace {

std::string kind_of(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::directory:
      return "a folder";
    case std::filesystem::file_type::symlink:
      return "a symbolic link";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::fifo:
      return "a FIFO";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

}  // namespace

void check_output_path(const std::string& path, const std::string& what,
                       const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  const fs::path parent = fs::absolute(path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw InvalidArgument(
        "cannot write '" + path + "': " +
            (fs::exists(parent, ec) ? "'" + parent.string() + "' is not a folder"
                                    : "its folder '" + parent.string() + "' does not exist"),
        what);
  const fs::file_status status = fs::symlink_status(path, ec);
  if (fs::exists(status) && status.type() != fs::file_type::regular)
    throw InvalidArgument("cannot write '" + path + "': it exists and is " +
                              kind_of(status.type()) + "; symmesh replaces only regular files",
                          what);
  for (const std::string& input : inputs)
    if (!input.empty() && fs::exists(path, ec) && fs::equivalent(path, input, ec))
      throw InvalidArgument("cannot write '" + path + "': it is the input '" + input +
                                "', which writing would destroy",
                            what);
}

std::vector<std::string> files_read_for(const Scenario& scenario) {
  std::vector<std::string> files{scenario.path};
  files.insert(files.end(), scenario.cluster.source_files.begin(),
               scenario.cluster.source_files.end());
  return files;
}

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what) {
  check_output_path(path, what);
  // The reason ("No such file or directory", "Is a directory") tells the user what to fix.
  auto fail = [&](const std::string& reason) {
    return InvalidArgument("cannot write '" + path + "': " + reason, what);
  };
  // A name of our own, created exclusively: never a file or link that was there before.
  std::string name = path + ".XXXXXX.tmp";
  const int fd = mkstemps(name.data(), 4);
  if (fd < 0) throw fail(std::strerror(errno));
  const std::string tmp = name;
  const auto drop = [&] {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
  };
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = n < 0 ? std::strerror(errno) : "write failed";
      close(fd);
      drop();
      throw fail(reason);
    }
    done += static_cast<size_t>(n);
  }
  // Readable as an ofstream-made file would be (mkstemp makes it 0600).
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    drop();
    throw fail(reason);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string reason = ec.message();
    drop();
    throw fail(reason);
  }
}

}  // namespace symmesh::cli
