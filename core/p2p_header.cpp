#include "core/p2p_header.hpp"

#include <cstring>

#include "dist/errors.hpp"

namespace dist::core {

void P2PHeader::encode(std::byte* out) const {
  const std::uint32_t magic = magic_value;
  const auto type = static_cast<std::uint32_t>(dtype);
  std::memcpy(out, &count, 8);
  std::memcpy(out + 8, &type, 4);
  std::memcpy(out + 12, &magic, 4);
}

std::optional<P2PHeader> P2PHeader::decode(std::span<const std::byte> in) {
  if (in.size() < wire_size) return std::nullopt;
  std::uint32_t type = 0;
  std::uint32_t magic = 0;
  P2PHeader h;
  std::memcpy(&h.count, in.data(), 8);
  std::memcpy(&type, in.data() + 8, 4);
  std::memcpy(&magic, in.data() + 12, 4);
  if (magic != magic_value) return std::nullopt;
  bool known = false;
  for (const DType d : all_dtypes) known = known || static_cast<std::uint32_t>(d) == type;
  if (!known) return std::nullopt;
  h.dtype = static_cast<DType>(type);
  return h;
}

std::string describe(const P2PHeader& h) {
  return std::to_string(h.count) + " " + std::string(to_string(h.dtype)) + " element(s)";
}

void throw_p2p_mismatch(const std::string& where, int sender_rank, const P2PHeader& sent,
                        int receiver_rank, const P2PHeader& expected) {
  throw InvalidArgument(where + ": the sender (rank " + std::to_string(sender_rank) + ") sends " +
                        describe(sent) + ", the receiver (rank " + std::to_string(receiver_rank) +
                        ") expects " + describe(expected) +
                        " (a send and its recv must agree on count and dtype)");
}

}  // namespace dist::core
