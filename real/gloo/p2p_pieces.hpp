// How gloo's send and recv cut a message into pieces. A message is a stream: the sender's 16-byte
// core::P2PHeader, then its payload. The stream is cut at fixed offsets that do not depend on its
// length (16 KiB, then 4x larger up to 4 MiB, then 4 MiB pieces that double every 8), so the k-th
// piece of a sender and of a receiver that disagree on the size never differ in capacity: the
// receiver posts every piece at its full capacity and gloo's transport, which aborts the process
// when a message is larger than the buffer posted for it, never sees one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dist::real::gloo_p2p {

inline constexpr std::size_t first_piece = std::size_t{16} << 10;
inline constexpr std::size_t largest_ramp = std::size_t{4} << 20;
inline constexpr int ramp_pieces = 5;        // 16 KiB, 64 KiB, 256 KiB, 1 MiB, 4 MiB
inline constexpr int pieces_per_double = 8;  // after the ramp

// The capacity of piece k.
constexpr std::size_t piece_capacity(int k) {
  if (k < ramp_pieces) return first_piece << (2 * k);
  const int doublings = (k - ramp_pieces) / pieces_per_double;
  return largest_ramp << (doublings < 40 ? doublings : 40);
}

// Iterates the pieces of a stream of `length` bytes: for each, its index, its first byte in the
// stream, its capacity and the bytes of the stream it holds (at most its capacity).
template <class F>
void for_each_piece(std::size_t length, F&& f) {
  std::size_t start = 0;
  for (int k = 0; k == 0 || start < length; ++k) {
    const std::size_t capacity = piece_capacity(k);
    const std::size_t held = length - start < capacity ? length - start : capacity;
    f(k, start, capacity, held);
    start += capacity;
  }
}

}  // namespace dist::real::gloo_p2p
