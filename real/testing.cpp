// run_thread_world: threads over one HashStore; each creates, binds, uses and drops its own
// context.
#include "real/testing.hpp"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/context.hpp"
#include "core/store/hash_store.hpp"
#include "dist/api.hpp"
#include "dist/errors.hpp"
#include "real/registry.hpp"
#include "real/world.hpp"

namespace dist::real {

// Every rank creates each node's group (new_group is collective over the world) and keeps its
// own as the local group.
void make_local_groups(int ranks_per_node) {
  core::Context* ctx = core::current_context();
  const int rank = ctx->rank;
  for (int first = 0; first < ctx->world_size; first += ranks_per_node) {
    std::vector<int> ranks;
    for (int r = first; r < first + ranks_per_node; ++r) ranks.push_back(r);
    Group group = new_group(std::move(ranks));
    if (rank >= first && rank < first + ranks_per_node) ctx->local = group.state();
  }
}

std::vector<std::exception_ptr> run_thread_world(dist::Backend backend, int n,
                                                 std::chrono::milliseconds timeout,
                                                 const std::function<void(int rank)>& fn,
                                                 int ranks_per_node) {
  if (ranks_per_node < 0 || (ranks_per_node > 0 && n % ranks_per_node != 0))
    throw InvalidArgument("run_thread_world: ranks_per_node " + std::to_string(ranks_per_node) +
                          " does not divide the world size " + std::to_string(n));
  const BackendEntry& entry = backend_entry(backend, "run_thread_world");
  if (!entry.threads)
    throw InvalidArgument("run_thread_world: the " + std::string(to_string(backend)) +
                          " backend runs one rank per process, not as threads of one");
  auto store = std::make_shared<core::HashStore>();
  store->set_timeout(timeout);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  {
    std::vector<std::jthread> threads;
    for (int rank = 0; rank < n; ++rank)
      threads.emplace_back([&, rank] {
        try {
          entry.prepare(rank);  // nccl: a GPU per rank
          auto context = make_world_context({backend, store, rank, n, timeout, ""});
          core::ContextBinding binding(context.get());
          if (ranks_per_node > 0) make_local_groups(ranks_per_node);
          fn(rank);
        } catch (...) {
          errors[static_cast<std::size_t>(rank)] = std::current_exception();
        }
      });
  }
  return errors;
}

void run_thread_world_or_throw(dist::Backend backend, int n, std::chrono::milliseconds timeout,
                               const std::function<void(int rank)>& fn) {
  for (const auto& e : run_thread_world(backend, n, timeout, fn))
    if (e) std::rethrow_exception(e);
}

}  // namespace dist::real
