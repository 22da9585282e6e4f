// The stores of <dist/store.hpp> under the names core has always used, and the helpers every
// store implementation shares (timeout errors, the add counter's text form). store.cpp: the Store
// front end; each kind is a StoreImpl (store_impl.hpp) in hash_store, file_store, tcp_store*,
// prefix_store, which its public class forwards to.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dist/export.hpp"
#include "dist/store.hpp"

namespace dist::core {

using Store = dist::Store;
using PrefixStore = dist::PrefixStore;
using Bytes = Store::Bytes;

DIST_API Bytes to_bytes(std::string_view text);
DIST_API std::string to_string(const Bytes& bytes);

// Helpers for implementations.
namespace store_detail {
// The TimeoutError a store raises: "<store>: timed out after N ms waiting for key(s) 'a', 'b'".
[[noreturn]] void throw_timeout(std::string_view store, std::chrono::milliseconds timeout,
                                const std::vector<std::string>& missing);
// Parses the decimal counter text stored by add (empty: 0); BackendError when it is not one.
std::int64_t parse_counter(std::string_view store, const std::string& key, const Bytes& value);
Bytes format_counter(std::int64_t value);
// The counter after adding `delta` to the one `value` holds (null: unset), wrapping like int64.
std::int64_t added_counter(std::string_view store, const std::string& key, const Bytes* value,
                           std::int64_t delta);
// c10d's compare_set on the value of a key (`current` null: the key is unset): whether `desired`
// is to be stored, and what compare_set returns.
struct CompareSetOutcome {
  bool store = false;
  Bytes value;
};
CompareSetOutcome compare_set_outcome(const Bytes* current, const Bytes& expected,
                                      const Bytes& desired);
// The keys of `keys` that `is_set` finds unset, in order, asking it once a key: a store's default
// missing(). TimeoutError once `timeout` has passed (looked at every 1024 keys).
std::vector<std::string> missing_one_by_one(const std::vector<std::string>& keys,
                                            std::chrono::milliseconds timeout,
                                            const std::function<bool(const std::string&)>& is_set);
}  // namespace store_detail

}  // namespace dist::core
