// The dict helpers' shared half: the backend-independent layout check (hash, then the key lists
// on a mismatch) and the dist::Tensor forms of all_reduce_dict and comm::reduce_dict.
#include <algorithm>
#include <set>
#include <string>

#include "core/validate.hpp"
#include "dist/comm.hpp"
#include "dist/errors.hpp"
#include "dist/objects.hpp"

namespace dist::detail {

namespace {
std::uint64_t layout_hash(const DictLayout& layout) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&](const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  for (std::size_t i = 0; i < layout.keys.size(); ++i) {
    const std::uint64_t key_size = layout.keys[i].size();
    mix(&key_size, sizeof key_size);
    mix(layout.keys[i].data(), layout.keys[i].size());
    mix(&layout.sizes[i], sizeof layout.sizes[i]);
    mix(&layout.dtypes[i], sizeof layout.dtypes[i]);
  }
  return h;
}

std::string keys_text(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "'" : ", '") + k + "'";
  return out;
}

std::string value_text(const DictLayout& l, std::size_t i) {
  return std::to_string(l.sizes[i]) + " x " + std::string(to_string(l.dtypes[i]));
}

// How rank r's layout differs from rank 0's ("" when it does not).
std::string difference(const DictLayout& base, const DictLayout& other, std::size_t r) {
  std::vector<std::string> missing, extra, changed;
  std::set_difference(base.keys.begin(), base.keys.end(), other.keys.begin(), other.keys.end(),
                      std::back_inserter(missing));
  std::set_difference(other.keys.begin(), other.keys.end(), base.keys.begin(), base.keys.end(),
                      std::back_inserter(extra));
  for (std::size_t i = 0; i < other.keys.size(); ++i) {
    const auto it = std::lower_bound(base.keys.begin(), base.keys.end(), other.keys[i]);
    if (it == base.keys.end() || *it != other.keys[i]) continue;
    const auto j = static_cast<std::size_t>(it - base.keys.begin());
    if (base.sizes[j] != other.sizes[i] || base.dtypes[j] != other.dtypes[i])
      changed.push_back("'" + other.keys[i] + "' holds " + value_text(other, i) +
                        " (rank 0: " + value_text(base, j) + ")");
  }
  std::string out;
  if (!missing.empty()) out += " lacks " + keys_text(missing) + ";";
  if (!extra.empty()) out += " has extra " + keys_text(extra) + ";";
  for (const auto& c : changed) out += " " + c + ";";
  return out.empty() ? out : "\n  rank " + std::to_string(r) + ":" + out;
}

[[noreturn]] void throw_layout_desync(const DictLayout& layout, const Group& group,
                                      const char* function) {
  const auto all = all_gather_object(layout, group);
  std::string msg = std::string(function) +
                    ": the ranks hold different dicts (every rank must hold the same keys, with "
                    "the same value sizes and dtypes); compared with rank 0 (keys " +
                    keys_text(all[0].keys) + "):";
  for (std::size_t r = 1; r < all.size(); ++r) msg += difference(all[0], all[r], r);
  throw DesyncError(msg);
}
}  // namespace

bool check_dict_layout(const DictLayout& layout, const OpArg& op, const Group& group,
                       const char* function) {
  if (group_size_checked(group, function) == 1) return false;
  op.resolve();
  const std::vector<std::uint64_t> own{layout_hash(layout)};
  const auto hashes = dist::all_gather(own, group);
  for (const auto& h : hashes)
    if (h != hashes[0]) throw_layout_desync(layout, group, function);
  return true;
}

namespace {
// The one dtype of a tensor dict; mixed dtypes are an InvalidArgument (see objects.hpp).
DType common_dtype(const std::map<std::string, Tensor>& dict, const char* function) {
  if (dict.empty()) return DType::float32;
  const auto& [first_key, first] = *dict.begin();
  for (const auto& [key, value] : dict)
    if (value.dtype() != first.dtype())
      throw InvalidArgument(std::string(function) + ": the values have different dtypes ('" +
                            first_key + "' is " + std::string(to_string(first.dtype())) + ", '" +
                            key + "' is " + std::string(to_string(value.dtype())) +
                            "); cast them to one dtype first");
  return first.dtype();
}

Tensor flatten(const std::map<std::string, Tensor>& dict, const char* function) {
  const DType dtype = common_dtype(dict, function);
  std::size_t total = 0;
  for (const auto& [key, value] : dict) total += value.numel();
  const Device device = dict.empty() ? Device::cpu() : dict.begin()->second.device();
  Tensor flat = Tensor::empty({static_cast<std::int64_t>(total)}, dtype, device);
  std::size_t offset = 0;
  for (const auto& [key, value] : dict) {
    flat.sub(offset, {static_cast<std::int64_t>(value.numel())}).copy_from(value);
    offset += value.numel();
  }
  return flat;
}

// Each key's part of `flat`, in its original shape, back on its original device.
std::map<std::string, Tensor> unflatten(const std::map<std::string, Tensor>& dict,
                                        const Tensor& flat) {
  std::map<std::string, Tensor> out;
  std::size_t offset = 0;
  for (const auto& [key, value] : dict) {
    out.emplace(key, flat.sub(offset, value.shape()).to(value.device()));
    offset += value.numel();
  }
  return out;
}
}  // namespace

}  // namespace dist::detail

namespace dist {

void all_reduce_dict(std::map<std::string, Tensor>& dict, OpArg op, const Group& group) {
  detail::DictLayout layout;
  for (const auto& [key, value] : dict) layout.add(key, value.numel(), value.dtype());
  if (!detail::check_dict_layout(layout, op, group, "all_reduce_dict")) return;
  Tensor flat = detail::flatten(dict, "all_reduce_dict");
  all_reduce(flat, op, group);
  dict = detail::unflatten(dict, flat);
}

std::map<std::string, Tensor> comm::reduce_dict(const std::map<std::string, Tensor>& input,
                                                bool average) {
  if (get_world_size() < 2) return input;
  detail::DictLayout layout;
  for (const auto& [key, value] : input) layout.add(key, value.numel(), value.dtype());
  detail::check_dict_layout(layout, ReduceOp::sum, {}, "reduce_dict");
  Tensor flat = detail::flatten(input, "reduce_dict");
  reduce(flat, 0, average ? ReduceOp::mean : ReduceOp::sum);
  return detail::unflatten(input, flat);
}

}  // namespace dist
