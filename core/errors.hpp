#pragma once
// The one small family of exceptions that library code throws. Each carries what went
// wrong, where (an argument, a file:line:col, a function) and, when known, which rank.
// Library code never exits; the CLI maps InvalidArgument/Unsupported to exit code 2.
#include <optional>
#include <stdexcept>
#include <string>

namespace symmesh {

class Error : public std::runtime_error {
 public:
  Error(std::string message, std::string where, std::optional<int> rank = std::nullopt);

  const std::string& message() const { return message_; }
  const std::string& where() const { return where_; }
  const std::optional<int>& rank() const { return rank_; }

 private:
  std::string message_;
  std::string where_;
  std::optional<int> rank_;
};

// The caller asked for something malformed or inconsistent (bad shape, bad placement…).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A step whose least-memory layout is over the GPU's memory (the message says by how much):
// bad input like any InvalidArgument, told apart where a caller can try a leaner step (a
// sweep recomputes a model's activations, evaluation/sweep_runner.hpp).
class DoesNotFit : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// Well-formed but outside what symmesh supports (P(max), a transition DTensor forbids…).
class Unsupported : public Error {
 public:
  using Error::Error;
};

// A wait that could not be satisfied in time (hardware) or ever (simulator).
class Timeout : public Error {
 public:
  using Error::Error;
};

// What was asked cannot run here: a backend that was not built, a machine without the GPUs
// it needs. Not bad input, and not a failed run: the CLI says why, exit code 1.
class Unavailable : public Error {
 public:
  using Error::Error;
};

// A backend library (SimGrid, CUDA, NCCL) reported a failure.
class BackendError : public Error {
 public:
  using Error::Error;
};

}  // namespace symmesh
