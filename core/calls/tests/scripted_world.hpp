// The call layer's tests' world: ranks as threads, each a scripted backend under its call layer,
// over one store. A scripted backend succeeds, or fails every call as a backend does.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "core/calls/call_layer.hpp"
#include "core/work_state.hpp"
#include "dist/errors.hpp"

namespace calls_test {

using namespace dist;
using namespace dist::core;

// A Work whose wait() fails with the backend's error.
class FailingWork final : public detail::WorkState {
 public:
  explicit FailingWork(std::exception_ptr error) : error_(std::move(error)) {}
  void wait() override { std::rethrow_exception(error_); }
  bool is_completed() override { return true; }

 private:
  std::exception_ptr error_;
};

// Succeeds, or fails every call as a backend does: a timeout naming nobody, or a lost peer;
// `pending`: through the Work rather than the call.
class ScriptedBackend final : public BackendImpl {
 public:
  ScriptedBackend(int rank, int size) : rank_(rank), size_(size) {}
  std::function<std::exception_ptr()> failure;  // null: succeed
  bool pending = false;

  dist::Backend kind() const override { return dist::Backend::gloo; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Work all_reduce(Buf, ReduceOp) override { return outcome(); }
  Work broadcast(Buf, int) override { return outcome(); }
  Work all_gather(Buf, ConstBuf) override { return outcome(); }
  Work send(ConstBuf, int, int) override { return outcome(); }
  Work recv(Buf, int, int) override { return outcome(); }
  Work barrier() override { return outcome(); }
  std::shared_ptr<BackendImpl> split(const std::vector<int>&) override { return nullptr; }

 private:
  Work outcome() {
    if (!failure) return {};
    if (pending) return Work(std::make_shared<FailingWork>(failure()));
    std::rethrow_exception(failure());
  }
  int rank_, size_;
};

inline std::exception_ptr timeout_error() {
  return std::make_exception_ptr(TimeoutError("scripted backend timed out"));
}

struct Rank {
  std::shared_ptr<ScriptedBackend> backend;
  std::shared_ptr<BackendImpl> layer;
};

// A world of `n` ranks over one store, its call layers made.
inline std::vector<Rank> world(int n, const std::shared_ptr<Store>& store,
                               std::chrono::milliseconds timeout) {
  std::vector<Rank> ranks;
  for (int r = 0; r < n; ++r) {
    auto backend = std::make_shared<ScriptedBackend>(r, n);
    ranks.push_back({backend, with_call_layer(backend, {store, n, r, timeout})});
  }
  return ranks;
}

// Runs body(rank) on a thread per rank; returns each rank's error (null: none).
inline std::vector<std::exception_ptr> on_threads(int n, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  std::vector<std::jthread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  threads.clear();
  return errors;
}

}  // namespace calls_test
