// dist::Work: forwards to its WorkState (through the call layer when it recorded the call) and
// takes an issued Work out of its rank's ledger (core/work_ledger.hpp); a default Work is complete.
#include "core/calls/call_layer.hpp"
#include "core/work_ledger.hpp"
#include "core/work_state.hpp"

namespace dist {

void Work::wait() {
  if (!state_) return;
  const bool issued = state_->issued.ticket != 0;
  try {
    if (state_->recorded.site) core::wait_recorded(*state_);
    else state_->wait();
  } catch (...) {
    if (issued) core::finish_issued(*state_, false);
    throw;
  }
  if (issued) core::finish_issued(*state_, true);
}

bool Work::is_completed() const {
  if (!state_) return true;
  const bool done = state_->is_completed();
  if (done && state_->issued.ticket != 0) core::finish_issued(*state_, true);
  return done;
}

}  // namespace dist

namespace dist::core {

Work completed_work() { return Work{}; }

}  // namespace dist::core
