// The Store front end (default timeouts, argument checks, text values) and the helpers every
// store implementation shares (timeout errors, the add counter, compare_set, missing).
#include "core/store/store.hpp"

#include <algorithm>
#include <charconv>

#include "dist/errors.hpp"

namespace dist {

using core::Bytes;

namespace core {
Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }
std::string to_string(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }
}  // namespace core

namespace {
void check_timeout(std::chrono::milliseconds timeout, const char* function) {
  if (timeout.count() < 0)
    throw InvalidArgument(std::string("store ") + function + ": timeout must be >= 0 ms, got " +
                          std::to_string(timeout.count()) + " ms");
}
}  // namespace

void Store::set(const std::string& key, const Bytes& value) { do_set(key, value); }

Bytes Store::get(const std::string& key) { return get(key, timeout_); }

Bytes Store::get(const std::string& key, std::chrono::milliseconds timeout) {
  check_timeout(timeout, "get");
  return do_get(key, timeout);
}

std::string Store::get_string(const std::string& key) { return core::to_string(get(key)); }

std::string Store::get_string(const std::string& key, std::chrono::milliseconds timeout) {
  return core::to_string(get(key, timeout));
}

void Store::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void Store::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  check_timeout(timeout, "wait");
  if (!keys.empty()) do_wait(keys, timeout);
}

std::int64_t Store::add(const std::string& key, std::int64_t delta) { return do_add(key, delta); }

bool Store::check(const std::vector<std::string>& keys) { return keys.empty() || do_check(keys); }

Bytes Store::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return do_compare_set(key, expected, desired);
}

std::string Store::compare_set(const std::string& key, std::string_view expected,
                               std::string_view desired) {
  return core::to_string(do_compare_set(key, core::to_bytes(expected), core::to_bytes(desired)));
}

bool Store::delete_key(const std::string& key) { return do_delete_key(key); }

std::int64_t Store::num_keys() { return do_num_keys(); }

void Store::set(const std::string& key, const Bytes& value, std::chrono::milliseconds timeout) {
  check_timeout(timeout, "set");
  do_set_within(key, value, timeout);
}

std::vector<std::string> Store::missing(const std::vector<std::string>& keys,
                                        std::chrono::milliseconds timeout) {
  check_timeout(timeout, "missing");
  if (keys.empty()) return {};
  return do_missing(keys, timeout);
}

Store::HostReach Store::reach_host(std::chrono::milliseconds) const { return HostReach::unknown; }

std::vector<Store::RankContact> Store::contacts(const std::vector<int>& ranks,
                                                std::chrono::milliseconds) {
  return std::vector<RankContact>(ranks.size());
}

void Store::do_set_within(const std::string& key, const Bytes& value, std::chrono::milliseconds) {
  do_set(key, value);
}

std::vector<std::string> Store::do_missing(const std::vector<std::string>& keys,
                                           std::chrono::milliseconds timeout) {
  return core::store_detail::missing_one_by_one(
      keys, timeout, [&](const std::string& key) { return do_check({key}); });
}

namespace core::store_detail {

void throw_timeout(std::string_view store, std::chrono::milliseconds timeout,
                   const std::vector<std::string>& missing) {
  std::string message = std::string(store) + ": timed out after " +
                        std::to_string(timeout.count()) + " ms waiting for key" +
                        (missing.size() == 1 ? " " : "s ");
  // A few keys name the wait; the rest are counted (a 20,000-key wait made a 309 KB message).
  constexpr std::size_t named = 8;
  for (std::size_t i = 0; i < std::min(missing.size(), named); ++i)
    message += (i ? ", '" : "'") + missing[i] + "'";
  if (missing.size() > named)
    message += " and " + std::to_string(missing.size() - named) + " more (" +
               std::to_string(missing.size()) + " keys in all)";
  throw TimeoutError(message);
}

std::int64_t parse_counter(std::string_view store, const std::string& key, const Bytes& value) {
  if (value.empty()) return 0;
  std::int64_t result = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, result);
  if (ec != std::errc{} || ptr != end)
    throw BackendError(std::string(store) + ": add on key '" + key +
                       "', which holds a value that is not an integer counter");
  return result;
}

Bytes format_counter(std::int64_t value) { return to_bytes(std::to_string(value)); }

std::int64_t added_counter(std::string_view store, const std::string& key, const Bytes* value,
                           std::int64_t delta) {
  const std::int64_t old = value ? parse_counter(store, key, *value) : 0;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(old) +
                                   static_cast<std::uint64_t>(delta));
}

CompareSetOutcome compare_set_outcome(const Bytes* current, const Bytes& expected,
                                      const Bytes& desired) {
  if (current ? *current == expected : expected.empty()) return {true, desired};
  return {false, current ? *current : expected};
}

std::vector<std::string> missing_one_by_one(const std::vector<std::string>& keys,
                                            std::chrono::milliseconds timeout,
                                            const std::function<bool(const std::string&)>& is_set) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i % 1024 == 1023 && std::chrono::steady_clock::now() > deadline)
      throw TimeoutError("store missing: checked " + std::to_string(i) + " of " +
                         std::to_string(keys.size()) + " keys within " +
                         std::to_string(timeout.count()) + " ms");
    if (!is_set(keys[i])) out.push_back(keys[i]);
  }
  return out;
}

}  // namespace core::store_detail

}  // namespace dist
