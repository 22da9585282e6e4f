// dist::abort on sim (World::abort): a rank leaves one communicator at once. The communicator's
// calls still gathering, and the unmatched sends and receives of the rank, fail with a
// RankFailure naming it (its own waits turn that into Aborted: SimBackend); a peer's later call
// that needs it fails the same way at its first arrival (World::unreachable_error). A call whose
// arrivals are complete (running its chunks) is neither gathering nor unmatched: it runs on.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "dist/errors.hpp"
#include "sim/world.hpp"

namespace dist::sim {

void World::abort(int rank, const std::shared_ptr<Communicator>& comm, const std::string& why) {
  std::lock_guard lock(mutex_);
  // Each doomed op and its error's text, made under the op's guard (the gate for the gathering
  // ones, the fabric's lock for the unmatched).
  std::vector<std::pair<std::shared_ptr<Op>, std::string>> doomed;
  auto visit = [&](const std::shared_ptr<Op>& op) {
    if (op->state.load() != Op::State::gathering) return;
    const int i = op->index_of(rank);
    if (op->p2p && i < 0) return;  // another pair's send or receive
    doomed.emplace_back(op, op->describe(static_cast<std::size_t>(std::max(i, 0))) + ": rank " +
                                std::to_string(rank) + " aborted " + comm->name +
                                " (dist::abort) while this call was pending");
  };
  {
    std::lock_guard gate(comm->gathering.gate);
    if (!comm->aborted(rank)) comm->aborted_by.emplace_back(rank, why);
    comm->gathering.for_each(visit);
  }
  comm->for_each_unmatched(visit);
  for (auto& [op, text] : doomed) fail(*op, std::make_exception_ptr(RankFailure(text, rank)), true);
  check_deadlock();
}

}  // namespace dist::sim
