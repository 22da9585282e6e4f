// make_world_context and init_process_group (a URL or a store): open the rendezvous, connect the
// chosen backend (its row of the registry), and build the context (world group; no local group:
// the launcher's layout is init_dist's).
#include "real/world.hpp"

#include <signal.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/calls/call_layer.hpp"
#include "core/init/rendezvous.hpp"
#include "core/recovery.hpp"
#include "dist/errors.hpp"
#include "dist/real/init.hpp"
#include "real/registry.hpp"
#include "real/rejoin.hpp"

namespace dist::real {

namespace {
// Gloo writes to its sockets without MSG_NOSIGNAL: a peer that died would kill this process with
// SIGPIPE instead of raising RankFailure. Python (hence torch) ignores SIGPIPE; do the same, unless
// the program installed a handler of its own.
void ignore_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    ::signal(SIGPIPE, SIG_IGN);
}

// new_group with options: a group on the world's backend without a timeout of its own is split
// from the world; otherwise its members connect anew, through the world's store under a prefix of
// the group's number (every rank counts every such group; a group only its members make, with
// use_local_synchronization, is named by its list instead), with the backend and timeout asked
// for. The group's backend numbers its ranks 0..n-1 in its errors, and has no call layer.
auto group_maker(const WorldSpec& spec) {
  return [spec, made = std::make_shared<int>(0),
          made_local = std::make_shared<std::map<std::vector<int>, int>>()](
             core::BackendImpl& world, const std::vector<int>& ranks,
             const GroupOptions& options) -> std::shared_ptr<core::BackendImpl> {
    const dist::Backend kind = options.backend.value_or(spec.backend);
    const bool local = options.use_local_synchronization;
    // With use_local_synchronization only the members call: mpi makes the group among them
    // (split_local); gloo and nccl connect them anew, below, as they do any group of their own.
    if (kind == spec.backend && !options.timeout && !(local && kind != dist::Backend::mpi))
      return local ? world.split_local(ranks) : world.split(ranks);
    if (kind == dist::Backend::mpi)  // its worlds are MPI_COMM_WORLD's ranks
      throw InvalidArgument(
          "new_group: an mpi group is split from an mpi world and keeps its "
          "timeout (mpi cannot connect a group of its own backend or timeout)");
    const auto& entry = backend_entry(kind, "new_group");
    // Named by the list under use_local_synchronization: the other ranks do not count it.
    const std::string name =
        local ? core::local_group_key(ranks, (*made_local)[ranks]++) : std::to_string(++*made);
    const auto me = std::find(ranks.begin(), ranks.end(), spec.rank);
    if (me == ranks.end()) return nullptr;
    require_available(entry, static_cast<int>(ranks.size()), "new_group");
    WorldSpec group = spec;
    group.backend = kind;
    group.store = std::make_shared<core::PrefixStore>("group" + name, spec.store);
    group.rank = static_cast<int>(me - ranks.begin());
    group.world_size = static_cast<int>(ranks.size());
    group.timeout = options.timeout.value_or(spec.timeout);
    group.global_ranks = ranks;
    // Under a call layer of its own, keyed under the world's: its calls are numbered, recorded
    // and diagnosed as a split group's are.
    return core::with_group_call_layer(world, entry.make_world(group), ranks, "o" + name,
                                       group.timeout);
  };
}
}  // namespace

std::shared_ptr<core::Context> make_world_context(const WorldSpec& spec) {
  ignore_sigpipe();
  // Every real backend runs under the call layer: numbered calls, the flight recorder, the
  // DIST_DEBUG=detail check and the diagnosis of timeouts (core/calls/call_layer.hpp).
  // A replacement process joins the membership by dist::reconfigure, not the world's rendezvous.
  const bool replacement = is_replacement(spec);
  auto backend = core::with_call_layer(
      replacement ? unjoined_world(spec)
                  : backend_entry(spec.backend, "init_process_group").make_world(spec),
      {spec.store, spec.world_size, spec.rank, spec.timeout});
  auto context = std::make_shared<core::Context>();
  context->kind = spec.backend;
  context->rank = spec.rank;
  context->world_size = spec.world_size;
  context->timeout = spec.timeout;
  context->check_send_buffers = core::call_checks_enabled();  // DIST_DEBUG=detail
  std::random_device entropy;
  context->rng_seed = {entropy(), entropy(), static_cast<std::uint32_t>(spec.rank)};
  context->make_group = group_maker(spec);
  context->restart_count = spec.restart_count;
  std::vector<int> ranks(static_cast<std::size_t>(spec.world_size));
  for (int r = 0; r < spec.world_size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  context->world = core::make_group_state(*context, std::move(ranks), std::move(backend));
  enable_rejoin(*context, spec);
  if (replacement) core::abort_until_joined(*context);
  else mark_joined(spec);
  return context;
}

void check_can_join(dist::Backend backend, const std::string& caller) {
  if (core::current_context())
    throw InvalidArgument(caller +
                          ": this process (or thread) is already distributed; call "
                          "destroy_dist() first");
  // Not built, or (nccl) no GPU: says why before anything is opened.
  require_available(backend_entry(backend, caller), 1, caller);
}

void join_world(dist::Backend backend, const core::Rendezvous& rendezvous,
                std::chrono::milliseconds timeout) {
  WorldSpec spec{backend, rendezvous.store, rendezvous.rank, rendezvous.world_size,
                 timeout, rendezvous.host};
  spec.restart_count = core::launcher_restart_count();
  core::set_process_context(make_world_context(spec));
}

}  // namespace dist::real

namespace dist {

void init_process_group(Backend backend, std::string init_method, int rank, int world_size,
                        std::chrono::milliseconds timeout) {
  real::check_can_join(backend, "init_process_group");
  real::join_world(backend, core::open_rendezvous(init_method, rank, world_size, timeout), timeout);
}

void init_process_group(Backend backend, std::shared_ptr<Store> store, int rank, int world_size,
                        std::chrono::milliseconds timeout) {
  real::check_can_join(backend, "init_process_group");
  real::join_world(backend, core::store_rendezvous(std::move(store), rank, world_size, timeout),
                   timeout);
}

}  // namespace dist
