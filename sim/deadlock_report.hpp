#pragma once
// The errors only a simulator can raise, and the report it gives when streams can never
// continue: which ranks wait, at which op, for what, and on whom.
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace symmesh::sim {

// One stream that was blocked when the simulation could make no more progress.
struct BlockedStream {
  int rank = -1;
  std::string stream;          // stream name
  std::string op_name;         // the op's label name ("" when unlabelled)
  std::string op_kind;         // "wait_signal" | "wait_event" | "barrier"
  int handle = -1;             // symmetric buffer (wait_signal), else -1
  std::vector<int> waits_for;  // world ranks it waits on (signal sender, absent barrier members)
  std::string description;     // one line: what it waits for and why it cannot come
};

// Every remaining stream is blocked on a signal, event or barrier that no running stream
// can ever provide. A Timeout: the simulator's form of "this wait would never complete".
class DeadlockError : public Timeout {
 public:
  explicit DeadlockError(std::vector<BlockedStream> blocked);
  const std::vector<BlockedStream>& blocked() const { return blocked_; }

 private:
  std::vector<BlockedStream> blocked_;
};

// A put overwrote bytes the receiver had not consumed, with SimOptions::hazards_are_errors.
class HazardError : public Error {
 public:
  using Error::Error;
};

// "deadlock: 2 streams wait forever — rank 1 stream 'comm' at 'w3' (wait_signal): …; …"
std::string describe_deadlock(const std::vector<BlockedStream>& blocked);

}  // namespace symmesh::sim
