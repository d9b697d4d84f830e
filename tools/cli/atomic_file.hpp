#pragma once
// Output files written so that a reader never sees half a file.
#include <string>
#include <utility>
#include <vector>

#include "core/scenario.hpp"

namespace symmesh::cli {

// Checks, before any work, that `path` may be written as an output of option `what`: its
// folder exists; it is not one of `inputs` (the scenario, its cluster files, measurements:
// writing there would destroy what the command read); and it is absent or a regular
// file (symmesh replaces nothing else: not /dev/null, a FIFO, a folder or a symlink).
// Throws InvalidArgument naming `what`.
void check_output_path(const std::string& path, const std::string& what,
                       const std::vector<std::string>& inputs = {});
// Whether two paths name one file: the same inode when both exist, else the same path once
// resolved (outputs that do not exist yet). False when either is empty.
bool same_file(const std::string& a, const std::string& b);

// The files a loaded scenario was read from, transitively: itself, its cluster file and
// every base: of the chain, and its model's Hugging Face config.
std::vector<std::string> files_read_for(const Scenario& scenario);
// The files a loaded cluster was read from: it and every file of its base: chain.
std::vector<std::string> files_read_for(const ClusterSpec& cluster);

// A set of output files that replace their predecessors together. Each is first written
// to a temporary of its own (created exclusively beside its path, NAME.XXXXXX.tmp, never
// a file or link that was there); commit() renames them all into place (and removes the
// paths marked stale); destroyed before commit() it removes its temporaries, so a run that
// fails anywhere before the commit leaves every previous output whole. Errors are
// InvalidArgument naming `what` (e.g. "--out") and the path.
class StagedOutputs {
 public:
  explicit StagedOutputs(std::string what) : what_(std::move(what)) {}
  ~StagedOutputs();
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;

  // Writes `text` to `path`'s temporary (after check_output_path).
  void stage(const std::string& path, const std::string& text);
  // An empty temporary for `path` that another program fills (gnuplot); staged like the
  // others unless discard()ed.
  std::string temporary_for(const std::string& path);
  void discard(const std::string& path);
  // The temporary staged for `path` ("" when none).
  std::string temporary_of(const std::string& path) const;
  // `path` is removed at commit (an image of an earlier run that this one has not made).
  void remove_at_commit(const std::string& path) { stale_.push_back(path); }
  void commit();

 private:
  std::string what_;
  std::vector<std::pair<std::string, std::string>> staged_;  // (path, its temporary)
  std::vector<std::string> stale_;
};

// One file as a set of one: stage and commit.
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what);

}  // namespace symmesh::cli
