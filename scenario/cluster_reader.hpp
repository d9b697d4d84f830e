#pragma once
// The `cluster:` part of a scenario, inline or in its own file, with `base:` references.
// Internal to the loader.
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "scenario/yaml_reader.hpp"

namespace symmesh::scenario {

// Finds a file named from `referrer` (a scenario or cluster file): relative to the
// referrer's directory, then the shipped scenarios directory, then its clusters/ folder.
// Fails at `reference` ("cluster file 'x' not found (looked in …)") when none exists.
std::string resolve_reference(const Value& reference);
// The same for another kind of shipped file: its noun in messages, the folder of
// scenarios/ it ships in and its extension (for the did-you-mean).
struct ReferenceKind {
  std::string noun;
  std::string folder;
  std::string extension;
};
extern const ReferenceKind kClusterFiles;  // "cluster file", clusters/, .yaml
extern const ReferenceKind kModelConfigs;  // "Hugging Face config", models/, .json
std::string resolve_reference(const Value& reference, const ReferenceKind& kind);

// `value` is the cluster map or a path to a cluster file. Complete and validated: missing keys and
// invalid figures fail at the cluster, or where the offending figure was written.
ClusterSpec read_cluster(const Value& value);

// The keys gpu.peak takes: dtype families of peak_key(DType), one dense peak each.
extern const std::vector<std::string> kPeakKeys;
// A cluster file given by path (load_cluster).
ClusterSpec read_cluster_file(const std::string& path);

}  // namespace symmesh::scenario
