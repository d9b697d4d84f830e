#pragma once
// What an interrupted command leaves behind: nothing. SIGINT, SIGTERM and SIGHUP end symmesh
// as they would (the same signal, re-raised), but first its handler removes the temporary
// files staged for outputs, removes an output folder the command made, and kills the helper
// programs it started (gnuplot). Forked simulations need no handler: they die with their
// parent (PR_SET_PDEATHSIG, sim/forked_run.cpp), as do helpers if symmesh is SIGKILLed.
//
// The handler may run at any instruction, so what it reads is a fixed table written
// before use (async-signal-safe: only unlink, rmdir, kill, signal and raise run in it).
#include <sys/types.h>

#include <string>

namespace symmesh::cli {

// Installs the handlers; main() calls it once. Only this process cleans: a forked child
// that inherits the handlers just dies by the signal.
void install_interrupt_cleanup();

// A path to unlink (a temporary) or rmdir (a folder this command made) if interrupted;
// forget_path once it is renamed into place or removed. Returns false when the table is
// full (then that path is not cleaned on a signal; nothing else changes).
bool remember_path(const std::string& path);
void forget_path(const std::string& path);

// A child to SIGKILL if interrupted, with its process group, until forget_child (after
// waitpid).
void remember_child(pid_t pid);
void forget_child(pid_t pid);

}  // namespace symmesh::cli
