// What a send and its receive tell each other on gloo and mpi: the element count and dtype of
// each side (16 bytes on the wire), so a size or dtype mismatch is an InvalidArgument naming both
// sides, worded the same on every backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "dist/export.hpp"
#include "dist/types.hpp"

namespace dist::core {

struct P2PHeader {
  static constexpr std::uint32_t magic_value = 0x44495354;  // "DIST"
  static constexpr std::size_t wire_size = 16;

  std::uint64_t count = 0;
  DType dtype = DType::float32;

  // Writes the header's wire_size bytes to `out`.
  DIST_API void encode(std::byte* out) const;
  // Reads a header from `in`; nothing when `in` is shorter than wire_size or lacks dist's magic.
  DIST_API static std::optional<P2PHeader> decode(std::span<const std::byte> in);

  bool operator==(const P2PHeader&) const = default;
};

// "8 int32 element(s)"
DIST_API std::string describe(const P2PHeader& h);

// Throws the InvalidArgument both ends of a mismatched send/recv raise: `where` names the
// operation; the sender and receiver are world ranks with what each side posted.
[[noreturn]] DIST_API void throw_p2p_mismatch(const std::string& where, int sender_rank,
                                              const P2PHeader& sent, int receiver_rank,
                                              const P2PHeader& expected);

}  // namespace dist::core
