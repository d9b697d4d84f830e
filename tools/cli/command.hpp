#pragma once
// How subcommands plug into the symmesh CLI: each adds its CLI11 subcommand and, when
// that subcommand is chosen, stores the action main() will run. All commands are
// registered in one place: register_commands (commands.cpp).
#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>

namespace symmesh::cli {

// Runs the chosen command; returns the exit code. Throws symmesh errors, which main()
// maps to exit codes (bad input 2, internal failure 1).
using CommandAction = std::function<int()>;

void register_commands(CLI::App& app, CommandAction& selected);

// Numeric option checks whose message says what is expected ("--jobs: expected a number
// > 0, got '0'"); CLI11's PositiveNumber and NonNegativeNumber print a range up to
// 1.8e308 instead, and for 0 one that contains it.
// Finite only: inf, nan and 1e400 are no number of seconds or jobs.
inline CLI::Validator number_above_zero(bool or_equal) {
  const std::string expected = or_equal ? "a number >= 0" : "a number > 0";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        const bool ok = CLI::detail::lexical_cast(text, value) && std::isfinite(value) &&
                        (or_equal ? value >= 0 : value > 0);
        return ok ? std::string() : "expected " + expected + ", got '" + text + "'";
      },
      expected);
}
inline CLI::Validator positive_number() {
  return number_above_zero(false);
}
inline CLI::Validator non_negative_number() {
  return number_above_zero(true);
}

void add_calibrate_command(CLI::App& app, CommandAction& selected);
void add_compare_command(CLI::App& app, CommandAction& selected);
void add_expand_command(CLI::App& app, CommandAction& selected);
void add_layouts_command(CLI::App& app, CommandAction& selected);
void add_plan_command(CLI::App& app, CommandAction& selected);
void add_run_command(CLI::App& app, CommandAction& selected);
void add_simulate_command(CLI::App& app, CommandAction& selected);
void add_sweep_command(CLI::App& app, CommandAction& selected);
void add_validate_command(CLI::App& app, CommandAction& selected);

}  // namespace symmesh::cli
