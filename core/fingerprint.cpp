// Fingerprint construction, description and comparison.
#include "core/fingerprint.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
constexpr const char* kinds[] = {"all_reduce", "broadcast", "reduce",     "all_gather", "all_gather_v",
                                 "gather",     "scatter",   "all_to_all", "barrier",    "reduce_scatter"};
constexpr std::uint32_t no_dtype = UINT32_MAX;
}  // namespace

Fingerprint fingerprint(const char* kind, std::optional<DType> dtype, std::size_t count, int root,
                        std::optional<ReduceOp> op) {
  Fingerprint f;
  const auto it = std::find_if(std::begin(kinds), std::end(kinds),
                               [&](const char* k) { return std::strcmp(k, kind) == 0; });
  f.kind = static_cast<std::uint32_t>(it - std::begin(kinds));
  f.dtype = dtype ? static_cast<std::uint32_t>(*dtype) : no_dtype;
  f.count = count;
  f.root = root;
  f.op = op ? static_cast<std::int32_t>(*op) : -1;
  return f;
}

const char* kind_name(const Fingerprint& f) {
  return f.kind < std::size(kinds) ? kinds[f.kind] : "unknown collective";
}

std::string describe(const Fingerprint& f) {
  std::string text = std::string(kind_name(f)) + "(";
  if (f.dtype != no_dtype) text += std::string(to_string(static_cast<DType>(f.dtype))) + ", ";
  text += "count " + std::to_string(f.count);
  if (f.root >= 0) text += ", root " + std::to_string(f.root);
  if (f.op >= 0) text += ", op " + std::string(to_string(static_cast<ReduceOp>(f.op)));
  return text + ")";
}

bool fingerprints_enabled() {
  auto value = get_env("DIST_DEBUG");
  if (!value) return false;
  std::transform(value->begin(), value->end(), value->begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return *value == "detail";
}

void check_fingerprints(std::span<const Fingerprint> all, const std::vector<int>& global_ranks,
                        const std::string& operation) {
  const char* field = nullptr;
  for (const Fingerprint& f : all) {
    const Fingerprint& a = all.front();
    if (f.kind != a.kind) field = "kind";
    else if (f.dtype != a.dtype) field = "dtype";
    else if (f.count != a.count) field = "count";
    else if (f.root != a.root) field = "root";
    else if (f.op != a.op) field = "op";
    if (field) break;
  }
  if (!field) return;
  std::string message = operation + ": ranks disagree on '" + field + "':";
  for (std::size_t i = 0; i < all.size(); ++i)
    message += "\n  rank " + std::to_string(global_ranks[i]) + ": " + describe(all[i]);
  throw DesyncError(message);
}

}  // namespace dist::core
