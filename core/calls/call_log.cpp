// CallLog: the shared recorder and the publisher thread that keeps this rank's latest calls in the
// store.
#include "core/calls/call_log.hpp"

#include <algorithm>
#include <thread>

#include "core/calls/cross_check.hpp"
#include "dist/errors.hpp"

namespace dist::core {

std::string status_key(int world_rank) { return "calls/status/" + std::to_string(world_rank); }

CallLog::CallLog(std::shared_ptr<Store> store_, int world_size_, int rank_,
                 std::chrono::milliseconds timeout_, std::size_t capacity)
    : recorder(capacity),
      store(std::move(store_)),
      world_size(world_size_),
      rank(rank_),
      timeout(timeout_) {
  if (store && capacity > 0)
    publisher_ = std::jthread([this](std::stop_token stop) { publish_loop(std::move(stop)); });
}

CallLog::~CallLog() {
  if (publisher_.joinable()) {
    publisher_.request_stop();
    wake_.notify_all();
    publisher_.join();
  }
}

void CallLog::publish(std::chrono::milliseconds budget) {
  if (!store) return;
  std::lock_guard lock(publish_mutex_);
  const std::uint64_t version = recorder.version();
  if (version == published_version_) return;
  try {
    store->set(status_key(rank), encode_records(recorder.last(published_records)), budget);
    published_version_ = version;
  } catch (const dist::Error&) {  // the store is gone or slow: the next round tries again
  }
}

void CallLog::publish_loop(std::stop_token stop) {
  std::unique_lock lock(wake_mutex_);
  while (!stop.stop_requested()) {
    wake_.wait_for(lock, stop, publish_interval, [] { return false; });
    if (stop.stop_requested()) break;
    lock.unlock();
    publish();
    try {
      cross_check();
    } catch (const dist::Error&) {  // the store is gone or slow: the next round tries again
    }
    lock.lock();
  }
}

void CallLog::add_members(const std::string& key, std::vector<int> world_ranks) {
  std::lock_guard lock(groups_mutex_);
  members_.emplace_back(key, std::move(world_ranks));
}

void CallLog::set_hosts(std::vector<std::string> hosts) {
  // On one host, naming it says nothing.
  if (std::all_of(hosts.begin(), hosts.end(), [&](const auto& h) { return h == hosts.front(); }))
    hosts.clear();
  std::lock_guard lock(hosts_mutex_);
  hosts_ = std::move(hosts);
}

std::string CallLog::host_suffix(int world_rank) const {
  std::lock_guard lock(hosts_mutex_);
  if (world_rank < 0 || static_cast<std::size_t>(world_rank) >= hosts_.size()) return "";
  return " on " + hosts_[static_cast<std::size_t>(world_rank)];
}

void CallLog::note_lost(const std::vector<int>& world_ranks) {
  std::lock_guard lock(lost_mutex_);
  for (const int r : world_ranks)
    if (r >= 0 && r != rank) lost_.insert(r);
}

std::vector<int> CallLog::lost() const {
  std::lock_guard lock(lost_mutex_);
  return {lost_.begin(), lost_.end()};
}

void CallLog::forget_lost(const std::vector<int>& world_ranks) {
  std::lock_guard lock(lost_mutex_);
  for (const int r : world_ranks) lost_.erase(r);
}

std::string CallLog::desync_text() const {
  std::lock_guard lock(desync_mutex_);
  return desync_;
}

namespace {
constexpr auto check_budget = std::chrono::milliseconds(250);
constexpr std::size_t checked_records = 256;  // of this rank's, against a peer's published ones
constexpr std::size_t most_peers = 4;
const std::string desync_key = "calls/desync";
const std::string desync_learned_key = "calls/desync/learned";  // ranks that read desync_key
}  // namespace

std::vector<int> CallLog::peers_to_check(const std::vector<CallRecord>& mine) const {
  std::vector<int> peers;
  std::lock_guard lock(groups_mutex_);
  for (auto r = mine.rbegin(); r != mine.rend() && peers.size() < most_peers; ++r) {
    if (r->seq == 0) continue;
    for (const auto& [key, ranks] : members_) {
      if (key != r->group_key) continue;
      const auto at = std::find(ranks.begin(), ranks.end(), rank);
      if (at == ranks.end() || ranks.size() < 2) continue;
      const int next = std::next(at) == ranks.end() ? ranks.front() : *std::next(at);
      if (std::find(peers.begin(), peers.end(), next) == peers.end()) peers.push_back(next);
    }
  }
  return peers;
}

bool CallLog::desync_published() {
  if (desync_found()) return true;
  if (!store || !store->check({desync_key})) return false;
  {
    std::lock_guard lock(desync_mutex_);
    if (desync_found()) return true;  // learned meanwhile on another thread
    desync_ = to_string(store->get(desync_key, check_budget));
    desync_found_.store(true, std::memory_order_relaxed);
  }
  try {
    store->add(desync_learned_key, 1);
  } catch (const dist::Error&) {  // the store went: the text is learned all the same
  }
  return true;
}

void CallLog::throw_desync() {
  const std::string text = desync_text();
  if (store && store->hosted_here() && !lingered_.exchange(true)) {
    const auto until = std::chrono::steady_clock::now() + desync_linger;
    try {
      while (store->add(desync_learned_key, 0) < world_size &&
             std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } catch (const dist::Error&) {  // the store failed: nothing to keep up
    }
  }
  throw DesyncError(text);
}

void CallLog::cross_check() {
  if (desync_published()) return;  // found here or by another rank
  const std::uint64_t version = recorder.version();
  if (version == checked_version_) return;
  const auto mine = recorder.last(checked_records);
  bool all_compared = true;
  for (const int peer : peers_to_check(mine)) {
    if (!store->check({status_key(peer)})) {
      all_compared = false;
      continue;
    }
    const auto theirs = decode_records(store->get(status_key(peer), check_budget));
    const std::string found = find_divergence(mine, rank, theirs, peer);
    if (found.empty()) {
      all_compared = all_compared && holds_my_latest(mine, theirs, peer);
      continue;
    }
    // The first finder's words are everyone's; the others wait for them to appear.
    if (store->add(desync_key + "/claims", 1) == 1)
      store->set(desync_key, to_bytes(found), check_budget);
    return;
  }
  // A peer that had not yet published this rank's latest calls is asked again next round, even
  // when this rank made no call since: two ranks stuck in mismatched calls post nothing more.
  if (all_compared) checked_version_ = version;
}

bool CallLog::holds_my_latest(const std::vector<CallRecord>& mine,
                              const std::vector<CallRecord>& theirs, int peer) const {
  std::lock_guard lock(groups_mutex_);
  for (const auto& [key, ranks] : members_) {
    if (std::find(ranks.begin(), ranks.end(), peer) == ranks.end()) continue;
    std::uint64_t my_latest = 0, their_latest = 0;
    for (const CallRecord& r : mine)
      if (r.group_key == key) my_latest = std::max(my_latest, r.seq);
    for (const CallRecord& r : theirs)
      if (r.group_key == key) their_latest = std::max(their_latest, r.seq);
    if (their_latest < my_latest) return false;
  }
  return true;
}

}  // namespace dist::core
