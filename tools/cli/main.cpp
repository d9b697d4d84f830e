// The symmesh command line. Exit codes: 0 success, 2 bad input (the message names what
// and where), 1 a failed run ("failed: …") or an internal failure ("internal error: …").
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "core/errors.hpp"
#include "evaluation/backends.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/interrupt_cleanup.hpp"

namespace {

std::string version_text() {
  std::string text =
      "symmesh " SYMMESH_VERSION " (" + symmesh::evaluation::simulator().description();
  return text + "; hw: " + symmesh::evaluation::hardware_backend_description() + ")";
}

}  // namespace

int main(int argc, char** argv) {
  // Interrupted, symmesh leaves no temporary, made folder or helper behind.
  symmesh::cli::install_interrupt_cleanup();
  // Over a file-size limit (ulimit -f) the kernel's default would kill symmesh mid-write
  // (SIGXFSZ, no message, temporaries left); ignored, the write fails with EFBIG, which
  // the output writers report as bad input (exit 2) with the previous outputs whole.
  // Children inherit it: gnuplot's image fails to write and is not kept.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "symmesh: how should this matrix work be split across these GPUs, how long will it take, "
      "how many GPUs do I need?",
      "symmesh"};
  // A callback: the version names the simulator's library, which opens the simulation
  // module, so only --version pays for it.
  app.set_version_flag("--version", std::function<std::string()>(version_text));
  app.require_subcommand(1);
  symmesh::cli::CommandAction selected;
  symmesh::cli::register_commands(app, selected);

  // CLI11 would only say "A subcommand is required" for a misspelt command, or for an
  // option given before any command.
  if (argc > 1 && argv[1][0] == '-' && std::string(argv[1]) != "--help" &&
      std::string(argv[1]) != "-h" && std::string(argv[1]) != "--help-all" &&
      std::string(argv[1]) != "--version") {
    std::cerr << "symmesh: error: unknown option '" << argv[1]
              << "' before the command (symmesh COMMAND [options])\nRun 'symmesh --help' for "
                 "usage.\n";
    return 2;
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      found |= sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::cerr << "symmesh: error: unknown command '" << argv[1] << "' (commands: " << known
                << ")\nRun 'symmesh --help' for usage.\n";
      return 2;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "symmesh: error: " << e.what() << "\n"
              << "Run 'symmesh --help' for usage.\n";
    return 2;
  }

  try {
    return selected ? selected() : 2;
  } catch (const symmesh::InvalidArgument& e) {
    std::cerr << "symmesh: error: " << e.what() << "\n";
    return 2;
  } catch (const symmesh::Unsupported& e) {
    std::cerr << "symmesh: error: " << e.what() << "\n";
    return 2;
  } catch (const symmesh::Unavailable& e) {
    // It cannot run here (no hardware backend, no GPU): say why; not bad input.
    std::cerr << "symmesh: error: " << e.message() << "\n";
    return 1;
  } catch (const symmesh::Error& e) {
    // The run itself failed (a deadlock or a wait that timed out, a hazard, CUDA/NCCL or a
    // simulation process that died): the input was valid, so not 2, and not symmesh's bug.
    std::cerr << "symmesh: failed: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "symmesh: internal error: " << e.what() << "\n";
    return 1;
  }
}
