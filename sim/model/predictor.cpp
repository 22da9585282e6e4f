// The network model's clocks and report (see predictor.hpp).
#include "sim/model/predictor.hpp"

#include <time.h>

#include <algorithm>

#include "core/backend_impl.hpp"
#include "sim/communicator.hpp"
#include "sim/model/cost.hpp"

namespace dist::sim::model {

namespace {
// A group's name for the report: a long member list is cut to its first ranks and its size.
std::string short_name(const Comm& comm) {
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
  if (op.p2p) {
    op.model_end_us = links_.transfer(op.pair[0], op.pair[1], call_bytes(op.calls[0]), start);
    return;
  }
  auto [at, fresh] = placements_.try_emplace(op.comm->id);
  if (fresh) at->second = place(op.participants, cluster_.ranks_per_node);
  const Cost cost =
      collective(net_, cluster_.ranks_per_node, op.calls.front().kind, size_of(op), at->second);
  op.model_end_us = start + cost.us;
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
  r.now = std::max(r.now, op.model_end_us);
  const double blocked = r.now - entered_us;
  const double late =
      std::clamp(op.model_start_us - std::max(entered_us, mine.start_us), 0.0, blocked);
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
