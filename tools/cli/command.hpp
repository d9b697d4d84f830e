#pragma once
// How subcommands plug into the symmesh CLI: each adds its CLI11 subcommand and, when
// that subcommand is chosen, stores the action main() will run. All commands are
// registered in one place: register_commands (commands.cpp).
#include <CLI/CLI.hpp>
#include <functional>

namespace symmesh::cli {

// Runs the chosen command; returns the exit code. Throws symmesh errors, which main()
// maps to exit codes (bad input 2, internal failure 1).
using CommandAction = std::function<int()>;

void register_commands(CLI::App& app, CommandAction& selected);

void add_calibrate_command(CLI::App& app, CommandAction& selected);
void add_compare_command(CLI::App& app, CommandAction& selected);
void add_plan_command(CLI::App& app, CommandAction& selected);
void add_run_command(CLI::App& app, CommandAction& selected);
void add_simulate_command(CLI::App& app, CommandAction& selected);
void add_sweep_command(CLI::App& app, CommandAction& selected);
void add_validate_command(CLI::App& app, CommandAction& selected);

}  // namespace symmesh::cli
