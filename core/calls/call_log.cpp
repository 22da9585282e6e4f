// CallLog: the shared recorder and the publisher thread that keeps this rank's latest calls in the
// store.
#include "core/calls/call_log.hpp"

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
    lock.lock();
  }
}

}  // namespace dist::core
