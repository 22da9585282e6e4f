// One-GPU checks that reach NCCL. dist's front end answers a one-rank world itself, so these call
// the backend directly: a split followed at once by a barrier on the parent (member and
// non-member paths), host input gathered into a zeroed host output (the copy back), Works waited
// after their communicator was aborted (by the backend, and by dist::abort, then shrink_group's new
// communicator), Works polled on another thread while the issuer enqueues,
// and every collective below the one-rank shortcut (integer mean, bitwise fold, in-place
// all_to_all on the device). Each skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/calls/call_layer.hpp"
#include "core/context.hpp"
#include "core/store/hash_store.hpp"
#include "dist/fault_tolerance.hpp"
#include "real/nccl/backend.hpp"
#include "real/nccl/tests/late_fill.hpp"
#include "real/nccl/tests/nccl_test_util.hpp"

namespace {

using namespace nccl_test;
using dist::ReduceOp;
using dist::detail::buffer_of;

// A group's NcclBackend, below the call layer every real backend is wrapped in.
dist::real::NcclBackend& nccl_backend_of(const dist::Group& group) {
  return dynamic_cast<dist::real::NcclBackend&>(
      dist::core::without_call_layer(*group.state()->backend));
}

// The world's NcclBackend.
dist::real::NcclBackend& nccl_backend() {
  return nccl_backend_of(dist::Group(dist::core::current_context()->world));
}

// An all_reduce of the world's backend queued behind a kernel that writes its 64 Ki int32 a second
// late on the default stream: a Work that stays pending for that second.
struct LateAllReduce {
  static constexpr std::size_t n = 1 << 16;
  DeviceVector<std::int32_t> data{std::vector<std::int32_t>(n, 1)};
  dist::Work work;
  LateAllReduce() {
    auto t = data.tensor();
    const cudaError_t launched =
        fill_late_on_default_stream(static_cast<std::int32_t*>(t.data()), n, 7, 1000ms);
    EXPECT_EQ(launched, cudaSuccess) << cudaGetErrorString(launched);
    work = nccl_backend().all_reduce(buffer_of(t), ReduceOp::sum);
  }
};

template <class T>
dist::core::Buf host(std::vector<T>& v) {
  return buffer_of(std::span<T>(v));
}

// wait() raises BackendError saying the communicator was aborted; never a success.
void expect_aborted(dist::Work& work, const std::string& what) {
  try {
    work.wait();
    ADD_FAILURE() << what << " reported success after its communicator was aborted";
  } catch (const dist::BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("aborted"), std::string::npos) << e.what();
  }
}

TEST(NcclOneGpu, SplitThenAtOnceABarrierOnTheParent) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    auto& backend = nccl_backend();
    // A member: split returns once the parent reports ncclSuccess again, so the parent's next
    // call is not refused with ncclInvalidArgument ("previous operation" still in progress).
    auto child = backend.split({0});
    EXPECT_NE(child, nullptr);
    backend.barrier().wait();
    if (child) child->barrier().wait();
    // No member (NCCL_SPLIT_NOCOLOR): the non-members' path, then the parent at once.
    EXPECT_EQ(backend.split({}), nullptr);
    backend.barrier().wait();
    std::vector<int> v{4, -4};
    backend.all_reduce(host(v), ReduceOp::sum).wait();
    EXPECT_EQ(v, (std::vector<int>{4, -4}));
    return 0;
  });
}

TEST(NcclOneGpu, AllGatherCopiesHostResultsBackIntoZeroedOutputs) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    auto& backend = nccl_backend();
    std::vector<float> in{1.5f, -2.0f, 3.25f}, out(3, 0.0f);
    backend.all_gather(host(out), host(in)).wait();
    EXPECT_EQ(out, in) << "host input into host output";
    DeviceVector<float> d(in);
    std::vector<float> from_device(3, 0.0f);
    backend.all_gather(host(from_device), buffer_of(d.tensor())).wait();
    EXPECT_EQ(from_device, in) << "device input into host output";
    DeviceVector<float> to(std::vector<float>(3, 0.0f));
    backend.all_gather(buffer_of(to.tensor()), host(in)).wait();
    EXPECT_EQ(to.to_host(), in) << "host input into device output";
    return 0;
  });
}

// Both operations queue behind a kernel on the default stream that ends after a second; the
// communicator is aborted meanwhile. After an abort NCCL's kernels exit early and complete their
// events: the Works must raise, not report success.
TEST(NcclOneGpu, WorksWaitedAfterTheCommunicatorWasAbortedRaise) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    auto& backend = nccl_backend();
    constexpr std::size_t n = 1 << 16;
    DeviceVector<std::int32_t> a(std::vector<std::int32_t>(n, 1)),
        b(std::vector<std::int32_t>(n, 2));
    auto at = a.tensor(), bt = b.tensor();
    const cudaError_t launched =
        fill_late_on_default_stream(static_cast<std::int32_t*>(at.data()), n, 7, 1000ms);
    EXPECT_EQ(launched, cudaSuccess) << cudaGetErrorString(launched);
    dist::Work first = backend.all_reduce(buffer_of(at), ReduceOp::sum);
    dist::Work second = backend.broadcast(buffer_of(bt), 0);
    backend.communicator().abort("the test's abort");
    EXPECT_TRUE(backend.communicator().aborted());
    // is_completed() never blocks; once true, the Work's outcome is the abort.
    const auto limit = std::chrono::steady_clock::now() + 30s;
    while (!first.is_completed() && std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(first.is_completed());
    expect_aborted(first, "all_reduce (polled with is_completed)");
    expect_aborted(second, "broadcast (waited)");
    try {
      backend.barrier().wait();
      ADD_FAILURE() << "a barrier ran on an aborted communicator";
    } catch (const dist::BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("barrier #"), std::string::npos) << e.what();
    }
    return 0;
  });
}

// dist::abort of the world reaches NCCL (ncclCommAbort, NcclBackend::abort): a Work queued behind
// a late kernel raises Aborted, and so do later calls through the front end and below it; then
// shrink_group connects a new communicator of the survivors (rank 0), whose NCCL all_reduce runs.
TEST(NcclOneGpu, DistAbortEndsPendingWorksWithAbortedAndShrinkGoesOn) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    auto& backend = nccl_backend();
    LateAllReduce late;
    dist::abort();
    try {
      late.work.wait();
      ADD_FAILURE() << "the pending all_reduce completed after dist::abort";
    } catch (const dist::Aborted& e) {
      EXPECT_NE(std::string(e.what()).find("was aborted on rank 0 by dist::abort"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(dist::barrier(), dist::Aborted);
    EXPECT_THROW(backend.barrier().wait(), dist::Aborted);
    const dist::Group survivors = dist::shrink_group({}, std::vector<int>{});
    auto& shrunk = nccl_backend_of(survivors);
    DeviceVector<float> d(std::vector<float>{1.0f, 2.0f, 3.0f});
    auto dt = d.tensor();
    shrunk.all_reduce(buffer_of(dt), ReduceOp::sum).wait();
    EXPECT_EQ(d.to_host(), (std::vector<float>{1.0f, 2.0f, 3.0f}));
    return 0;
  });
}

// shrink_group on a live communicator is ncclCommShrink (NcclBackend::shrink): without
// abort_parent the world goes on too; with it, a Work queued behind a late kernel raises Aborted,
// and the new communicator's all_reduce runs.
TEST(NcclOneGpu, ShrinkGroupIsNcclCommShrinkAndAbortParentEndsThePendingWork) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    const dist::Group kept = dist::shrink_group({}, std::vector<int>{});
    EXPECT_NE(nccl_backend_of(kept).communicator().spec().key.find("shrink_group"),
              std::string::npos)
        << nccl_backend_of(kept).communicator().spec().key;
    std::vector<float> v{1.0f};
    dist::all_reduce(v);  // the world was not aborted
    dist::all_reduce(v, dist::ReduceOp::sum, kept);
    LateAllReduce late;
    const dist::Group survivors =
        dist::shrink_group({}, std::vector<int>{}, {.abort_parent = true});
    EXPECT_THROW(late.work.wait(), dist::Error);
    EXPECT_THROW(dist::barrier(), dist::Aborted);
    DeviceVector<float> d(std::vector<float>{1.0f, 2.0f, 3.0f});
    auto dt = d.tensor();
    nccl_backend_of(survivors).all_reduce(buffer_of(dt), ReduceOp::sum).wait();
    EXPECT_EQ(d.to_host(), (std::vector<float>{1.0f, 2.0f, 3.0f}));
    return 0;
  });
}

// reconfigure on nccl (one GPU): with nobody gone it keeps the world; a replacement of the only
// rank (restart count 1, the first process gone) is refused until it reconfigures, then joins the
// membership of epoch 1 through the store and a communicator connected under its prefix, whose
// NCCL all_reduce runs.
TEST(NcclOneGpu, AReplacementJoinsByReconfigureWithACommunicatorOfItsEpoch) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  auto store = std::make_shared<dist::core::HashStore>();
  store->set_timeout(60s);
  dist::real::WorldSpec spec{dist::Backend::nccl, store, 0, 1, 60s, ""};
  {
    auto first = dist::real::make_world_context(spec);
    dist::core::ContextBinding binding(first.get());
    EXPECT_EQ(dist::reconfigure().ranks(), std::vector<int>{0});
    std::vector<float> v{1.0f};
    dist::all_reduce(v);  // the world was not aborted
  }
  spec.restart_count = 1;
  auto replacement = dist::real::make_world_context(spec);
  dist::core::ContextBinding binding(replacement.get());
  EXPECT_THROW(dist::barrier(), dist::Aborted);
  const dist::Group joined = dist::reconfigure();
  EXPECT_EQ(joined.ranks(), std::vector<int>{0});
  auto& backend = nccl_backend_of(joined);
  EXPECT_NE(backend.communicator().spec().key.find("nccl/world"), std::string::npos);
  DeviceVector<float> d(std::vector<float>{1.0f, 2.0f});
  auto dt = d.tensor();
  backend.all_reduce(buffer_of(dt), ReduceOp::sum).wait();
  EXPECT_EQ(d.to_host(), (std::vector<float>{1.0f, 2.0f}));
}

// Issue 21, finding 3: Works polled on another thread while the issuing thread enqueues on the
// same communicator (every NCCL call is under the communicator's lock).
TEST(NcclOneGpu, WorksPolledOnAnotherThreadWhileTheIssuerEnqueues) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    auto& backend = nccl_backend();
    DeviceVector<float> d(std::vector<float>(4096, 1.0f));
    std::vector<dist::Work> works;
    std::mutex works_mutex;
    std::atomic<bool> issued{false};
    std::thread poller([&] {
      while (!issued) {
        std::lock_guard lock(works_mutex);
        for (const auto& w : works) (void)w.is_completed();
      }
    });
    for (int i = 0; i < 500; ++i) {
      dist::Work w =
          backend.all_reduce(buffer_of(d.tensor()), i % 2 ? ReduceOp::max : ReduceOp::sum);
      std::lock_guard lock(works_mutex);
      works.push_back(std::move(w));
    }
    issued = true;
    poller.join();
    for (auto& w : works) w.wait();
    const auto values = d.to_host();
    EXPECT_EQ(std::count(values.begin(), values.end(), 1.0f), 4096);
    return 0;
  });
}

TEST(NcclOneGpu, EveryCollectiveRunsBelowTheOneRankShortcut) {
  if (const auto why = skip_reason(1); !why.empty()) GTEST_SKIP() << why;
  run(1, [] {
    auto& backend = nccl_backend();
    const std::vector<std::int64_t> h{7, -3};
    std::vector<std::int64_t> x = h;
    backend.reduce(host(x), ReduceOp::mean, 0).wait();  // integer mean: ncclSum, then / 1
    EXPECT_EQ(x, h) << "reduce mean";
    backend.broadcast(host(x), 0).wait();
    EXPECT_EQ(x, h) << "broadcast";
    std::vector<std::int64_t> out(2, 0);
    backend.reduce_scatter(host(out), host(x), ReduceOp::bor).wait();  // all_gather + fold
    EXPECT_EQ(out, h) << "reduce_scatter bor";
    out.assign(2, 0);
    backend.gather(host(out), host(x), 0).wait();
    EXPECT_EQ(out, h) << "gather";
    out.assign(2, 0);
    backend.scatter(host(out), host(x), 0).wait();
    EXPECT_EQ(out, h) << "scatter";
    out.assign(2, 0);
    backend.all_to_all(host(out), host(x)).wait();
    EXPECT_EQ(out, h) << "all_to_all";
    out.assign(2, 0);
    const std::size_t counts[] = {2};
    backend.all_gather_v(host(out), host(x), counts).wait();
    EXPECT_EQ(out, h) << "all_gather_v";
    // In place on the device: all_to_all copies its input aside before the grouped calls.
    DeviceVector<float> d(std::vector<float>{1, 2, 3, 4});
    backend.all_to_all(buffer_of(d.tensor()), buffer_of(d.tensor())).wait();
    EXPECT_EQ(d.to_host(), (std::vector<float>{1, 2, 3, 4})) << "all_to_all in place";
    backend.all_reduce(buffer_of(d.tensor()), ReduceOp::mean).wait();  // ncclAvg
    EXPECT_EQ(d.to_host(), (std::vector<float>{1, 2, 3, 4})) << "all_reduce mean";
    return 0;
  });
}

}  // namespace
