// The fabric's state and lifecycle: the World a run makes, its communicators, its clocks and its
// lock. What the fabric does with a call is in its parts: matching (matcher.cpp, matcher_p2p.cpp),
// execution (executor.cpp), waiting (waiting.cpp), the deterministic scheduler (scheduler.cpp),
// failure detection (failure_detector.cpp) and splits (splits.cpp).
#include "sim/world.hpp"

#include <algorithm>
#include <thread>

#include "sim/spin.hpp"

namespace dist::sim {

namespace {
// Tries at the fabric's lock before sleeping on it, when every rank has a core (sim/spin.hpp):
// two ranks posting the same small op contend for it on every call.
constexpr int lock_spins = 200;

std::vector<int> iota_ranks(int begin, int count) {
  std::vector<int> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = begin + i;
  return out;
}
}  // namespace

World::World(const Cluster& cluster)
    : cluster_(cluster),
      start_(std::chrono::steady_clock::now()),
      ranks_(static_cast<std::size_t>(cluster.world_size())),
      comms_of_(static_cast<std::size_t>(cluster.world_size())),
      op_pool_(cluster.world_size(), cluster.schedule == Schedule::deterministic),
      observers_(cluster_),
      schedule_rng_(cluster.seed ^ 0x9e3779b97f4a7c15ull),
      ready_(deterministic() ? cluster.world_size() : 0) {
  const auto cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int n = cluster.world_size();
  spare_cores_ = n <= cores;
  yield_rounds_ = spare_cores_ ? 200 : n <= 8 * cores ? 16 : 0;
  polls_per_yield_ = spare_cores_ ? 4 : 1;  // more polls per yield ran slower
  locked_ = deterministic() || observers_.tracing() || !cluster.faults.empty();
  stretch_ = std::max(1, n / 1024);
  world_comm_ = make_comm("world", iota_ranks(0, cluster.world_size()));
  for (int node = 0; node < cluster.nodes; ++node)
    node_comms_.push_back(
        make_comm("node " + std::to_string(node),
                  iota_ranks(node * cluster.ranks_per_node, cluster.ranks_per_node)));
}

World::~World() {
  runnable_.clear();
  for (const auto& weak : comms_) {
    if (const auto comm = weak.lock()) {
      comm->gathering.clear();
      comm->unmatched_sends.clear();
      comm->unmatched_recvs.clear();
      comm->any_source_recvs.clear();
    }
  }
}

const std::shared_ptr<Communicator>& World::node_comm(int node) const {
  return node_comms_.at(static_cast<std::size_t>(node));
}

double World::now_us() const {
  if (deterministic()) return virtual_us_;
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
      .count();
}

double World::call_time(int rank) const {
  return predictor() ? predictor()->clock(rank) : now_us();
}

double World::end_time(const Op& op) const {
  if (!predictor()) return now_us();
  double end = op.model_end_us;
  for (std::size_t i = 0; i < op.calls.size(); ++i)
    if (op.arrived[i]) end = std::max(end, op.calls[i].start_us);
  return end;
}

World::InFabric World::in_fabric(int rank) {
  model::Predictor* p = predictor();
  if (p) p->pause(rank);
  return {p, rank};
}

void World::write_trace() const {
  std::lock_guard lock(mutex_);
  observers_.write_trace(cluster_.trace);
}

std::shared_ptr<Communicator> World::make_comm(std::string name, std::vector<int> members) {
  auto comm = std::make_shared<Communicator>();
  comm->id = next_comm_id_++;
  comm->name = std::move(name);
  comm->next_seq.assign(members.size(), !deterministic());
  comm->members = std::move(members);
  comm->sorted = std::is_sorted(comm->members.begin(), comm->members.end());
  comms_.push_back(comm);
  for (const int r : comm->members) comms_of_[static_cast<std::size_t>(r)].push_back(comm);
  return comm;
}

std::unique_lock<std::mutex> World::lock_fabric() {
  return lock_spinning(mutex_, spare_cores_ ? lock_spins : 0);
}

}  // namespace dist::sim
