#pragma once
// symmesh plan's command-line options, stored into the arguments that reports/plan_args.hpp
// parses into an op problem.
#include <CLI/CLI.hpp>

#include "reports/plan_args.hpp"

namespace symmesh::cli {

// Adds the `plan` subcommand and its options to `app`; parsing stores into `args`, which
// must outlive `app`. gpus_per_host_given is left to the caller (the option's count()).
CLI::App* add_plan_subcommand(CLI::App& app, reports::PlanArgs& args);

}  // namespace symmesh::cli
