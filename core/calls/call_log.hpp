// What the call layer's wrappers of one world share (CallLog: the flight recorder, the store, the
// publisher thread) and what each knows of its group (GroupSite).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/calls/flight_recorder.hpp"
#include "core/store/store.hpp"

namespace dist::core {

// Every `publish_interval`, while the recorder changed, the publisher thread writes this rank's
// last `published_records` records to the store under status_key(rank): a rank stuck outside
// dist (or dead) has said where it was. One store request per interval at most.
inline constexpr std::chrono::milliseconds publish_interval{100};
inline constexpr std::size_t published_records = 32;
std::string status_key(int world_rank);

struct CallLog {
  CallLog(std::shared_ptr<Store> store, int world_size, int rank, std::chrono::milliseconds timeout,
          std::size_t capacity);
  ~CallLog();
  CallLog(const CallLog&) = delete;
  CallLog& operator=(const CallLog&) = delete;

  // Writes this rank's status now (a failing call does, so the others read it at once), giving
  // the store at most `budget`; store failures are ignored (the store may be gone with its host).
  void publish(std::chrono::milliseconds budget = std::chrono::milliseconds(1000));

  // Registers a group (its key and members' world ranks): the cross-check compares this rank's
  // calls with its successor's in each group it calls on.
  void add_members(const std::string& key, std::vector<int> world_ranks);
  // Whether the cross-check found calls that diverged, and its DesyncError text: every later
  // call of this rank raises it.
  bool desync_found() const { return desync_found_.load(std::memory_order_relaxed); }
  std::string desync_text() const;
  // Whether any rank's cross-check found one (asking the store): a timeout that follows it is
  // explained by it. A rank that learns of it counts itself as having learned, once.
  bool desync_published();
  // Raises the DesyncError the cross-check found. The rank hosting the store first keeps it up
  // until every rank has learned of the divergence (at most desync_linger): a rank that ran ahead
  // into a later call then still reads why the others left, instead of finding the store gone.
  // Only the first throw waits.
  [[noreturn]] void throw_desync();
  static constexpr std::chrono::milliseconds desync_linger{5000};

  // Each world rank's host, when the launcher gathered them (init_dist) and they are not all one,
  // so errors say where a rank is; host_suffix(r) is " on <host>" then, else "".
  void set_hosts(std::vector<std::string> hosts);
  std::string host_suffix(int world_rank) const;

  // The world ranks this rank's calls found lost (a RankFailure named them) since dist::reconfigure
  // last took them into an agreement (core/store/membership.hpp), ascending.
  void note_lost(const std::vector<int>& world_ranks);
  std::vector<int> lost() const;
  void forget_lost(const std::vector<int>& world_ranks);

  FlightRecorder recorder;
  const std::shared_ptr<Store> store;  // null: no diagnosis through a store, no publisher
  const int world_size;
  const int rank;
  const std::chrono::milliseconds timeout;

 private:
  void publish_loop(std::stop_token stop);
  // One round of the cross-check (cross_check.hpp): takes a divergence another rank found, or
  // compares this rank's calls with up to 4 peers' published ones.
  void cross_check();
  std::vector<int> peers_to_check(const std::vector<CallRecord>& mine) const;
  // Whether `peer`'s published calls reach this rank's latest call in every group they share.
  bool holds_my_latest(const std::vector<CallRecord>& mine, const std::vector<CallRecord>& theirs,
                       int peer) const;

  mutable std::mutex groups_mutex_;
  std::vector<std::pair<std::string, std::vector<int>>> members_;
  mutable std::mutex hosts_mutex_;
  std::vector<std::string> hosts_;
  mutable std::mutex lost_mutex_;
  std::set<int> lost_;
  std::atomic<bool> desync_found_{false};
  std::atomic<bool> lingered_{false};  // throw_desync kept the store up once already
  mutable std::mutex desync_mutex_;
  std::string desync_;
  std::uint64_t checked_version_ = 0;

  std::mutex publish_mutex_;
  std::uint64_t published_version_ = 0;
  std::mutex wake_mutex_;
  std::condition_variable_any wake_;
  std::jthread publisher_;
};

// One group as the call layer sees it.
struct GroupSite {
  std::shared_ptr<CallLog> log;
  std::uint32_t id = 0;          // in the recorder's group table
  std::string name;              // "world", "group {0, 2}"
  std::string key;               // its store keys' part: "w", "w.1", ...
  std::vector<int> world_ranks;  // the members, in group-rank order
  int me = 0;                    // this rank's world rank
  bool check_calls = false;      // DIST_DEBUG=detail when the group was made
  // The group's own timeout (new_group's option, inherited by its splits); 0: the log's.
  std::chrono::milliseconds own_timeout{0};
  std::chrono::milliseconds timeout() const {
    return own_timeout.count() > 0 ? own_timeout : log->timeout;
  }
};

}  // namespace dist::core
