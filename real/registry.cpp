// The table of real backends: one line per backend folder. Adding a backend is its folder
// (the files of docs/adding-a-backend.md), a value of dist::Backend, and a line here.
#include "real/registry.hpp"

#include "dist/errors.hpp"
#include "dist/real/init.hpp"

namespace dist::real {

// Defined by each backend folder's entry.cpp (or unavailable.cpp).
extern const BackendEntry gloo_entry;
extern const BackendEntry mpi_entry;
extern const BackendEntry nccl_entry;

namespace {
constexpr const BackendEntry* table[] = {
    &gloo_entry,
    &nccl_entry,
    &mpi_entry,
};
}  // namespace

std::span<const BackendEntry* const> registered_backends() { return table; }

const BackendEntry& backend_entry(dist::Backend kind, std::string_view caller) {
  if (kind == dist::Backend::sim)
    throw InvalidArgument(std::string(caller) +
                          ": the sim backend runs in one process; use dist::sim::run instead");
  for (const BackendEntry* entry : table)
    if (entry->kind == kind) return *entry;
  throw InvalidArgument(std::string(caller) + ": no backend " + std::string(to_string(kind)) +
                        " is registered in this build");
}

void require_available(const BackendEntry& entry, int ranks, std::string_view caller) {
  if (std::string why = entry.unavailable(ranks); !why.empty())
    throw BackendError(std::string(caller) + "(" + std::string(to_string(entry.kind)) +
                       "): " + why);
}

}  // namespace dist::real

namespace dist {

bool is_gloo_available() { return real::backend_entry(Backend::gloo, "is_gloo_available").built; }
bool is_mpi_available() { return real::backend_entry(Backend::mpi, "is_mpi_available").built; }
bool is_nccl_available() { return real::backend_entry(Backend::nccl, "is_nccl_available").built; }

}  // namespace dist
