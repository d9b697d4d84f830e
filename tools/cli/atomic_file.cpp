#include "tools/cli/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "tools/cli/interrupt_cleanup.hpp"

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

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

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
    if (same_file(path, input))
      throw InvalidArgument("cannot write '" + path + "': it is the input '" + input +
                                "', which writing would destroy",
                            what);
}

std::vector<std::string> files_read_for(const Scenario& scenario) {
  std::vector<std::string> files{scenario.path};
  files.insert(files.end(), scenario.cluster.source_files.begin(),
               scenario.cluster.source_files.end());
  files.insert(files.end(), scenario.model_files.begin(), scenario.model_files.end());
  return files;
}

std::vector<std::string> files_read_for(const ClusterSpec& cluster) {
  return cluster.source_files;
}

namespace {

// An exclusive temporary beside `path`; its descriptor open for writing.
int make_temporary(const std::string& path, std::string& name) {
  name = path + ".XXXXXX.tmp";
  const int fd = mkstemps(name.data(), 4);
  if (fd >= 0) {
    // Readable as a file made by ofstream would be (mkstemp makes it 0600).
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
  }
  return fd;
}

}  // namespace

StagedOutputs::~StagedOutputs() {
  std::error_code ignored;
  for (const auto& [path, tmp] : staged_) {
    std::filesystem::remove(tmp, ignored);
    forget_path(tmp);
  }
}

void StagedOutputs::stage(const std::string& path, const std::string& text) {
  check_output_path(path, what_);
  auto fail = [&](const std::string& reason) {
    return InvalidArgument("cannot write '" + path + "': " + reason, what_);
  };
  std::string tmp;
  const int fd = make_temporary(path, tmp);
  if (fd < 0) throw fail(std::strerror(errno));
  staged_.emplace_back(path, tmp);  // removed by the destructor if anything below fails
  remember_path(tmp);               // and by the signal handler if interrupted
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = n < 0 ? std::strerror(errno) : "write failed";
      close(fd);
      throw fail(reason);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) throw fail(std::strerror(errno));
}

std::string StagedOutputs::temporary_for(const std::string& path) {
  check_output_path(path, what_);
  std::string tmp;
  const int fd = make_temporary(path, tmp);
  if (fd < 0) throw InvalidArgument("cannot write '" + path + "': " + std::strerror(errno), what_);
  close(fd);
  staged_.emplace_back(path, tmp);
  remember_path(tmp);
  return tmp;
}

void StagedOutputs::discard(const std::string& path) {
  std::error_code ignored;
  for (auto it = staged_.begin(); it != staged_.end();)
    if (it->first == path) {
      std::filesystem::remove(it->second, ignored);
      forget_path(it->second);
      it = staged_.erase(it);
    } else {
      ++it;
    }
}

std::string StagedOutputs::temporary_of(const std::string& path) const {
  for (const auto& [staged, tmp] : staged_)
    if (staged == path) return tmp;
  return "";
}

void StagedOutputs::commit() {
  for (const auto& [path, tmp] : staged_) {
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw InvalidArgument("cannot write '" + path + "': " + ec.message(), what_);
    forget_path(tmp);
  }
  staged_.clear();
  std::error_code ignored;
  for (const std::string& path : stale_) std::filesystem::remove(path, ignored);
  stale_.clear();
}

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what) {
  StagedOutputs one(what);
  one.stage(path, text);
  one.commit();
}

}  // namespace symmesh::cli
