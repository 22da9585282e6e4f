// The seam between the front end and the real backends: a WorldSpec (who this rank is, the
// store the ranks meet through) becomes a connected core::Context for the chosen backend.
#pragma once

#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/init/rendezvous.hpp"
#include "core/store/store.hpp"
#include "dist/types.hpp"

namespace dist::real {

struct WorldSpec {
  dist::Backend backend = dist::Backend::gloo;
  std::shared_ptr<core::Store> store;
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::string host;  // the rendezvous host (picks the network the backend uses); "" = loopback
  // The world ranks of this world's ranks, in its rank order, when it is a group of a larger world
  // (new_group with its own backend or timeout): errors and timeouts name them. Empty: 0..size-1.
  std::vector<int> global_ranks = {};
  // How many times the launcher restarted this rank (TORCHELASTIC_RESTART_COUNT): above 0, on a
  // backend that rejoins, where a process of this rank had joined the store before (distrun's
  // per-rank restarts, not torchrun's restart of every process), this process replaces a lost
  // one and joins no world rendezvous: it joins the membership by dist::reconfigure (rejoin.hpp).
  int restart_count = 0;
};

// `spec.global_ranks`, or 0..world_size-1 when it is empty. Inline: the backends' libraries use
// it, and they link before dist_real (nothing of dist_real may be needed by them).
inline std::vector<int> world_ranks_of(const WorldSpec& spec) {
  if (!spec.global_ranks.empty()) return spec.global_ranks;
  std::vector<int> ranks(static_cast<std::size_t>(spec.world_size));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

// Connects this rank's world backend (collective over every rank of the spec) and returns its
// context, not yet installed. BackendError when the backend was not built.
std::shared_ptr<core::Context> make_world_context(const WorldSpec& spec);

// Before a rendezvous is opened: InvalidArgument when this process is already distributed,
// BackendError when `backend` cannot run here (not built, no GPU). `caller` names the function.
void check_can_join(dist::Backend backend, const std::string& caller);

// Connects this process's world through an open rendezvous and makes it the process-wide
// context (init_process_group and init_dist end here, after check_can_join).
void join_world(dist::Backend backend, const core::Rendezvous& rendezvous,
                std::chrono::milliseconds timeout);

}  // namespace dist::real
