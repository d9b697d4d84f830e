#pragma once
// thrown<E>(f): the exception of type E that f throws, so a test can inspect its message,
// where() and rank(); records a test failure when f throws nothing.
#include <gtest/gtest.h>

namespace symmesh::testing {

template <typename E, typename F>
E thrown(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return E("<nothing thrown>", "");
}

}  // namespace symmesh::testing
