// The call layer wraps every backend operation, by behaviour: each operation called on the layer
// reaches the backend under it as that same operation (not as the primitives a composed default
// would call) and is recorded once, as its own kind. A CallLayer missing a forwarding override,
// or forwarding to the wrong operation, fails here; wraps_every_operation.py checks the source.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <vector>

#include "core/calls/call_layer.hpp"
#include "core/calls/call_log.hpp"
#include "core/calls/flight_recorder.hpp"
#include "core/layout.hpp"
#include "core/store/hash_store.hpp"

namespace dist::core {
// A kind by name in gtest's messages.
void PrintTo(CallKind kind, std::ostream* os) { *os << to_string(kind); }
}  // namespace dist::core

namespace {

using namespace dist;
using namespace dist::core;
using namespace std::chrono_literals;

// Overrides every operation of BackendImpl, each noting its kind: none falls back to a composed
// default, so what it saw is what the layer forwarded.
class RecordingBackend final : public BackendImpl {
 public:
  explicit RecordingBackend(std::shared_ptr<std::vector<CallKind>> seen) : seen_(std::move(seen)) {}

  dist::Backend kind() const override { return dist::Backend::gloo; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Work all_reduce(Buf, ReduceOp) override { return saw(CallKind::all_reduce); }
  Work broadcast(Buf, int) override { return saw(CallKind::broadcast); }
  Work all_gather(Buf, ConstBuf) override { return saw(CallKind::all_gather); }
  Work send(ConstBuf, int, int) override { return saw(CallKind::send); }
  Work recv(Buf, int, int) override { return saw(CallKind::recv); }
  Work barrier() override { return saw(CallKind::barrier); }
  std::shared_ptr<BackendImpl> split(const std::vector<int>&) override {
    seen_->push_back(CallKind::split);
    return std::make_shared<RecordingBackend>(seen_);
  }
  std::shared_ptr<BackendImpl> split_groups(const Layout&) override {
    seen_->push_back(CallKind::split_groups);
    return std::make_shared<RecordingBackend>(seen_);
  }
  std::shared_ptr<BackendImpl> split_local(const std::vector<int>&) override {
    local_splits_ = true;
    return std::make_shared<RecordingBackend>(seen_);
  }
  Work reduce(Buf, ReduceOp, int) override { return saw(CallKind::reduce); }
  Work gather(Buf, ConstBuf, int) override { return saw(CallKind::gather); }
  Work scatter(Buf, ConstBuf, int) override { return saw(CallKind::scatter); }
  Work reduce_scatter(Buf, ConstBuf, ReduceOp) override { return saw(CallKind::reduce_scatter); }
  Work all_to_all(Buf, ConstBuf) override { return saw(CallKind::all_to_all); }
  Work all_to_all_v(Buf, ConstBuf, std::span<const std::size_t>,
                    std::span<const std::size_t>) override {
    return saw(CallKind::all_to_all_v);
  }
  Work all_gather_v(Buf, ConstBuf, std::span<const std::size_t>) override {
    return saw(CallKind::all_gather_v);
  }
  void monitored_barrier(std::chrono::milliseconds, bool) override { monitored_ = true; }

  bool local_splits_ = false;
  bool monitored_ = false;

 private:
  Work saw(CallKind kind) {
    seen_->push_back(kind);
    return {};
  }
  std::shared_ptr<std::vector<CallKind>> seen_;
};

// Calls the operation of `kind` on `layer`; a split returns the group's backend (null for the
// others).
std::shared_ptr<BackendImpl> call(BackendImpl& layer, CallKind kind) {
  std::vector<float> data(2), out(2);
  const Buf buf{data.data(), data.size(), DType::float32, Device::cpu()};
  const Buf to{out.data(), out.size(), DType::float32, Device::cpu()};
  const std::size_t counts[] = {2};
  switch (kind) {  // no default: a new kind without its case is a -Wswitch warning
    case CallKind::all_reduce: layer.all_reduce(buf, ReduceOp::sum).wait(); break;
    case CallKind::broadcast: layer.broadcast(buf, 0).wait(); break;
    case CallKind::reduce: layer.reduce(buf, ReduceOp::sum, 0).wait(); break;
    case CallKind::all_gather: layer.all_gather(to, buf).wait(); break;
    case CallKind::gather: layer.gather(to, buf, 0).wait(); break;
    case CallKind::scatter: layer.scatter(to, buf, 0).wait(); break;
    case CallKind::reduce_scatter: layer.reduce_scatter(to, buf, ReduceOp::sum).wait(); break;
    case CallKind::all_to_all: layer.all_to_all(to, buf).wait(); break;
    case CallKind::barrier: layer.barrier().wait(); break;
    case CallKind::split: return layer.split({0});
    case CallKind::send: layer.send(buf, 0, 0).wait(); break;
    case CallKind::recv: layer.recv(buf, 0, 0).wait(); break;
    case CallKind::all_gather_v: layer.all_gather_v(to, buf, counts).wait(); break;
    case CallKind::all_to_all_v: layer.all_to_all_v(to, buf, counts, counts).wait(); break;
    case CallKind::split_groups: return layer.split_groups(strided_layout(1, 1, 1, 0));
  }
  return nullptr;
}

// What the layer published of its calls when it closed (the store keeps it).
std::vector<CallRecord> published(Store& store) {
  return decode_records(store.get(status_key(0), 2s));
}

TEST(CallLayerWraps, EveryOperationReachesTheBackendAsItselfAndIsRecordedOnce) {
  for (int k = 0; k < call_kind_count; ++k) {
    const auto kind = static_cast<CallKind>(k);
    SCOPED_TRACE(std::string(to_string(kind)));
    auto store = std::make_shared<HashStore>();
    auto seen = std::make_shared<std::vector<CallKind>>();
    {
      auto layer = with_call_layer(std::make_shared<RecordingBackend>(seen), {store, 1, 0, 5s});
      if (auto group = call(*layer, kind)) {  // a split: the group is under a call layer too
        EXPECT_NE(&without_call_layer(*group), group.get());
        seen->clear();
        group->all_reduce({}, ReduceOp::sum).wait();
        EXPECT_EQ(*seen, std::vector<CallKind>{CallKind::all_reduce});
        continue;
      }
    }
    EXPECT_EQ(*seen, std::vector<CallKind>{kind});
    const auto records = published(*store);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].call.kind, kind);
    EXPECT_EQ(records[0].state, CallState::completed);
  }
}

TEST(CallLayerWraps, LocalSplitsAndMonitoredBarriersAreTheLayersToo) {
  auto store = std::make_shared<HashStore>();
  auto seen = std::make_shared<std::vector<CallKind>>();
  auto backend = std::make_shared<RecordingBackend>(seen);
  {
    auto layer = with_call_layer(backend, {store, 1, 0, 5s});
    auto group = layer->split_local({0});
    EXPECT_TRUE(backend->local_splits_);
    ASSERT_TRUE(group);
    EXPECT_NE(&without_call_layer(*group), group.get());
    // With a store, the layer meets in it and records a barrier; the backend is never asked.
    layer->monitored_barrier(1s, true);
    EXPECT_FALSE(backend->monitored_);
  }
  const auto records = published(*store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].call.kind, CallKind::barrier);
}

}  // namespace
