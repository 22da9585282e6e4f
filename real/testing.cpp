// run_ranks: threads over one HashStore; each creates, binds, uses and drops its own context.
#include "real/testing.hpp"

#include <memory>
#include <thread>

#include "core/context.hpp"
#include "core/store/hash_store.hpp"
#include "real/nccl/world.hpp"
#include "real/world.hpp"

namespace dist::real {

std::vector<std::exception_ptr> run_ranks(dist::Backend backend, int n,
                                          std::chrono::milliseconds timeout,
                                          const std::function<void(int rank)>& fn) {
  auto store = std::make_shared<core::HashStore>();
  store->set_timeout(timeout);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  {
    std::vector<std::jthread> threads;
    for (int rank = 0; rank < n; ++rank)
      threads.emplace_back([&, rank] {
        try {
          if (backend == dist::Backend::nccl) select_nccl_device(rank);  // a GPU per rank
          auto context = make_world_context({backend, store, rank, n, timeout, ""});
          core::ContextBinding binding(context.get());
          fn(rank);
        } catch (...) {
          errors[static_cast<std::size_t>(rank)] = std::current_exception();
        }
      });
  }
  return errors;
}

void run_ranks_or_throw(dist::Backend backend, int n, std::chrono::milliseconds timeout,
                        const std::function<void(int rank)>& fn) {
  for (const auto& e : run_ranks(backend, n, timeout, fn))
    if (e) std::rethrow_exception(e);
}

}  // namespace dist::real
