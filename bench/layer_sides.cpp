// The call layer's two sides for the cost pairs (layer_pairs_bench.cpp, mpi_pairs_bench.cpp):
// the world backend of the rank's context and core::without_call_layer of it.
#include "bench/layer_sides.hpp"

#include <stdexcept>

#include "core/calls/call_layer.hpp"
#include "core/context.hpp"

namespace dist::bench {

namespace {
LayerSide side_of(core::BackendImpl& backend) {
  return {[&backend](detail::BufferRef data) { backend.all_reduce(data, ReduceOp::sum).wait(); },
          [&backend] { backend.barrier().wait(); }};
}
}  // namespace

LayerSides layer_sides() {
  const auto* context = core::current_context();
  if (!context || !context->world || !context->world->backend)
    throw std::runtime_error("bench: the calling rank has no world backend");
  core::BackendImpl& on = *context->world->backend;
  core::BackendImpl& off = core::without_call_layer(on);
  if (&on == &off) throw std::runtime_error("bench: the world's backend has no call layer");
  return {side_of(on), side_of(off)};
}

}  // namespace dist::bench
