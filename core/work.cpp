// dist::Work: forwards to its WorkState (through the call layer when it recorded the call); a
// default Work is complete.
#include "core/calls/call_layer.hpp"
#include "core/work_state.hpp"

namespace dist {

void Work::wait() {
  if (!state_) return;
  if (state_->recorded.site) core::wait_recorded(*state_);
  else state_->wait();
}

bool Work::is_completed() const { return !state_ || state_->is_completed(); }

}  // namespace dist

namespace dist::core {

Work completed_work() { return Work{}; }

}  // namespace dist::core
