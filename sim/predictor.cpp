// The network model's clocks and report (see predictor.hpp).
#include "sim/predictor.hpp"

#include <time.h>

#include <algorithm>

#include "core/backend_impl.hpp"
#include "model/cost.hpp"
#include "sim/communicator.hpp"

namespace dist::sim::model {

namespace {
// A group's name for the report: a long member list is cut to its first ranks and its size.
std::string short_name(const Communicator& comm) {
  constexpr std::size_t longest = 40;
  if (comm.name.size() <= longest) return comm.name;
  const auto cut = comm.name.rfind(", ", longest);
  return comm.name.substr(0, cut) + ", ... (" + std::to_string(comm.members.size()) + " ranks)}";
}

double call_bytes(const Call& c) { return static_cast<double>(c.count * dtype_size(c.dtype)); }
}  // namespace

std::string_view report_kind(const Call& call) {
  if (core::is_p2p(call.kind)) {
    if (call.tag == core::all_to_all_v_tag) return "all_to_all_v";
    if (call.tag == core::all_to_all_tag) return "all_to_all";
  }
  return to_string(call.kind);
}

Predictor::Predictor(const Cluster& cluster)
    : cluster_(cluster),
      net_(*cluster.network),
      links_(*cluster.network, cluster.nodes, cluster.ranks_per_node),
      ranks_(static_cast<std::size_t>(cluster.world_size())) {}

namespace {
// The calling thread's CPU time: a fiber rank's between its resume and pause is its own (one rank
// runs at a time on the thread), and time the OS gave other processes does not count.
double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}
}  // namespace

void Predictor::resume(int rank) {
  RankClock& r = ranks_[static_cast<std::size_t>(rank)];
  r.running = true;
  if (net_.compute_scale > 0) r.resumed_cpu_us = thread_cpu_us();
}

void Predictor::pause(int rank) {
  RankClock& r = ranks_[static_cast<std::size_t>(rank)];
  if (!r.running) return;
  r.running = false;
  if (net_.compute_scale > 0)
    add_compute(rank, (thread_cpu_us() - r.resumed_cpu_us) * net_.compute_scale);
}

void Predictor::add_compute(int rank, double us) {
  RankClock& r = ranks_[static_cast<std::size_t>(rank)];
  r.now += us;
  r.compute_us += us;
  rekey(rank);
}

double Predictor::size_of(const Op& op) const {
  using K = core::CallKind;
  const Call& c = op.calls.front();
  const double each = call_bytes(c);
  const auto p = static_cast<double>(op.calls.size());
  switch (c.kind) {
    case K::all_gather:
    case K::gather:
    case K::scatter:
    case K::reduce_scatter:
    case K::all_to_all: return each * p;  // count is one rank's share
    case K::barrier:
    case K::split:
    case K::split_groups: return 0;
    default: return each;
  }
}

void Predictor::on_all_arrived(Op& op) {
  double start = 0;
  for (const Call& c : op.calls) start = std::max(start, c.start_us);
  op.model_start_us = start;
  op.model_starts.clear();
  op.model_ends.clear();
  if (op.p2p) {
    op.model_end_us = links_.transfer(op.pair[0], op.pair[1], call_bytes(op.calls[0]), start);
    return;
  }
  auto [at, fresh] = placements_.try_emplace(op.comm->id);
  if (fresh) at->second = place(op.participants, cluster_.ranks_per_node);
  if (op.calls.front().kind == core::CallKind::broadcast && op.calls.size() > 1) {
    time_chain(op, chain_parts(net_, cluster_.ranks_per_node, size_of(op), at->second));
    return;
  }
  const Cost cost =
      collective(net_, cluster_.ranks_per_node, op.calls.front().kind, size_of(op), at->second);
  op.model_end_us = start + cost.us;
}

// A broadcast's chain, rank by rank from the root (group ranks root, root + 1, ...): rank i's data
// begins to arrive once it has entered (its overhead paid) and the rank before it has begun, a hop
// earlier; a rank is done when the whole buffer has streamed past it, and a sender not before
// its receiver has begun (then the rest of the buffer needs the receiver). So the root goes on
// while the chain still runs, and back-to-back broadcasts overlap as a pipeline, each call
// costing a rank its overhead and the transfer; ranks that all arrive together end as the whole
// call's cost says (the last one at overhead + (ranks - 1) hops + transfer).
void Predictor::time_chain(Op& op, const ChainParts& chain) {
  const std::size_t n = op.calls.size();
  const auto root = static_cast<std::size_t>(op.calls.front().root_or_peer);
  std::vector<double> begin(n);  // when data begins to arrive, in chain order
  for (std::size_t j = 0; j < n; ++j) {
    const double ready = op.calls[(root + j) % n].start_us + chain.overhead;
    begin[j] = j == 0 ? ready : std::max(ready, begin[j - 1] + chain.hop);
  }
  op.model_starts.assign(n, 0);
  op.model_ends.assign(n, 0);
  op.model_end_us = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double sent = j + 1 < n ? std::max(begin[j], begin[j + 1] - chain.hop) : begin[j];
    const std::size_t i = (root + j) % n;
    op.model_ends[i] = sent + chain.transfer;
    // Where its call would have begun for it to end so with every peer on time (late peers: the
    // difference from its own arrival).
    op.model_starts[i] =
        op.model_ends[i] - (chain.overhead + static_cast<double>(j) * chain.hop + chain.transfer);
    op.model_end_us = std::max(op.model_end_us, op.model_ends[i]);
  }
}

namespace {
// What tells a recycled op's uses apart: p2p ops are numbered in the run, collectives per group.
std::uint64_t number_of(const Op& op) { return op.p2p ? op.id : op.seq; }
}  // namespace

void Predictor::on_posted(int rank, const Op& op, const Call& call) {
  ranks_[static_cast<std::size_t>(rank)].posted.push_back(
      {&op, number_of(op), call.start_us, call_bytes(call), report_kind(call)});
}

void Predictor::on_waited(int rank, const Op& op, double entered_us) {
  RankClock& r = ranks_[static_cast<std::size_t>(rank)];
  const auto it = std::find_if(r.posted.begin(), r.posted.end(), [&](const Posted& p) {
    return p.op == &op && p.number == number_of(op);
  });
  if (it == r.posted.end()) return;  // waited twice: counted the first time
  const Posted mine = *it;
  r.posted.erase(it);
  double op_start = op.model_start_us, op_end = op.model_end_us;
  if (!op.model_ends.empty()) {  // a chain: this rank's own
    const auto i = static_cast<std::size_t>(op.index_of(rank));
    op_start = op.model_starts[i];
    op_end = op.model_ends[i];
  }
  r.now = std::max(r.now, op_end);
  const double blocked = r.now - entered_us;
  const double late = std::clamp(op_start - std::max(entered_us, mine.start_us), 0.0, blocked);
  r.comm_us += blocked;
  r.late_us += late;
  const std::uint64_t comm = op.comm ? op.comm->id : 0;
  if (op.comm && !group_names_.contains(comm)) group_names_.emplace(comm, short_name(*op.comm));
  const std::string_view kind = mine.kind;
  auto e = std::find_if(r.entries.begin(), r.entries.end(),
                        [&](const Entry& x) { return x.comm == comm && x.kind == kind; });
  if (e == r.entries.end()) e = r.entries.insert(e, Entry{comm, kind});
  ++e->calls;
  e->bytes += mine.bytes;
  e->blocked_us += blocked;
  e->late_us += late;
  rekey(rank);
}

void Predictor::set_ready(int rank, bool ready) {
  RankClock& r = ranks_[static_cast<std::size_t>(rank)];
  if (r.ready == ready) return;
  if (ready) ready_.emplace(r.now, rank);
  else ready_.erase({r.ready_key, rank});
  r.ready = ready;
  r.ready_key = r.now;
}

void Predictor::rekey(int rank) {
  RankClock& r = ranks_[static_cast<std::size_t>(rank)];
  if (!r.ready || r.ready_key == r.now) return;
  ready_.erase({r.ready_key, rank});
  ready_.emplace(r.now, rank);
  r.ready_key = r.now;
}

Prediction Predictor::report() const {
  Prediction out;
  out.network = net_.name;
  out.ranks.reserve(ranks_.size());
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    const RankClock& r = ranks_[i];
    RankPrediction p{static_cast<int>(i), r.now, r.compute_us, r.comm_us, r.late_us, {}};
    for (const Entry& e : r.entries) {
      const auto name = group_names_.find(e.comm);
      p.calls.push_back({std::string(e.kind), name == group_names_.end() ? "" : name->second,
                         e.calls, e.bytes, e.blocked_us, e.late_us});
    }
    out.ranks.push_back(std::move(p));
  }
  return out;
}

}  // namespace dist::sim::model
