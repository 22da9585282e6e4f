// The non-template halves of the object helpers (core/objects.cpp, core/dict.cpp,
// core/collect_results.cpp): byte transports over the erased collectives, the dict layout
// check, and the cpu collect protocol. Written once above the backend interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dist/api.hpp"
#include "dist/export.hpp"
#include "dist/types.hpp"

namespace dist::detail {

// A byte buffer lent by the calling thread's small pool and given back (emptied) when destroyed:
// the object helpers serialize and receive into such buffers, so a large object does not make
// every call fault fresh pages in. A buffer above a retention limit is freed instead of kept.
class DIST_API ReusedBytes {
 public:
  ReusedBytes();
  ~ReusedBytes();
  ReusedBytes(ReusedBytes&& other) noexcept : bytes(std::move(other.bytes)) {}
  ReusedBytes& operator=(ReusedBytes&&) = delete;

  std::vector<std::byte> bytes;
};

// Every rank's serialized bytes, rank r's at data[offsets[r], offsets[r] + sizes[r]).
struct GatheredBytes {
  ReusedBytes data;
  std::vector<std::size_t> offsets;
  std::vector<std::size_t> sizes;
  std::span<const std::byte> part(std::size_t r) const {
    return std::span<const std::byte>(data.bytes).subspan(offsets[r], sizes[r]);
  }
};

// Sizes are all-gathered first, then one variable-size all_gather of the bytes.
DIST_API GatheredBytes all_gather_bytes(std::span<const std::byte> mine, const Group& group);
// The largest size is all-reduced, then one gather of each rank's size and bytes, padded to the
// largest (torch's gather_object all-gathers every size first). The result on dst only.
DIST_API std::optional<GatheredBytes> gather_bytes(std::span<const std::byte> mine, int dst,
                                                   const Group& group, const char* function);
// Scatters src's serialized elements (`data`, one per group rank, of `sizes`; used on src only)
// into `out`: each rank's own size and the largest are scattered first, then the elements padded
// to the largest. A list on src whose length is not the group's size raises InvalidArgument on
// every rank (src tells the others through the sizes).
DIST_API void scatter_bytes(std::span<const std::byte> data, std::span<const std::uint64_t> sizes,
                            int src, const Group& group, std::vector<std::byte>& out);
// Broadcasts a list of `length` serialized elements from src. Every rank passes its own list
// length; lengths that differ raise DesyncError on every rank. On src, `data` and `sizes` hold the
// elements; elsewhere they are filled in.
DIST_API void broadcast_bytes(std::size_t length, std::vector<std::byte>& data,
                              std::vector<std::uint64_t>& sizes, int src, const Group& group);

// The layout of a dict: sorted keys, element counts, dtypes.
struct DictLayout {
  std::vector<std::string> keys;
  std::vector<std::uint64_t> sizes;
  std::vector<DType> dtypes;
  void add(const std::string& key, std::size_t size, DType dtype) {
    keys.push_back(key);
    sizes.push_back(size);
    dtypes.push_back(dtype);
  }
  template <class Archive> void serialize(Archive& ar) { ar(keys, sizes, dtypes); }
};
// Whether the dict helper must communicate (a group of more than one rank). If so, resolves
// `op` (InvalidArgument for an unknown name) and checks that every rank holds the same layout:
// a 64-bit hash is all-gathered; on a mismatch the layouts are all-gathered and every rank raises
// DesyncError naming the keys each rank lacks or adds, and the sizes or dtypes that differ.
DIST_API bool check_dict_layout(const DictLayout& layout, const OpArg& op, const Group& group,
                                const char* function);

// The checks collect_results makes first, even when not distributed: device is "cpu" or "gpu",
// no tmpdir with "gpu", size >= 0. Returns whether the device is "gpu".
DIST_API bool check_collect_args(std::string_view device, const std::optional<std::string>& tmpdir,
                                 long size);
// The cpu collect protocol (see collect_results in objects.hpp): part files in a shared
// directory. On world rank 0, `consume` receives every rank's bytes in rank order before the
// files are removed; its exceptions end the collect on every rank.
DIST_API void collect_part_files(
    std::span<const std::byte> mine, const std::optional<std::string>& tmpdir,
    const std::function<void(std::vector<std::vector<std::byte>>&)>& consume);

}  // namespace dist::detail
