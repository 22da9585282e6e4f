// A program that misuses a Work, run on sim and on the real backends by their work-check tests:
// rank 0 isends and writes into the buffer before its wait, while rank 1 posts the receive later.
#pragma once

#include <span>
#include <vector>

#include "dist/dist.hpp"

namespace test_support {

inline void change_isend_buffer_before_wait() {
  std::vector<int> v(4, 7);
  if (dist::get_rank() == 0) {
    auto work = dist::isend(std::span<int>(v), 1);
    v[2] = -1;
    dist::barrier();
    work.wait();
  } else {
    dist::barrier();
    dist::recv(v, 0);
  }
}

}  // namespace test_support
