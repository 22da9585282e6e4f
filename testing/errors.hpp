// What a rank raised, for tests' assertions: its text ("no error" when it returned normally) and
// whether it was of a given class.
#pragma once

#include <exception>
#include <string>

#include "dist/errors.hpp"

namespace test_support {

inline std::string message_of(const std::exception_ptr& e) {
  if (!e) return "no error";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

template <class E>
bool raised(const std::exception_ptr& e) {
  return dist::holds_error<E>(e);
}

}  // namespace test_support
