// A WorkState around another: how a layer around a backend (the call layer, the ledger of Works
// not yet waited) keeps its own state of an operation without a field in the backend's. Every
// call forwards to the inner state; a layer overrides what it adds to.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/work_state.hpp"

namespace dist::core {

class WorkDecorator : public detail::WorkState {
 public:
  explicit WorkDecorator(std::shared_ptr<detail::WorkState> inner) : inner_(std::move(inner)) {}

  void wait() override { inner_->wait(); }
  bool is_completed() override { return inner_->is_completed(); }
  void wait_for(std::chrono::milliseconds timeout) override { inner_->wait_for(timeout); }
  void start() override { inner_->start(); }
  void abandon() noexcept override { inner_->abandon(); }
  // The sender core named on this state (post_recv), else the one the inner state knows.
  int source() const override { return received_from >= 0 ? received_from : inner_->source(); }
  const void* collective_of() const override { return inner_->collective_of(); }
  std::string describe() const override { return inner_->describe(); }

 protected:
  // Waits on the inner state (within `timeout` when given), then calls done(true), or done(false)
  // while the wait's exception is handled (it is rethrown after, unless done throws another).
  template <class Done>
  void wait_then(std::optional<std::chrono::milliseconds> timeout, Done&& done) {
    try {
      if (timeout) inner_->wait_for(*timeout);
      else inner_->wait();
    } catch (...) {
      done(false);
      throw;
    }
    done(true);
  }

 private:
  std::shared_ptr<detail::WorkState> inner_;
};

}  // namespace dist::core
