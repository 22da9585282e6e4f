// The fabric of one simulated run: every rank's state, the communicators, and the matching of
// posted calls into ops. Ranks post calls and wait on ops; a waiting rank executes chunks of any
// ready op; a rank that would block is checked for deadlock, and waits have deadlines. In
// deterministic mode a seeded scheduler passes a baton so one rank runs at a time.
// World's methods are defined by part, each in its own file (docs/architecture.md, "sim's
// parts"): world.cpp, matcher.cpp, matcher_p2p.cpp, splits.cpp, executor.cpp, waiting.cpp,
// scheduler.cpp, failure_detector.cpp, aborts.cpp, membership.cpp.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/layout.hpp"
#include "dist/sim/run.hpp"
#include "sim/communicator.hpp"
#include "sim/observers.hpp"
#include "sim/op.hpp"
#include "sim/op_pool.hpp"
#include "sim/ready_set.hpp"

namespace dist::sim {

class Fibers;

// The shorter of a wait's own limit (Work::wait's timeout, a group's timeout), when it has one,
// and `timeout`.
inline std::chrono::milliseconds within(std::optional<std::chrono::milliseconds> limit,
                                        std::chrono::milliseconds timeout) {
  return limit ? std::min(*limit, timeout) : timeout;
}

// What a process killed by a Fault::restart throws (and each of its later calls): no dist::Error,
// so the program's own handlers let it pass, as a real kill -9 ends a process whatever it catches.
struct ProcessKilled {
  std::string why;
};

class World {
  friend struct MatcherProbe;  // sim/tests/matcher_test.cpp: the matcher's verdicts, one by one

 public:
  explicit World(const Cluster& cluster);
  // Drops the ops still queued on communicators (a run that failed leaves some): an op holds its
  // communicator, so they would keep each other alive.
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int size() const { return static_cast<int>(ranks_.size()); }
  const Cluster& cluster() const { return cluster_; }
  const std::shared_ptr<Communicator>& world_comm() const { return world_comm_; }
  const std::shared_ptr<Communicator>& node_comm(int node) const;

  // Deterministic mode with fiber ranks: a rank waiting for the baton suspends its fiber to the
  // scheduler (sim/fibers.hpp), which resumes the rank baton() names.
  void use_fibers(Fibers* fibers) { fibers_ = fibers; }
  Fibers* fibers() const { return fibers_; }
  int baton() const;

  // Asks for the lines of `rank`'s own state before the scheduler resumes it (fibers): in a large
  // world they are out of cache, and the rank would miss them one after another.
  void prefetch_rank(int rank) const;
  // The rank likely to get the baton after `rank` (fibers; -1: none known): in a large world,
  // where the baton mostly passes through stretches of consecutive ranks (pick_ready), the next.
  int upcoming(int rank) const;
  // Called first on each rank thread (deterministic mode: waits for the baton).
  void enter(int rank);
  // The list a rank brings to a split by `layout` (its own line, number layout.color): the one
  // an earlier member brought when equal, so that a world's lines are made and held once, not
  // once per rank while the split gathers (memory that grows as ranks × line length). A line
  // by rule is the same when its layout's fingerprint (the rule's parameters), length and ends
  // are (Layout::own_is_from_this_layout); explicit lists are compared in full.
  std::shared_ptr<const std::vector<int>> shared_rank_list(const core::Layout& layout);
  // The k-th communicator the members of `ranks` (ranks of `parent`) make by themselves
  // (new_group with use_local_synchronization): made by the first member to ask, shared with the
  // others, forgotten once every member has it.
  std::shared_ptr<Communicator> local_comm(const std::shared_ptr<Communicator>& parent,
                                           const std::vector<int>& ranks, int k);
  // Posts rank `group_rank`'s side of a collective (kind != send/recv) on `comm`.
  std::shared_ptr<Op> post_collective(const std::shared_ptr<Communicator>& comm, int group_rank,
                                      Call&& call);
  // Posts a send (call.root_or_peer = dst) or recv (call.root_or_peer = src) of `group_rank` on
  // `comm`.
  std::shared_ptr<Op> post_p2p(const std::shared_ptr<Communicator>& comm, int group_rank,
                               Call&& call);

  // Blocks global rank `rank` until `op` completes; rethrows the op's error. `limit` (a group's or
  // Work::wait's timeout) shortens the run's timeout for this wait.
  // `waits_to_timeout`: a wait a deadlock does not end (a monitored barrier's,
  // Op::waits_to_timeout, or Work::wait's own timeout): it times out; any other wait that can never
  // complete is a DeadlockError at once.
  void wait(int rank, const std::shared_ptr<Op>& op,
            std::optional<std::chrono::milliseconds> limit = std::nullopt,
            bool waits_to_timeout = false);
  // Whether `op` has completed, after making progress on it; rethrows its error.
  bool test(int rank, const std::shared_ptr<Op>& op);

  // `rank`'s Work of `op` was destroyed by an exception unwinding the rank's stack: a gathering
  // op fails for every participant (RankFailure naming the rank), else it is waited out; never
  // throws.
  void abandon(int rank, const std::shared_ptr<Op>& op) noexcept;
  // dist::abort of `comm` by `rank` (aborts.cpp): its pending calls on it, and the calls of its
  // peers that need it, fail with a RankFailure naming it; returns at once. `why`: what the
  // rank's own calls then say (Communicator::aborted_reason).
  void abort(int rank, const std::shared_ptr<Communicator>& comm, const std::string& why);
  // shrink_group on sim (aborts.cpp): the k-th shrink of `parent` by its survivors (ranks of
  // `parent`), one communicator for every survivor; DesyncError when `rank`'s list differs from the
  // first survivor's (and every call on the communicator then fails with it).
  std::shared_ptr<Communicator> shrunk_comm(const std::shared_ptr<Communicator>& parent,
                                            const std::vector<int>& survivors, int k, int rank);
  // dist::reconfigure on sim (membership.cpp): waits, at most `timeout`, until every member of
  // the membership still running has called; returns the agreed membership's epoch and
  // communicator (a new one when the callers differ from the members).
  struct Agreed {
    std::int64_t epoch = 0;
    std::shared_ptr<Communicator> comm;
  };
  Agreed reconfigure(int rank, std::chrono::milliseconds timeout);
  // Whether `rank`'s process was killed by a Fault::restart and is not restarted yet.
  bool killed(int rank) const;
  // Waits out the killed process's restart delay (virtual time in deterministic mode), then
  // returns the replacement's restart count.
  int restart(int rank);
  // Called once when rank's function has returned (error null) or thrown.
  void finish(int rank, std::exception_ptr error, const std::string& what);
  // Writes the trace if the cluster asked for one.
  void write_trace() const;
  // The network model of a predicting run (Cluster::network), or null.
  model::Predictor* predictor() const { return observers_.predictor(); }

 private:
  // Aligned to a cache line: ranks update their own state (calls, cpu) while others read theirs.
  struct alignas(64) RankState {
    std::condition_variable cv;
    bool started = false;
    // Written under the fabric's lock, read without it too: a rank that completes or fails an
    // op outside the lock wakes its blocked participants (wake(), executor.cpp).
    std::atomic<bool> blocked{false};
    std::atomic<bool> finished{false};
    std::exception_ptr error;  // how it finished (set before `finished`)
    std::string error_text;
    std::shared_ptr<Op> waiting_on;
    // An op taken from the pool before the rank enters a communicator's gate, used there when it
    // is the first to post a collective (so the gate is not held while a recycled op is reset);
    // concurrent mode only.
    std::shared_ptr<Op> spare;
    int calls = 0;                                  // communication calls made (for faults)
    std::optional<double> sleep_until_us;           // deterministic: stalled by a fault
    double deadline_us = 0;                         // deterministic: when its wait times out
    std::optional<std::chrono::milliseconds> wait_limit;  // deterministic: Work::wait's timeout
    bool waits_to_timeout = false;  // blocked in a monitored barrier (see World::wait)
    // Deterministic: a collective was posted and the switch it owes the others has not happened
    // yet (post_collective leaves it to the wait, test or post that follows; any yield pays it).
    bool owes_yield = false;
    // Concurrent mode: the CPU it last ran on in the fabric (a waiter yields to a participant
    // on its own CPU, waiting.cpp).
    std::atomic<int> cpu{-1};
    // Fault::restart (membership.cpp): the rank's process, counted from 0, and while it is killed
    // and not restarted yet, the restart's delay and the kill's text.
    int incarnation = 0;
    std::optional<std::chrono::milliseconds> restart_after;
    std::string killed_text;
  };

  // What an arrival found (under the communicator's gate), to act on after leaving the gate.
  struct Arrival {
    // completed/planned: the last arrival ran (or planned) the op under the gate.
    enum class Kind { waiting, joined_failed, all_arrived, fail, completed, planned } kind =
        Kind::waiting;
    std::exception_ptr error;  // Kind::fail
  };

  bool deterministic() const { return cluster_.schedule == Schedule::deterministic; }

  // State and lifecycle (world.cpp).
  // The fabric's lock for the calls' hot paths (posting, completing, blocking): spins first when
  // every rank has a core.
  std::unique_lock<std::mutex> lock_fabric();
  double now_us() const;
  // When `rank` makes a call: its predicted clock in a predicting run, else now_us().
  double call_time(int rank) const;
  // When `op` ended (or failed): its modeled end in a predicting run, else now_us().
  double end_time(const Op& op) const;
  // A predicting run's rank stops its compute clock while inside the fabric (from the guard's
  // making until its end).
  struct InFabric {
    model::Predictor* predictor;
    int rank;
    ~InFabric() {
      if (predictor) predictor->resume(rank);
    }
  };
  InFabric in_fabric(int rank);
  std::shared_ptr<Communicator> make_comm(std::string name, std::vector<int> members);
  // `rank` leaves `comm` (aborts.cpp): dist::abort, or its process killed. `why`: what its own
  // calls then say; `how`: what its peers' errors say it did.
  void leave(int rank, const std::shared_ptr<Communicator>& comm, const std::string& why,
             const std::string& how);

  // The elastic membership (membership.cpp), under the fabric's lock.
  void open_round();
  void left_membership(int rank);
  void close_round_if_agreed();
  void throw_if_killed(int rank) const;
  [[noreturn]] void kill_for_restart(int rank, const Fault& fault, const Call& call, int k);

  // Matching (matcher.cpp: collectives; matcher_p2p.cpp: sends and receives).
  // `locked`: whether the caller holds the fabric's lock (always in locked_ mode and for p2p;
  // a collective posted in the lock-free mode does not).
  Arrival register_arrival(Op& op, std::size_t index, Call&& call);
  Arrival failing(Op& op, std::exception_ptr error);
  void settle(const std::shared_ptr<Op>& op, std::size_t index, Arrival arrival, bool locked);
  void on_all_arrived(const std::shared_ptr<Op>& op, bool locked);
  // post_p2p's matching (under the fabric's lock): the unmatched op a send or recv completes.
  std::shared_ptr<Op> match_send(Communicator& comm, int src, int dst, int tag);
  std::shared_ptr<Op> match_recv(Communicator& comm, int dst, int src, int tag);

  // Splits (splits.cpp).
  void make_layout_comms(Op& op, bool locked);
  static void release_lists(Op& op);  // frees the calls' split lists once the split is made

  // Execution (executor.cpp).
  bool run_inline(Op& op);
  void publish_chunks(const std::shared_ptr<Op>& op, bool locked);
  void fail(Op& op, std::exception_ptr error, bool locked);
  void end_failing(Op& op, std::exception_ptr error, bool locked);  // one this thread closed
  void complete(Op& op, bool locked);
  void wake(const Op& op, bool locked);
  bool execute_chunk(Op& op);
  std::shared_ptr<Op> next_runnable();
  enum class Poll { waiting, worked, claimed, finished };
  Poll poll(Op& op);

  // Waiting in concurrent mode (waiting.cpp).
  bool spin(int rank, Op& op);
  bool poll_and_yield(Op& op);
  void wait_concurrent(int rank, const std::shared_ptr<Op>& op,
                       std::optional<std::chrono::milliseconds> limit, bool waits_to_timeout);

  // The deterministic scheduler (scheduler.cpp).
  void wait_deterministic(int rank, const std::shared_ptr<Op>& op,
                          std::optional<std::chrono::milliseconds> limit, bool waits_to_timeout);
  // Refuses a call into the fabric from a thread that is not the fiber ranks' (a ScopedRank
  // helper thread of a fiber run), which could never get the baton.
  void check_thread(int rank) const;
  // Whether `rank` can run now, kept in ready_ after each change of its flags.
  void refresh_ready(int rank);
  void yield(std::unique_lock<std::mutex>& lock, int rank);
  // `rank` sleeps `delay` (a stall, a restart's delay) while the others run: virtual time in
  // deterministic mode (a predicting run counts it as compute), else real time with the lock let
  // go. wake_sleepers() wakes those whose time has come (whether any did).
  void sleep(std::unique_lock<std::mutex>& lock, int rank, std::chrono::milliseconds delay);
  bool wake_sleepers();
  void pass_baton();
  int pick_ready();
  bool advance_virtual_clock();
  void await_baton(std::unique_lock<std::mutex>& lock, int rank);

  // Failure detection and injected faults (failure_detector.cpp).
  void apply_faults(std::unique_lock<std::mutex>& lock, int rank, Call& call);
  std::exception_ptr unreachable_error(const Op& op) const;
  void check_deadlock();
  void fail_on_timeout(const std::shared_ptr<Op>& op, int rank, std::chrono::milliseconds after);
  std::string rank_activity(int rank) const;

  Cluster cluster_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::mutex rank_lists_mutex_;  // guards rank_lists_ (shared_rank_list)
  struct Line {
    std::weak_ptr<const std::vector<int>> ranks;
    bool by_rule = false;
  };
  std::map<std::pair<std::uint32_t, int>, Line> rank_lists_;
  struct LocalComm {  // local_comm's, until every member has taken it (under mutex_)
    std::shared_ptr<Communicator> comm;
    std::size_t taken = 0;
  };
  std::map<std::tuple<std::uint64_t, std::vector<int>, int>, LocalComm> local_comms_;
  struct ShrunkComm {  // shrunk_comm's, by (parent id, k), kept for the run (under mutex_)
    std::shared_ptr<Communicator> comm;
    int first = -1;  // the survivor whose list made it
  };
  std::map<std::pair<std::uint64_t, int>, ShrunkComm> shrunk_comms_;
  // The elastic membership: its epoch, members (global ranks, ascending) with the process of each
  // that joined, its communicator (the world's at epoch 0), and the round gathering callers (null
  // when none is open) with the number of running members it still awaits.
  struct Membership {
    std::int64_t epoch = 0;
    std::vector<int> members;
    std::vector<int> incarnations;
    std::shared_ptr<Communicator> comm;
    std::shared_ptr<Op> round;
    std::size_t awaiting = 0;
  };
  Membership membership_;
  std::vector<RankState> ranks_;
  int blocked_ = 0;
  int finished_ = 0;
  int started_ = 0;
  std::uint64_t next_comm_id_ = 0;
  std::uint64_t next_op_id_ = 1;
  std::shared_ptr<Communicator> world_comm_;
  std::vector<std::shared_ptr<Communicator>> node_comms_;
  std::vector<std::weak_ptr<Communicator>> comms_;
  // Each rank's communicators (the ones whose ops it can affect when it finishes).
  std::vector<std::vector<std::weak_ptr<Communicator>>> comms_of_;
  std::deque<std::shared_ptr<Op>> runnable_;  // ready ops that may have unclaimed chunks
  OpPool op_pool_;
  Observers observers_;  // the trace and the predictor (observers.hpp)
  // Concurrent mode: how a waiter polls before it blocks: yield_rounds_ times it polls
  // polls_per_yield_ times and yields the core. Spinning pays while every rank can have a core;
  // an oversubscribed world yields only a few times (so the ranks that can progress get the
  // cores) and a much larger one blocks at once.
  bool spare_cores_ = false;  // every rank can have a core
  // Collectives are posted under the fabric's lock (deterministic mode, or a run with a trace or
  // faults); otherwise through their communicator's gate alone, and ops complete without the
  // lock unless a participant is blocked.
  bool locked_ = true;
  int yield_rounds_ = 0;
  int polls_per_yield_ = 1;
  // Deterministic mode.
  std::mt19937_64 schedule_rng_;
  int baton_ = -1;          // the rank allowed to run
  ReadySet ready_;          // started, not finished, blocked nor asleep
  int stretch_ = 1;         // the mean run of consecutive ranks between draws (pick_ready)
  int stretch_left_ = 0;    // of the current one
  Fibers* fibers_ = nullptr;
  double virtual_us_ = 0;  // the virtual clock
  double next_wake_us_ = std::numeric_limits<double>::infinity();  // the earliest sleeper's
};

}  // namespace dist::sim
