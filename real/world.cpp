// make_world_context and init_process_group: open the rendezvous, connect the chosen backend (its
// row of the registry), and build the context (world group; no local group: the launcher's
// layout is init_dist's).
#include "real/world.hpp"

#include <signal.h>

#include <random>

#include "core/calls/call_layer.hpp"
#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"
#include "dist/init.hpp"
#include "real/registry.hpp"

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
}  // namespace

std::shared_ptr<core::Context> make_world_context(const WorldSpec& spec) {
  ignore_sigpipe();
  // Every real backend runs under the call layer: numbered calls, the flight recorder, the
  // DIST_DEBUG=detail check and the diagnosis of timeouts (core/calls/call_layer.hpp).
  auto backend =
      core::with_call_layer(backend_entry(spec.backend, "init_process_group").make_world(spec),
                            {spec.store, spec.world_size, spec.rank, spec.timeout});
  auto context = std::make_shared<core::Context>();
  context->kind = spec.backend;
  context->rank = spec.rank;
  context->world_size = spec.world_size;
  context->timeout = spec.timeout;
  context->check_send_buffers = core::call_checks_enabled();  // DIST_DEBUG=detail
  context->rng.seed(std::random_device{}());
  std::vector<int> ranks(static_cast<std::size_t>(spec.world_size));
  for (int r = 0; r < spec.world_size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  context->world = core::make_group_state(*context, std::move(ranks), std::move(backend));
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
  core::set_process_context(make_world_context(spec));
}

}  // namespace dist::real

namespace dist {

void init_process_group(Backend backend, std::string init_method, int rank, int world_size,
                        std::chrono::milliseconds timeout) {
  real::check_can_join(backend, "init_process_group");
  real::join_world(backend, core::open_rendezvous(init_method, rank, world_size, timeout), timeout);
}

}  // namespace dist
