// make_world_context and init_process_group: open the rendezvous, connect the chosen backend,
// and build the context (world group; no local group: the launcher's layout is init_dist's).
#include "real/world.hpp"

#include <signal.h>

#include <random>

#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"
#include "dist/init.hpp"
#include "real/gloo/world.hpp"
#include "real/mpi/world.hpp"
#include "real/nccl/world.hpp"

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

std::shared_ptr<core::Backend> make_backend(const WorldSpec& spec) {
  switch (spec.backend) {
    case dist::Backend::gloo: return make_gloo_world(spec);
    case dist::Backend::sim:
      throw InvalidArgument("init_process_group: the sim backend runs in one process; use "
                            "dist::sim::run instead");
    case dist::Backend::nccl: return make_nccl_world(spec);
    case dist::Backend::mpi: return make_mpi_world(spec);
  }
  throw BackendError("init_process_group: unknown backend " +
                     std::to_string(static_cast<int>(spec.backend)));
}
}  // namespace

std::shared_ptr<core::Context> make_world_context(const WorldSpec& spec) {
  ignore_sigpipe();
  auto backend = make_backend(spec);
  auto context = std::make_shared<core::Context>();
  context->kind = spec.backend;
  context->rank = spec.rank;
  context->world_size = spec.world_size;
  context->timeout = spec.timeout;
  context->rng.seed(std::random_device{}());
  std::vector<int> ranks(static_cast<std::size_t>(spec.world_size));
  for (int r = 0; r < spec.world_size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  context->world = core::make_group_state(*context, std::move(ranks), std::move(backend));
  return context;
}

}  // namespace dist::real

namespace dist {

void init_process_group(Backend backend, std::string init_method, int rank, int world_size,
                        std::chrono::milliseconds timeout) {
  if (core::current_context())
    throw InvalidArgument("init_process_group: this process (or thread) is already distributed; "
                          "call destroy_dist() first");
  if (backend == Backend::gloo && !real::gloo_built()) real::make_gloo_world({});  // says why
  if (backend == Backend::nccl) real::require_nccl();  // no GPU, or built without nccl: says why
  if (backend == Backend::mpi && !real::mpi_built()) real::make_mpi_world({});  // says why
  auto rendezvous = core::open_rendezvous(init_method, rank, world_size, timeout);
  real::WorldSpec spec{backend, rendezvous.store, rendezvous.rank, rendezvous.world_size, timeout,
                       rendezvous.host};
  core::set_process_context(real::make_world_context(spec));
}

}  // namespace dist
