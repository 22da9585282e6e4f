// The byte transports of the object collectives (sizes first, then the bytes) and
// sync_random_seed, written once over the erased collectives.
#include "dist/objects.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "core/context.hpp"
#include "core/validate.hpp"
#include "dist/errors.hpp"

namespace dist::detail {

namespace {
// What each thread keeps for ReusedBytes: a few buffers, none larger than keep_bytes.
constexpr std::size_t keep_buffers = 4;
constexpr std::size_t keep_bytes = std::size_t{64} << 20;
thread_local std::vector<std::vector<std::byte>> spare_buffers;

ConstBufferRef bytes_in(std::span<const std::byte> bytes) {
  return {bytes.data(), bytes.size(), DType::uint8, Device::cpu()};
}
BufferRef bytes_out(std::span<std::byte> bytes) {
  return {bytes.data(), bytes.size(), DType::uint8, Device::cpu()};
}

// Every rank's one uint64 value, in group-rank order.
std::vector<std::uint64_t> all_gather_u64(std::uint64_t value, const Group& group) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(group_size_checked(group, "all_gather")));
  all_gather(buffer_of(std::span<std::uint64_t>(out)),
             input_of(std::span<const std::uint64_t>(&value, 1)), group)
      .wait();
  return out;
}

// The smallest and largest of every rank's value, with one all_reduce (O(group size) traffic).
std::pair<std::uint64_t, std::uint64_t> min_max_u64(std::uint64_t value, const Group& group) {
  std::array<std::uint64_t, 2> v{value, ~value};
  dist::all_reduce(std::span<std::uint64_t>(v), ReduceOp::max, group);
  return {~v[1], v[0]};
}

std::string lengths_text(const std::vector<std::uint64_t>& lengths) {
  std::string out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out += (r ? ", rank " : "rank ") + std::to_string(r) + ": " + std::to_string(lengths[r]);
  return out;
}
}  // namespace

ReusedBytes::ReusedBytes() {
  if (spare_buffers.empty()) return;
  bytes = std::move(spare_buffers.back());
  spare_buffers.pop_back();
}

ReusedBytes::~ReusedBytes() {
  if (bytes.capacity() == 0 || bytes.capacity() > keep_bytes) return;
  if (spare_buffers.size() >= keep_buffers) return;
  bytes.clear();
  spare_buffers.push_back(std::move(bytes));
}

void throw_deserialize_error(const char* function, int source, std::size_t bytes,
                             const char* reason) {
  throw InvalidArgument(std::string(function) + ": cannot deserialize the object from rank " +
                        std::to_string(source) + " (" + std::to_string(bytes) +
                        " bytes): " + reason);
}

GatheredBytes all_gather_bytes(std::span<const std::byte> mine, const Group& group) {
  GatheredBytes out;
  std::size_t total = 0;
  for (std::uint64_t size : all_gather_u64(mine.size(), group)) {
    out.offsets.push_back(total);
    out.sizes.push_back(static_cast<std::size_t>(size));
    total += static_cast<std::size_t>(size);
  }
  out.data.bytes.resize(total);
  all_gather_v(bytes_out(out.data.bytes), bytes_in(mine), out.sizes, group).wait();
  return out;
}

std::optional<GatheredBytes> gather_bytes(std::span<const std::byte> mine, int dst,
                                          const Group& group, const char* function) {
  const int n = group_size_checked(group, function);
  core::check_rank(dst, n, function, "dst");
  // The padding length comes from an all_reduce, then one gather brings every rank's slot: its
  // size, then its bytes padded to the longest. No rank but dst ever holds a list as long as the
  // group.
  const std::uint64_t size = mine.size();
  const auto longest = static_cast<std::size_t>(min_max_u64(size, group).second);
  const bool on_dst = get_rank(group) == dst;
  const std::size_t slot = sizeof size + longest;
  std::vector<std::byte> padded(slot);
  std::memcpy(padded.data(), &size, sizeof size);
  std::copy(mine.begin(), mine.end(), padded.begin() + sizeof size);
  GatheredBytes out;
  if (on_dst) out.data.bytes.resize(slot * static_cast<std::size_t>(n));
  gather(bytes_out(out.data.bytes), bytes_in(padded), dst, group).wait();
  if (!on_dst) return std::nullopt;
  out.offsets.reserve(static_cast<std::size_t>(n));
  out.sizes.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const std::size_t at = slot * static_cast<std::size_t>(r);
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, out.data.bytes.data() + at, sizeof theirs);
    if (theirs > longest)
      throw InvalidArgument(std::string(function) + ": group rank " + std::to_string(r) +
                            " sent an object of " + std::to_string(theirs) +
                            " bytes, more than the largest the group agreed on (" +
                            std::to_string(longest) + ")");
    out.offsets.push_back(at + sizeof theirs);
    out.sizes.push_back(static_cast<std::size_t>(theirs));
  }
  return out;
}

void scatter_bytes(std::span<const std::byte> data, std::span<const std::uint64_t> sizes, int src,
                   const Group& group, std::vector<std::byte>& out) {
  constexpr const char* function = "scatter_object_list";
  const int n = group_size_checked(group, function);
  core::check_rank(src, n, function, "src");
  const bool on_src = get_rank(group) == src;
  constexpr std::uint64_t wrong_length = ~std::uint64_t{0};  // in place of the largest size
  // Per rank: its element's size and the largest (on a wrong-length list: the length, and the
  // marker).
  std::vector<std::uint64_t> headers;
  std::uint64_t longest = 0;
  if (on_src) {
    const bool right = sizes.size() == static_cast<std::size_t>(n);
    if (right) longest = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
    for (int r = 0; r < n; ++r) {
      headers.push_back(right ? sizes[static_cast<std::size_t>(r)] : sizes.size());
      headers.push_back(right ? longest : wrong_length);
    }
  }
  std::vector<std::uint64_t> mine(2);
  dist::scatter(std::span<std::uint64_t>(mine), std::span<std::uint64_t>(headers), src, group);
  if (mine[1] == wrong_length)
    throw InvalidArgument(std::string(function) + ": src (group rank " + std::to_string(src) +
                          ") passed " + std::to_string(mine[0]) + " inputs for a group of " +
                          std::to_string(n) + " ranks; it must pass one object per group rank");
  longest = mine[1];
  std::vector<std::byte> padded;
  if (on_src) {
    padded.resize(longest * static_cast<std::size_t>(n));
    std::size_t offset = 0;
    for (int r = 0; r < n; ++r) {
      const auto size = static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]);
      std::copy_n(
          data.begin() + static_cast<std::ptrdiff_t>(offset), size,
          padded.begin() + static_cast<std::ptrdiff_t>(longest * static_cast<std::size_t>(r)));
      offset += size;
    }
  }
  out.resize(static_cast<std::size_t>(longest));
  scatter(bytes_out(out), bytes_in(padded), src, group).wait();
  out.resize(static_cast<std::size_t>(mine[0]));
}

void broadcast_bytes(std::size_t length, std::vector<std::byte>& data,
                     std::vector<std::uint64_t>& sizes, int src, const Group& group) {
  const int n = group_size_checked(group, "broadcast_object_list");
  core::check_rank(src, n, "broadcast_object_list", "src");
  if (const auto [shortest, longest] = min_max_u64(length, group); shortest != longest) {
    const auto lengths = all_gather_u64(length, group);  // only to name them in the error
    throw DesyncError("broadcast_object_list: the ranks passed lists of different lengths (" +
                      lengths_text(lengths) + "); every rank must pass a list of the same length");
  }
  if (length == 0) return;
  const bool on_src = get_rank(group) == src;
  if (!on_src) sizes.assign(length, 0);
  dist::broadcast(sizes, src, group);
  std::size_t total = 0;
  for (std::uint64_t s : sizes) total += static_cast<std::size_t>(s);
  if (!on_src) data.resize(total);
  if (total > 0) broadcast(bytes_out(data), src, group).wait();
}

}  // namespace dist::detail

namespace dist {

int sync_random_seed(const Group& group) {
  // Every rank draws (31 high bits of its stream), like numpy's randint(2**31) in MMEngine.
  const auto seed = static_cast<std::int32_t>(core::random_engine()() >> 33);
  if (detail::group_size_checked(group, "sync_random_seed") == 1) return seed;
  std::vector<std::int32_t> value{get_rank(group) == 0 ? seed : 0};
  broadcast(value, 0, group);
  return value[0];
}

}  // namespace dist
