// Helpers of the nccl device tests: why a test must skip (no GPU, too few GPUs), ranks as threads
// with one GPU each, device copies of vectors, exact-sum inputs; the reference bridge is testing/'s.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/context.hpp"
#include "core/store/hash_store.hpp"
#include "dist/dist.hpp"
#include "real/nccl/world.hpp"
#include "real/world.hpp"
#include "testing/inputs.hpp"
#include "testing/typed_tests.hpp"

namespace nccl_test {

using namespace std::chrono_literals;
using namespace test_support;

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

template <class T> std::vector<T> input(int rank, std::size_t count, std::uint64_t salt) {
  return exact_sum_input<T>(rank, count, salt);
}
}  // namespace nccl_test
