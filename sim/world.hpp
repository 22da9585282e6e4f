// The fabric of one simulated run: every rank's state, the communicators, and the matching of
// posted calls into ops. Ranks post calls and wait on ops; a waiting rank executes chunks of any
// ready op; a rank that would block is checked for deadlock, and waits have deadlines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dist/sim.hpp"
#include "sim/comm.hpp"
#include "sim/op.hpp"

namespace dist::sim {

class World {
 public:
  explicit World(const Cluster& cluster);

  int size() const { return static_cast<int>(ranks_.size()); }
  const Cluster& cluster() const { return cluster_; }
  const std::shared_ptr<Comm>& world_comm() const { return world_comm_; }
  const std::shared_ptr<Comm>& node_comm(int node) const;

  // Posts rank `group_rank`'s side of a collective (kind != send/recv) on `comm`.
  std::shared_ptr<Op> post_collective(const std::shared_ptr<Comm>& comm, int group_rank, Call call);
  // Posts a send (call.root = dst) or recv (call.root = src) of `group_rank` on `comm`.
  std::shared_ptr<Op> post_p2p(const std::shared_ptr<Comm>& comm, int group_rank, Call call);

  // Blocks global rank `rank` until `op` completes; rethrows the op's error.
  void wait(int rank, const std::shared_ptr<Op>& op);
  // Whether `op` has completed, after executing a chunk of it if one is free; rethrows its error.
  bool test(const std::shared_ptr<Op>& op);

  // Called once when rank's function has returned (error null) or thrown.
  void finish(int rank, std::exception_ptr error, const std::string& what);

  double now_us() const;

 private:
  struct RankState {
    std::condition_variable cv;
    bool blocked = false;
    bool finished = false;
    std::exception_ptr error;  // how it finished
    std::string error_text;
    std::shared_ptr<Op> waiting_on;
  };

  std::shared_ptr<Comm> make_comm(std::string name, std::vector<int> members);
  void arrive(const std::shared_ptr<Op>& op, std::size_t index, Call call);
  void on_all_arrived(const std::shared_ptr<Op>& op);
  void fail(const std::shared_ptr<Op>& op, std::exception_ptr error);
  void complete(Op& op);
  void wake(const Op& op);
  void check_finished_participants(const std::shared_ptr<Op>& op);
  void check_deadlock();
  void fail_on_timeout(const std::shared_ptr<Op>& op, int rank);
  bool execute_chunk(Op& op);
  std::shared_ptr<Op> next_runnable();
  std::string rank_activity(int rank) const;

  Cluster cluster_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::vector<RankState> ranks_;
  int blocked_ = 0;
  int finished_ = 0;
  std::uint64_t next_comm_id_ = 0;
  std::shared_ptr<Comm> world_comm_;
  std::vector<std::shared_ptr<Comm>> node_comms_;
  std::vector<std::weak_ptr<Comm>> comms_;
  std::deque<std::shared_ptr<Op>> runnable_;  // ready ops that may have unclaimed chunks
};

}  // namespace dist::sim
