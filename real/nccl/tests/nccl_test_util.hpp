// Helpers of the nccl device tests: why a test must skip (no GPU, too few GPUs), ranks as threads
// with one GPU each, device copies of vectors, reference types and exact-sum inputs.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/context.hpp"
#include "core/store/hash_store.hpp"
#include "dist/dist.hpp"
#include "real/nccl/world.hpp"
#include "real/world.hpp"
#include "reference/collectives.hpp"

namespace nccl_test {

using namespace std::chrono_literals;
namespace ref = dist::reference;

inline int gpu_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

// Why a test of `ranks` ranks (one GPU each; NCCL refuses two ranks on one GPU) cannot run here;
// empty when it can.
inline std::string skip_reason(int ranks) {
  const std::string why = dist::real::nccl_unavailable_reason();
  if (!why.empty()) return why;
  if (gpu_count() < ranks)
    return "needs " + std::to_string(ranks) + " GPUs (one per rank), found " +
           std::to_string(gpu_count());
  return "";
}

// Runs fn() on n ranks, rank r a thread on GPU r, connected through one HashStore; returns the
// results in rank order and rethrows the first rank's error.
template <class F> auto run(int n, F fn, std::chrono::milliseconds timeout = 120s) {
  using R = std::invoke_result_t<F&>;
  auto store = std::make_shared<dist::core::HashStore>();
  store->set_timeout(timeout);
  std::vector<std::optional<R>> slots(static_cast<std::size_t>(n));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  {
    std::vector<std::jthread> threads;
    for (int rank = 0; rank < n; ++rank)
      threads.emplace_back([&, rank] {
        try {
          if (cudaSetDevice(rank) != cudaSuccess) throw std::runtime_error("cudaSetDevice failed");
          auto context = dist::real::make_world_context({dist::Backend::nccl, store, rank, n, timeout, ""});
          dist::core::ContextBinding binding(context.get());
          slots[static_cast<std::size_t>(rank)].emplace(fn());
        } catch (...) {
          errors[static_cast<std::size_t>(rank)] = std::current_exception();
        }
      });
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<R> results;
  for (auto& s : slots) results.push_back(std::move(*s));
  return results;
}

// A vector's elements in memory of the current GPU.
template <class T> class DeviceVector {
 public:
  explicit DeviceVector(const std::vector<T>& host) : size_(host.size()) {
    EXPECT_EQ(cudaMalloc(&data_, std::max<std::size_t>(1, size_) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaGetDevice(&device_), cudaSuccess);
  }
  ~DeviceVector() { (void)cudaFree(data_); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  std::vector<T> to_host() const {
    std::vector<T> out(size_);
    EXPECT_EQ(cudaMemcpy(out.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  dist::Tensor tensor() const {
    return dist::Tensor::view(data_, dist::dtype_v<T>, {static_cast<std::int64_t>(size_)},
                              dist::Device::cuda(device_));
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = 0;
};

using AllDTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t,
                                   std::int64_t, std::uint64_t, dist::float16, dist::bfloat16,
                                   float, double>;
struct DTypeName {
  template <class T> static std::string GetName(int) { return std::string(dist::to_string(dist::dtype_v<T>)); }
};

template <class T> inline constexpr bool is_half_v =
    std::is_same_v<T, dist::float16> || std::is_same_v<T, dist::bfloat16>;
template <class T> struct RefType { using type = T; };
template <> struct RefType<dist::float16> { using type = ref::Half; };
template <> struct RefType<dist::bfloat16> { using type = ref::BFloat16; };
template <class T> using ref_t = typename RefType<T>::type;

template <class T> ref::PerRank<ref_t<T>> to_ref(const std::vector<std::vector<T>>& in) {
  ref::PerRank<ref_t<T>> out;
  for (const auto& v : in) {
    out.emplace_back();
    for (const T& x : v) {
      if constexpr (is_half_v<T>) out.back().push_back(ref_t<T>{x.bits});
      else out.back().push_back(x);
    }
  }
  return out;
}
template <class T> std::vector<std::vector<T>> from_ref(const ref::PerRank<ref_t<T>>& in) {
  std::vector<std::vector<T>> out;
  for (const auto& v : in) {
    out.emplace_back();
    for (const auto& x : v) {
      if constexpr (is_half_v<T>) out.back().push_back(T::from_bits(x.bits));
      else out.back().push_back(x);
    }
  }
  return out;
}
inline ref::Op to_ref(dist::ReduceOp op) { return static_cast<ref::Op>(static_cast<int>(op)); }

template <class T> double as_double(T v) {
  if constexpr (is_half_v<T>) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}

// How far a result may be from the reference: exact, except a floating mean (NCCL's ncclAvg
// scales before or after summing, so it may round differently from sum / n).
template <class T> double tolerance(dist::ReduceOp op) {
  if (op != dist::ReduceOp::mean || std::is_integral_v<T>) return 0;
  if constexpr (std::is_same_v<T, dist::bfloat16>) return 0.05;
  if constexpr (std::is_same_v<T, dist::float16>) return 0.01;
  if constexpr (std::is_same_v<T, float>) return 1e-5;
  return 1e-12;
}

// The number of elements of `got` farther than `tol` from `expected` (nccl-tests' wrong count).
template <class T>
std::size_t wrong(const std::vector<std::vector<T>>& got, const std::vector<std::vector<T>>& expected,
                  double tol) {
  std::size_t bad = 0;
  for (std::size_t r = 0; r < expected.size(); ++r) {
    if (got[r].size() != expected[r].size()) return expected[r].size() + 1;
    for (std::size_t i = 0; i < expected[r].size(); ++i) {
      const double g = as_double(got[r][i]), e = as_double(expected[r][i]);
      if (std::is_integral_v<T> ? g != e : !(std::fabs(g - e) <= tol)) ++bad;
    }
  }
  return bad;
}

// Exact-sum inputs: integers over their whole range (wrapping is order-independent); floats in
// {-2, ..., 2}, whose sums and products over up to 8 ranks are exact in every type and order.
template <class T> std::vector<T> input(int rank, std::size_t count, std::uint64_t salt) {
  std::mt19937_64 rng(salt * 1000003u + static_cast<std::uint64_t>(rank));
  std::vector<T> v(count);
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>) x = static_cast<T>(rng());
    else x = T(static_cast<float>(static_cast<int>(rng() % 5) - 2));
  }
  return v;
}
template <class T> std::vector<std::vector<T>> inputs(int n, std::size_t count, std::uint64_t salt) {
  std::vector<std::vector<T>> in;
  for (int r = 0; r < n; ++r) in.push_back(input<T>(r, count, salt));
  return in;
}

template <class T> std::vector<dist::ReduceOp> ops_for() {
  std::vector<dist::ReduceOp> out;
  for (int i = 0; i < 8; ++i)
    if (dist::op_allowed(static_cast<dist::ReduceOp>(i), dist::dtype_v<T>))
      out.push_back(static_cast<dist::ReduceOp>(i));
  return out;
}

}  // namespace nccl_test
