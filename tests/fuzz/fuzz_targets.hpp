#pragma once
// The bodies of symmesh's fuzz targets, one per parser of hostile input. Each takes one
// input and returns when symmesh answered it: with a value, or with one of the errors its
// interface documents. Anything else escapes as a finding: another exception (an
// std::out_of_range, a broken invariant below), a sanitizer report, a crash or a hang.
//
// The same bodies run in two places: libfuzzer_main.cpp makes one libFuzzer executable per
// target (SYMMESH_FUZZ builds, tools/fuzz), and replay_test.cpp replays every seed and
// saved regression input through them in the normal build.
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace symmesh::fuzz {

// A YAML text, loaded as a scenario and as a cluster file (scenario/scenario_loader.hpp).
void scenario_loader(std::string_view data);
// A quantity with a unit, parsed as each kind (core/quantity.hpp).
void quantity(std::string_view data);
// A placement and a placement list (core/placement.hpp).
void placement(std::string_view data);
// symmesh plan's arguments, one per line: parsed, validated and, on a small mesh, planned
// with the dtensor cost model and reported (tools/cli/plan_options.hpp, reports/plan_args.hpp).
void plan_args(std::string_view data);

// A parser answered, but its answer breaks what its interface promises.
class BrokenInvariant : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

inline void require(bool holds, const std::string& what) {
  if (!holds) throw BrokenInvariant(what);
}

// f()'s value, or nothing when f throws one of the documented `Errors`; any other exception
// escapes unchanged, as a finding.
template <typename... Errors, typename F>
auto answered(F&& f) -> std::optional<decltype(f())> {
  try {
    return f();
  } catch (const std::exception& e) {
    if ((... || (dynamic_cast<const Errors*>(&e) != nullptr))) return std::nullopt;
    throw;
  }
}

}  // namespace symmesh::fuzz
