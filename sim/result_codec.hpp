#pragma once
// The message a forked simulation sends its parent: a RunResult, or the error that ended
// the run with enough to re-throw it with the same type, message, place and rank. A plain
// binary format (little-endian host order: parent and child are the same binary).
// Timeline entries travel as they are (indices into the Program, no strings).
#include <exception>
#include <string>

#include "core/run_result.hpp"

namespace symmesh::sim {

std::string encode_result(const RunResult& result);
// Encodes the exception in `error` (symmesh::Error and its kinds, DeadlockError with its
// blocked streams, any std::exception as a BackendError).
std::string encode_error(std::exception_ptr error);

// Decodes a message: returns the result, or throws the error it carries. A malformed or
// truncated message is a BackendError.
RunResult decode_message(const std::string& message);

}  // namespace symmesh::sim
