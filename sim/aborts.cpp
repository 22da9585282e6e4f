// dist::abort on sim (World::abort): a rank leaves one communicator at once. The communicator's
// calls still gathering, and the unmatched sends and receives of the rank, fail with a
// RankFailure naming it (its own waits turn that into Aborted: SimBackend); a peer's later call
// that needs it fails the same way at its first arrival (World::unreachable_error). Calls already
// running their chunks end first: they use the rank's buffers, and they wait for no one.
#include <string>
#include <utility>
#include <vector>

#include "dist/errors.hpp"
#include "sim/world.hpp"

namespace dist::sim {

void World::abort(int rank, const std::shared_ptr<Communicator>& comm, const std::string& why) {
  std::vector<std::shared_ptr<Op>> running;
  {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<Op>> doomed;
    auto visit = [&](const std::shared_ptr<Op>& op) {
      const auto s = op->state.load();
      if (s == Op::State::ready && op->index_of(rank) >= 0) running.push_back(op);
      if (s != Op::State::gathering) return;
      if (op->p2p && op->index_of(rank) < 0) return;  // another pair's send or receive
      doomed.push_back(op);
    };
    {
      std::lock_guard gate(comm->gathering.gate);
      if (!comm->aborted(rank)) comm->aborted_by.emplace_back(rank, why);
      comm->gathering.for_each(visit);
    }
    comm->for_each_unmatched(visit);
    for (const auto& op : doomed) {
      std::string text;
      {
        std::lock_guard gate(comm->gathering.gate);
        const int i = op->index_of(rank);
        text = (i >= 0 ? op->describe(static_cast<std::size_t>(i)) : op->describe(0)) + ": rank " +
               std::to_string(rank) + " aborted " + comm->name +
               " (dist::abort) while this call was pending";
      }
      fail(*op, std::make_exception_ptr(RankFailure(text, rank)), true);
    }
    check_deadlock();
  }
  for (const auto& op : running) {  // moving data in the rank's buffers: let it end
    try {
      wait(rank, op);
    } catch (...) {  // its error is for the waits of its Works
    }
  }
}

}  // namespace dist::sim
