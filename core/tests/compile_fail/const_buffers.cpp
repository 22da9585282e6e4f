// Compiled by core/tests/compile_fail/check.cmake once per DIST_CASE: case 0 (the const inputs
// every call accepts) must compile; each other case writes through a span of const elements and
// must fail with dist's message. One case per call family that writes. Cases 13 and 14 pass what
// a call reads where it writes below the public calls (detail::'s (output, input) order swapped,
// a P2POp receiving into a read-only buffer): a ConstBufferRef never becomes a BufferRef.
#include <span>
#include <vector>

#include "dist/collectives.hpp"
#include "dist/p2p.hpp"
#include "dist/tensor.hpp"

void use() {
  std::vector<float> v(8, 1.0F), out(8);
  const std::vector<float>& in = v;
  const std::span<const float> c(in);
#if DIST_CASE == 0
  (void)dist::all_gather(c);
  (void)dist::gather(c);
  (void)dist::all_gather_async(std::span<float>(out), c);
  dist::scatter(std::span<float>(out), c);
  dist::reduce_scatter(std::span<float>(out), c);
  dist::all_to_all(std::span<float>(out), c);
  dist::send(c, 1);
  (void)dist::isend(c, 1);
  (void)dist::P2POp::isend(c, 1);
#elif DIST_CASE == 1
  dist::all_reduce(c);
#elif DIST_CASE == 2
  (void)dist::all_reduce_async(c);
#elif DIST_CASE == 3
  dist::broadcast(c);
#elif DIST_CASE == 4
  dist::reduce(c);
#elif DIST_CASE == 5
  (void)dist::all_gather_async(c, std::span<float>(v));
#elif DIST_CASE == 6
  dist::scatter(c, std::span<float>(v));
#elif DIST_CASE == 7
  dist::reduce_scatter(c, std::span<float>(v));
#elif DIST_CASE == 8
  dist::all_to_all(c, std::span<float>(v));
#elif DIST_CASE == 9
  dist::recv(c, 0);
#elif DIST_CASE == 10
  (void)dist::irecv(c, 0);
#elif DIST_CASE == 11
  (void)dist::P2POp::irecv(c, 0);
#elif DIST_CASE == 12
  (void)dist::Tensor::view(c);
#elif DIST_CASE == 13
  (void)dist::detail::all_gather(dist::detail::input_of(c),
                                 dist::detail::buffer_of(std::span<float>(out)), {});
#elif DIST_CASE == 14
  (void)dist::P2POp{dist::P2POp::Kind::irecv, {}, dist::detail::input_of(c), 0, 0, {}};
#endif
}
