// How the fabric matches point-to-point calls: a send completes the oldest matching receive
// (from its rank, or from any_source, whichever was posted first), a receive takes the oldest
// send from its source, or from any_source one of those waiting (chosen from the seed in
// deterministic mode); a call that finds no partner waits in its communicator's queues.
#include <random>

#include "sim/fibers.hpp"
#include "sim/world.hpp"

namespace dist::sim {

std::shared_ptr<Op> World::post_p2p(const std::shared_ptr<Communicator>& comm, int group_rank,
                                    Call&& call) {
  const int rank = comm->members[static_cast<std::size_t>(group_rank)];
  check_thread(rank);
  if (fibers_) fibers_->prefetch_upcoming();  // mid-turn: the next rank's frames, ahead
  const auto inside = in_fabric(rank);
  auto lock = lock_fabric();
  apply_faults(lock, rank, call);
  if (observers_.timing()) call.start_us = call_time(rank);
  const bool is_send = call.kind == OpKind::send;
  std::shared_ptr<Op> op = is_send ? match_send(*comm, group_rank, call.root_or_peer, call.tag)
                                   : match_recv(*comm, group_rank, call.root_or_peer, call.tag);
  if (!op) {
    const int src = is_send ? group_rank : call.root_or_peer;
    const int dst = is_send ? call.root_or_peer : group_rank;
    op = op_pool_.take(2);
    op->comm = comm;
    op->p2p = true;
    op->any_source = src == any_source;
    op->source = src;
    op->pair = {src == any_source ? -1 : comm->members[static_cast<std::size_t>(src)],
                comm->members[static_cast<std::size_t>(dst)]};
    op->participants = op->pair;
    op->id = next_op_id_++;
    if (op->any_source) comm->any_source_recvs[{dst, call.tag}].push_back(op);
    else
      (is_send ? comm->unmatched_sends : comm->unmatched_recvs)[{src, dst, call.tag}].push_back(op);
  }
  const std::size_t index = is_send ? 0 : 1;
  settle(op, index, register_arrival(*op, index, std::move(call)), true);
  observers_.posted(rank, *op, op->calls[index]);
  yield(lock, rank);
  return op;
}

namespace {
// Takes the oldest op of `queue` at `key` (there is one).
template <class Map, class Key>
std::shared_ptr<Op> take_front(Map& queue, const Key& key) {
  auto it = queue.find(key);
  auto op = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) queue.erase(it);
  return op;
}
}  // namespace

// A send from `src` to `dst` matches the receive posted first among dst's oldest recv from src
// and its oldest recv from any_source with the tag (MPI's order); null when there is none.
std::shared_ptr<Op> World::match_send(Communicator& comm, int src, int dst, int tag) {
  const Communicator::Channel channel{src, dst, tag};
  const Communicator::Inbox inbox{dst, tag};
  const auto from_src = comm.unmatched_recvs.find(channel);
  const auto from_any = comm.any_source_recvs.find(inbox);
  const bool has_src = from_src != comm.unmatched_recvs.end();
  const bool has_any = from_any != comm.any_source_recvs.end();
  if (has_src && (!has_any || from_src->second.front()->id < from_any->second.front()->id))
    return take_front(comm.unmatched_recvs, channel);
  if (!has_any) return nullptr;
  auto op = take_front(comm.any_source_recvs, inbox);
  op->pair[0] = comm.members[static_cast<std::size_t>(src)];
  op->source = src;
  return op;
}

// A recv from `src` takes its oldest unmatched send. From any_source it takes one of the sends
// waiting for it with the tag: in deterministic mode one drawn from the seed among the senders
// (so seeds explore the matches and one replays exactly), else the oldest. Null when none waits.
std::shared_ptr<Op> World::match_recv(Communicator& comm, int dst, int src, int tag) {
  if (src != any_source) {
    const Communicator::Channel channel{src, dst, tag};
    if (!comm.unmatched_sends.contains(channel)) return nullptr;
    return take_front(comm.unmatched_sends, channel);
  }
  std::vector<Communicator::Channel> ready;  // by sender
  for (const auto& [channel, queue] : comm.unmatched_sends)
    if (std::get<1>(channel) == dst && std::get<2>(channel) == tag) ready.push_back(channel);
  if (ready.empty()) return nullptr;
  std::size_t pick = 0;
  if (deterministic()) {
    pick = std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(schedule_rng_);
  } else {
    for (std::size_t i = 1; i < ready.size(); ++i)
      if (comm.unmatched_sends[ready[i]].front()->id <
          comm.unmatched_sends[ready[pick]].front()->id)
        pick = i;
  }
  return take_front(comm.unmatched_sends, ready[pick]);
}

}  // namespace dist::sim
