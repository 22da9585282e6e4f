// The call layer every real backend runs under (the shape of c10d's ProcessGroupWrapper, written
// once): it numbers each group's collectives from the user's first call, records every call in
// the flight recorder, compares the ranks' calls first under DIST_DEBUG=detail, and turns a
// timeout the backend could not explain into the diagnosis of diagnosis.hpp.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "core/backend_impl.hpp"
#include "core/store/store.hpp"
#include "core/work_state.hpp"

namespace dist::core {

struct CallLog;

// What the world's wrapper needs: the world's store (null: no diagnosis through a store), its
// size, this rank, and the group timeout.
struct CallLayerSpec {
  std::shared_ptr<Store> store;
  int world_size = 1;
  int rank = 0;
  std::chrono::milliseconds timeout{0};
};

// Wraps a world's backend; the groups it splits are wrapped too.
DIST_API std::shared_ptr<BackendImpl> with_call_layer(std::shared_ptr<BackendImpl> world,
                                                      const CallLayerSpec& spec);
// A group's backend made apart from `parent`'s splits (new_group with its own backend or
// timeout), under a call layer as a split group of `parent` would be: named after the world ranks
// `ranks` (`parent`'s group ranks), keyed under `parent`'s site with `suffix`, its diagnoses
// counting `timeout` (the group's own). `child` itself when `parent` has no call layer; null stays
// null.
DIST_API std::shared_ptr<BackendImpl> with_group_call_layer(BackendImpl& parent,
                                                            std::shared_ptr<BackendImpl> child,
                                                            const std::vector<int>& ranks,
                                                            const std::string& suffix,
                                                            std::chrono::milliseconds timeout);
// Numbers the group's next collective #1 again: init_dist calls it once its own collectives are
// done, so the user's first call is #1 (nothing when `backend` has no call layer).
DIST_API void restart_numbering(BackendImpl& backend);
// Tells a backend under the call layer each world rank's host (errors then say where a rank is);
// other backends ignore it.
DIST_API void set_hosts(BackendImpl& backend, std::vector<std::string> hosts);
// The world ranks the calls of `backend`'s world found lost since forget_lost took them back
// (CallLog::lost; none without a call layer): dist::reconfigure's agreement leaves them out.
DIST_API std::vector<int> lost_ranks(BackendImpl& backend);
DIST_API void forget_lost(BackendImpl& backend, const std::vector<int>& world_ranks);
// The backend under the call layer (`backend` itself when it has none).
DIST_API BackendImpl& without_call_layer(BackendImpl& backend);

// Whether DIST_DEBUG asks for the per-call comparison ("detail", any case).
DIST_API bool call_checks_enabled();

}  // namespace dist::core
