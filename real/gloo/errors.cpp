// ErrorMapper: classifies gloo::IoException (timeout or lost peer), EnforceNotMet and other
// gloo::Exception, keeping dist errors (from the store) as they are; reads and writes the
// failure records that let every survivor name the rank that failed first.
#include "real/gloo/errors.hpp"

#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/context.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "core/group_text.hpp"
#include "core/store/roll_call.hpp"
#include "dist/errors.hpp"

namespace dist::real {

namespace {
constexpr auto record_wait = std::chrono::milliseconds(2000);  // for an unknown peer's record
constexpr auto store_call_timeout = std::chrono::milliseconds(500);
constexpr auto host_linger = std::chrono::milliseconds(5000);  // the store's host, for records
std::string failed_key(int rank) { return "gloo/failed/" + std::to_string(rank); }
std::string left_key(int rank) { return "gloo/left/" + std::to_string(rank); }
}  // namespace

void ErrorMapper::add_peer(std::string address, int global_rank) {
  peers_[std::move(address)] = global_rank;
}

std::string ErrorMapper::group_text() const { return core::group_text(global_ranks_); }

void ErrorMapper::record_leaving() const {
  if (!store_ || me_ < 0) return;
  try {
    store_->set(left_key(me_), {}, store_call_timeout);
  } catch (...) {  // the store may already be gone with its host
  }
}

int ErrorMapper::peer_in(const std::string& message) const {
  for (const auto& [address, rank] : peers_)
    if (message.find(address) != std::string::npos) return rank;
  return -1;
}

int ErrorMapper::first_failure(int lost) const {
  for (std::size_t hops = 0; hops <= global_ranks_.size(); ++hops) {
    if (!store_->check({failed_key(lost)})) break;
    const int next = std::stoi(core::to_string(store_->get(failed_key(lost), store_call_timeout)));
    if (next == lost || next < 0) break;
    lost = next;
  }
  return lost;
}

// A member that failed (its record names whom it lost) or left; -1 when the records show none.
int ErrorMapper::recorded_loss() const {
  for (const int r : global_ranks_)
    if (r != me_ && store_->check({failed_key(r)})) return first_failure(r);
  for (const int r : global_ranks_)
    if (r != me_ && store_->check({left_key(r)})) return first_failure(r);
  return -1;
}

int ErrorMapper::store_host_peer() const {
  const int host = store_->host_rank();
  if (host == me_ ||
      std::find(global_ranks_.begin(), global_ranks_.end(), host) == global_ranks_.end())
    return -1;
  return host;
}

void ErrorMapper::await_records(int lost) const {
  const auto deadline = std::chrono::steady_clock::now() + std::min(host_linger, timeout_);
  const auto recorded = [&](int r) {
    return r == me_ || r == lost || store_->check({failed_key(r)}) || store_->check({left_key(r)});
  };
  while (!std::all_of(global_ranks_.begin(), global_ranks_.end(), recorded) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

int ErrorMapper::lost_rank(const std::string& message, int peer) const {
  int lost = peer >= 0 ? peer : peer_in(message);
  if (lost < 0 && global_ranks_.size() == 2) lost = global_ranks_[global_ranks_[0] == me_ ? 1 : 0];
  if (!store_) return lost;
  try {
    if (lost >= 0) {
      lost = first_failure(lost);
    } else {
      const auto deadline = std::chrono::steady_clock::now() + std::min(record_wait, timeout_);
      while ((lost = recorded_loss()) < 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (lost >= 0) store_->set(failed_key(me_), core::to_bytes(std::to_string(lost)));
  } catch (const dist::Error&) {
    // The store is gone, so its host is: a host that loses a peer keeps the store up until the
    // others have recorded, so the host itself was lost first.
    if (const int host = store_host_peer(); host >= 0) lost = host;
  } catch (...) {  // an unreadable record: keep what we know
  }
  return lost;
}

void ErrorMapper::throw_timeout(const std::string& where, int peer,
                                const std::string& gloo_message) const {
  // A collective's timeout names nobody here: the call layer above diagnoses it with the other
  // ranks (core/calls/diagnosis.hpp).
  const auto absent = core::name_absentees(peer);
  throw TimeoutError(where + " timed out after " + std::to_string(timeout_.count()) +
                         " ms: " + absent.phrase + " (gloo: " + gloo_message + ")",
                     absent.ranks);
}

void ErrorMapper::set_aborted(std::exception_ptr why) {
  std::lock_guard lock(aborted_mutex_);
  aborted_ = std::move(why);
}

std::exception_ptr ErrorMapper::aborted() const {
  std::lock_guard lock(aborted_mutex_);
  return aborted_;
}

void ErrorMapper::rethrow_current(const std::string& operation, int peer,
                                  ::gloo::Context* connections) const {
  const std::string where = "gloo " + operation + " on the " + group_text();
  try {
    throw;
  } catch (const dist::Error&) {
    throw;
  } catch (const ::gloo::IoException& e) {
    const std::string message = e.what();
    if (message.find("Timed out") != std::string::npos) throw_timeout(where, peer, message);
    const int lost = lost_rank(message, peer);
    if (connections) connections->closeConnections();
    if (store_ && store_->hosted_here()) {
      try {
        await_records(lost);
      } catch (const dist::Error&) {  // the store itself failed: nothing to wait for
      }
    }
    const std::string who = lost >= 0 ? "rank " + std::to_string(lost) : "a peer";
    throw RankFailure(
        where + " failed: lost " + who + ", which exited or crashed (gloo: " + message + ")", lost);
  } catch (const ::gloo::EnforceNotMet& e) {
    throw BackendError(where +
                       " failed a gloo check (are the ranks calling the same collective "
                       "with the same sizes?): " +
                       e.what());
  } catch (const std::exception& e) {
    throw BackendError(where + " failed: " + e.what());
  }
}

}  // namespace dist::real
