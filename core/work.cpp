// dist::Work: forwards to its WorkState; a default Work is complete.
#include "core/work_state.hpp"

namespace dist {

void Work::wait() {
  if (state_) state_->wait();
}

bool Work::is_completed() const { return !state_ || state_->is_completed(); }

}  // namespace dist

namespace dist::core {

Work completed_work() { return Work{}; }

}  // namespace dist::core
