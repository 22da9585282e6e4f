// barrier, barrier_async and monitored_barrier. A barrier completes the group's earlier
// collectives first, as torch's does (its gloo barrier waits for the group's earlier work, its
// nccl barrier is ordered after it on the stream): once barrier() returns, the results of the
// `_async` collectives this rank called on the group before it are in place, on every backend.
// Earlier isend/irecv are not waited (a receive may match a send made after the barrier).
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/context.hpp"
#include "core/validate.hpp"
#include "core/work_ledger.hpp"
#include "core/work_state.hpp"
#include "dist/api.hpp"
#include "dist/errors.hpp"

namespace dist {

namespace {
using Clock = std::chrono::steady_clock;
using State = std::shared_ptr<detail::WorkState>;

// A barrier's Work that first waits the collectives issued on its group before it, oldest first,
// then the barrier itself. An earlier collective's error is raised as the barrier's (the user's
// Work of that collective keeps it too), as torch's gloo barrier raises it.
class AfterEarlier final : public detail::WorkState {
 public:
  AfterEarlier(std::vector<State> earlier, State barrier)
      : earlier_(std::move(earlier)), barrier_(std::move(barrier)) {}

  void start() override { barrier_->start(); }
  // Only the barrier is this Work's own: the earlier collectives belong to their Works.
  void abandon() noexcept override { barrier_->abandon(); }
  void wait() override { finish(std::nullopt); }
  void wait_for(std::chrono::milliseconds timeout) override { finish(timeout); }
  bool is_completed() override {
    while (!earlier_.empty() && core::poll_work(*earlier_.front()))
      earlier_.erase(earlier_.begin());
    return earlier_.empty() && core::poll_work(*barrier_);
  }
  std::string describe() const override { return core::describe_work(*barrier_); }

 private:
  // Each wait gets what is left of `timeout` (all of them together stay within it).
  void finish(std::optional<std::chrono::milliseconds> timeout) {
    const auto deadline = Clock::now() + timeout.value_or(std::chrono::milliseconds(0));
    const auto left = [&]() -> std::optional<std::chrono::milliseconds> {
      if (!timeout) return std::nullopt;
      const auto rest = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      return std::max(rest, std::chrono::milliseconds(0));
    };
    while (!earlier_.empty()) {
      core::wait_work(*earlier_.front(), left());
      earlier_.erase(earlier_.begin());
    }
    core::wait_work(*barrier_, left());
  }

  std::vector<State> earlier_;
  State barrier_;
};

Work barrier_work(const Group& group) {
  const auto t = core::resolve_group(group, "barrier");
  if (t.size == 1) return {};
  const core::Context* ctx = core::current_context();
  auto earlier = ctx ? ctx->works->collectives_of(t.backend) : std::vector<State>{};
  Work barrier = t.backend->barrier();
  if (earlier.empty() || !barrier.state()) return barrier;
  return Work(std::make_shared<AfterEarlier>(std::move(earlier), barrier.state()));
}
}  // namespace

Work barrier_async(const Group& group) { return detail::track_unwaited(barrier_work(group)); }

void barrier(const Group& group) { barrier_work(group).wait(); }

void monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks, const Group& group) {
  if (timeout.count() < 0)
    throw InvalidArgument("monitored_barrier: the timeout must not be negative, got " +
                          std::to_string(timeout.count()) + " ms");
  const auto t = core::resolve_group(group, "monitored_barrier");
  if (t.size > 1) t.backend->monitored_barrier(timeout, wait_all_ranks);
}

}  // namespace dist
