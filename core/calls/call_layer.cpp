// The call layer: CallLayer wraps one group's backend (the Works of its calls: recorded_call.hpp).
#include "core/calls/call_layer.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "core/calls/call_of.hpp"
#include "core/calls/diagnosis.hpp"
#include "core/calls/recorded_call.hpp"
#include "core/group_text.hpp"
#include "core/init/rendezvous.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
class CallLayer final : public BackendImpl {
 public:
  CallLayer(std::shared_ptr<BackendImpl> inner, std::shared_ptr<const GroupSite> site)
      : inner_(std::move(inner)), site_(std::move(site)) {}
  // The last calls are in the store before the connections close: a peer that sees this rank
  // leave can tell a rank that left after a call which could not match (diagnose_failure).
  ~CallLayer() override { site_->log->publish(std::chrono::milliseconds(250)); }

  BackendImpl& inner() { return *inner_; }
  // The call layer of a group's backend (null: none): its site keyed under this group's.
  std::shared_ptr<BackendImpl> layer_over(std::shared_ptr<BackendImpl> child,
                                          const std::vector<int>& ranks, const std::string& suffix,
                                          std::chrono::milliseconds own_timeout = {});
  // A new key too: a status published before the restart must not read as the new calls.
  CallLog& log() const { return *site_->log; }
  void restart_numbering() {
    seq_ = 0;
    chain_ = 0;
    auto site = std::make_shared<GroupSite>(*site_);
    site->key += "'";
    site->log->recorder.retire_numbers(site->id, site->key);
    site->log->add_members(site->key, site->world_ranks);
    site_ = std::move(site);
  }

  dist::Backend kind() const override { return inner_->kind(); }
  std::shared_ptr<const std::vector<int>> shared_members() const override {
    return inner_->shared_members();
  }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Device device() const override { return inner_->device(); }
  bool reaches(Device where) const override { return inner_->reaches(where); }

  Work all_reduce(Buf data, ReduceOp op) override {
    return call(call_of::all_reduce(data, op), [&] { return inner_->all_reduce(data, op); });
  }
  Work broadcast(Buf data, int root) override {
    return call(call_of::broadcast(data, root), [&] { return inner_->broadcast(data, root); });
  }
  Work all_gather(Buf output, ConstBuf input) override {
    return call(call_of::all_gather(input), [&] { return inner_->all_gather(output, input); });
  }
  Work send(ConstBuf data, int dst, int tag) override {
    return call(call_of::send(data, dst, tag), [&] { return inner_->send(data, dst, tag); });
  }
  Work recv(Buf data, int src, int tag) override {
    return call(call_of::recv(data, src, tag), [&] { return inner_->recv(data, src, tag); });
  }
  bool receives_from_any_source() const override { return inner_->receives_from_any_source(); }
  Work barrier() override {
    return call(call_of::barrier(), [&] { return inner_->barrier(); });
  }
  Work reduce(Buf data, ReduceOp op, int root) override {
    return call(call_of::reduce(data, op, root), [&] { return inner_->reduce(data, op, root); });
  }
  Work gather(Buf output, ConstBuf input, int root) override {
    return call(call_of::gather(input, root), [&] { return inner_->gather(output, input, root); });
  }
  Work scatter(Buf output, ConstBuf input, int root) override {
    return call(call_of::scatter(output, root),
                [&] { return inner_->scatter(output, input, root); });
  }
  Work reduce_scatter(Buf output, ConstBuf input, ReduceOp op) override {
    return call(call_of::reduce_scatter(output, op),
                [&] { return inner_->reduce_scatter(output, input, op); });
  }
  Work all_to_all(Buf output, ConstBuf input) override {
    return call(call_of::all_to_all(input), [&] { return inner_->all_to_all(output, input); });
  }
  Work all_gather_v(Buf output, ConstBuf input, std::span<const std::size_t> counts) override {
    return call(call_of::all_gather_v(output, input, counts),
                [&] { return inner_->all_gather_v(output, input, counts); });
  }
  Work all_to_all_v(Buf output, ConstBuf input, std::span<const std::size_t> output_counts,
                    std::span<const std::size_t> input_counts) override {
    return call(call_of::all_to_all_v(input),
                [&] { return inner_->all_to_all_v(output, input, output_counts, input_counts); });
  }
  std::shared_ptr<BackendImpl> split(const std::vector<int>& ranks) override;
  std::shared_ptr<BackendImpl> split_local(const std::vector<int>& ranks) override {
    const int k = local_splits_[ranks]++;  // keyed by the list: the others do not count it
    return layer_over(inner_->split_local(ranks), ranks, local_group_key(ranks, k));
  }
  std::shared_ptr<BackendImpl> split_groups(const Layout& layout) override;
  void monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks) override;
  std::string recovery_refusal() const override { return inner_->recovery_refusal(); }
  void abort(const std::exception_ptr& why) override { inner_->abort(why); }
  bool shrink_aborts_parent() const override { return inner_->shrink_aborts_parent(); }
  std::shared_ptr<BackendImpl> shrink(const std::vector<int>& survivors,
                                      std::optional<std::chrono::milliseconds> timeout,
                                      bool abort_parent) override {
    auto inner = inner_->shrink(survivors, timeout, abort_parent);
    if (!inner) return nullptr;
    const int k = local_splits_[survivors]++;  // as split_local's: the excluded do not count it
    return layer_over(std::move(inner), survivors, local_group_key(survivors, k),
                      timeout.value_or(std::chrono::milliseconds{}));
  }

 private:
  template <class Issue>
  Work call(const CallDesc& d, Issue&& issue);
  void check_same_call(const CallDesc& mine, std::uint64_t seq);

  std::shared_ptr<BackendImpl> inner_;
  std::shared_ptr<const GroupSite> site_;
  std::uint64_t seq_ = 0;    // the group's collectives so far
  std::uint64_t chain_ = 0;  // their hash chain (chain_hash)
  int splits_ = 0;
  std::map<std::vector<int>, int> local_splits_;  // split_local's groups so far, per list
  std::uint64_t monitored_ = 0;  // the group's monitored barriers so far
};

// Every member sets its key of this barrier in the store and waits for the others' keys: the
// ranks whose keys are missing at the deadline are named, wherever they are stuck. The outcome is
// decided once in the store (the first compare_set of its verdict key), so a rank that arrives
// after the others gave up learns at once that the barrier failed, instead of passing it alone.
// Recorded as the group's next barrier() call.
void CallLayer::monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks) {
  const auto& store = site_->log->store;
  if (!store) return inner_->monitored_barrier(timeout, wait_all_ranks);
  const auto prefix_of = [&](std::uint64_t n) {
    return "monitored_barrier/" + site_->key + "/" + std::to_string(n) + "/";
  };
  (void)call(call_of::barrier(), [&] {  // a finished Work: the body ran to its end here
    const std::string prefix = prefix_of(++monitored_);
    std::vector<std::string> keys;
    for (const int r : site_->world_ranks) keys.push_back(prefix + std::to_string(r));
    store->set(prefix + std::to_string(site_->me), {}, timeout);
    bool all_came = true;
    try {
      store->wait(keys, timeout);
    } catch (const TimeoutError&) {  // who is missing (a store that does not answer raises)
      all_came = false;
    }
    std::string absent_ranks;
    if (!all_came) {
      const auto absent = store->missing(keys, std::min(timeout, std::chrono::milliseconds(3000)));
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (std::find(absent.begin(), absent.end(), keys[i]) != absent.end())
          absent_ranks += " " + std::to_string(site_->world_ranks[i]);
    }
    const std::string verdict = store->compare_set(
        prefix + "verdict", "", absent_ranks.empty() ? "passed" : "failed:" + absent_ranks);
    if (verdict == "passed") {
      // Once every rank reached this barrier, none still waits on the one before: this rank's
      // keys of that one go, so the store holds one barrier's keys per group however many ran.
      if (monitored_ > 1) {
        store->delete_key(prefix_of(monitored_ - 1) + std::to_string(site_->me));
        store->delete_key(prefix_of(monitored_ - 1) + "verdict");
      }
      return Work{};
    }
    std::vector<int> missing;
    std::istringstream ranks(verdict.substr(verdict.find(':') + 1));
    for (int r = 0; ranks >> r;) missing.push_back(r);
    if (!all_came) throw monitored_barrier_timeout(missing, wait_all_ranks, timeout);
    throw TimeoutError("monitored_barrier (timeout " + std::to_string(timeout.count()) +
                           " ms) failed before rank " + std::to_string(site_->me) +
                           " arrived: the others gave up waiting for " + ranks_phrase(missing),
                       missing);
  });
}

template <class Issue>
Work CallLayer::call(const CallDesc& d, Issue&& issue) {
  if (site_->log->desync_found()) site_->log->throw_desync();
  // DIST_DEBUG=detail: calls that differ raise before anything is numbered or recorded, on every
  // rank, so the group stays usable (and the cross-check has no divergence to find).
  if (!is_p2p(d.kind) && site_->check_calls) check_same_call(d, seq_ + 1);
  const std::uint64_t seq = is_p2p(d.kind) ? 0 : ++seq_;
  if (seq > 0) chain_ = chain_hash(chain_, d);
  FlightRecorder& recorder = site_->log->recorder;
  const std::uint64_t ticket = recorder.post(site_->id, seq, d, seq > 0 ? chain_ : 0);
  Work work;
  try {
    work = issue();
  } catch (...) {
    recorder.end(ticket, CallState::failed);
    explain_failure(*site_, d, seq);
  }
  if (!work.state()) {
    recorder.end(ticket, CallState::completed);
    return finished_call(site_, seq, d);
  }
  return recorded_call(work, site_, ticket, seq, d, seq > 0 ? this : nullptr);
}

// DIST_DEBUG=detail: every rank's call, all_gathered through the backend before the call itself.
void CallLayer::check_same_call(const CallDesc& mine, std::uint64_t seq) {
  struct Checked {
    CallDesc call;
    std::uint64_t seq;
  };
  const Checked own{mine, seq};
  std::vector<Checked> all(static_cast<std::size_t>(size()));
  const ConstBuf in{&own, sizeof own, DType::uint8, Device::cpu()};
  const Buf out{all.data(), sizeof own * all.size(), DType::uint8, Device::cpu()};
  inner_->all_gather(out, in).wait();
  for (const Checked& c : all) {
    const auto field = differing_field(all.front().call, c.call);
    if (field.empty()) continue;
    std::vector<RankCall> calls;
    for (std::size_t r = 0; r < all.size(); ++r)
      calls.push_back({site_->world_ranks[r], describe(all[r].call)});
    if (mine.kind == CallKind::split)  // not a numbered collective: named by what it is
      throw DesyncError("new_group on " + site_->name + ": ranks disagree on '" +
                        std::string(field) + "' (the list each passed):" + call_lines(calls));
    throw DesyncError(desync_message(site_->name, seq, field, calls));
  }
}

// DIST_DEBUG=detail: ranks whose lists differ raise a DesyncError on 'lists' before the backend
// splits (gloo's split does not communicate, so it would join whichever ranks named each other).
std::shared_ptr<BackendImpl> CallLayer::split(const std::vector<int>& ranks) {
  if (site_->check_calls) check_same_call(call_of::split(ranks), seq_);
  const int index = ++splits_;
  return layer_over(inner_->split(ranks), ranks, std::to_string(index));
}

std::shared_ptr<BackendImpl> CallLayer::split_groups(const Layout& layout) {
  const int index = ++splits_;
  auto child = inner_->split_groups(layout);
  if (!child || layout.color < 0) return nullptr;
  return layer_over(std::move(child), layout.own(),
                    std::to_string(index) + "-" + std::to_string(layout.color));
}

std::shared_ptr<BackendImpl> CallLayer::layer_over(std::shared_ptr<BackendImpl> child,
                                                   const std::vector<int>& ranks,
                                                   const std::string& suffix,
                                                   std::chrono::milliseconds own_timeout) {
  if (!child) return nullptr;
  auto site = std::make_shared<GroupSite>();
  site->log = site_->log;
  for (const int r : ranks)
    site->world_ranks.push_back(site_->world_ranks.at(static_cast<std::size_t>(r)));
  site->name = group_name(site->world_ranks);
  site->key = site_->key + "." + suffix;
  site->id = site->log->recorder.add_group(site->name, site->key);
  site->me = site_->me;
  site->check_calls = call_checks_enabled();
  site->own_timeout = own_timeout.count() > 0 ? own_timeout : site_->own_timeout;
  site->log->add_members(site->key, site->world_ranks);
  return std::make_shared<CallLayer>(std::move(child), std::move(site));
}
}  // namespace

bool call_checks_enabled() {
  auto value = get_env("DIST_DEBUG");
  if (!value) return false;
  std::transform(value->begin(), value->end(), value->begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return *value == "detail";
}

std::shared_ptr<BackendImpl> with_call_layer(std::shared_ptr<BackendImpl> world,
                                             const CallLayerSpec& spec) {
  auto site = std::make_shared<GroupSite>();
  site->log = std::make_shared<CallLog>(spec.store, spec.world_size, spec.rank, spec.timeout,
                                        FlightRecorder::default_capacity());
  site->name = "world";
  site->key = "w";
  site->id = site->log->recorder.add_group(site->name, site->key);
  for (int r = 0; r < spec.world_size; ++r) site->world_ranks.push_back(r);
  site->me = spec.rank;
  site->check_calls = call_checks_enabled();
  site->log->add_members(site->key, site->world_ranks);
  return std::make_shared<CallLayer>(std::move(world), std::move(site));
}

std::shared_ptr<BackendImpl> with_group_call_layer(BackendImpl& parent,
                                                   std::shared_ptr<BackendImpl> child,
                                                   const std::vector<int>& ranks,
                                                   const std::string& suffix,
                                                   std::chrono::milliseconds timeout) {
  auto* layer = dynamic_cast<CallLayer*>(&parent);
  return layer ? layer->layer_over(std::move(child), ranks, suffix, timeout) : child;
}

void restart_numbering(BackendImpl& backend) {
  if (auto* layer = dynamic_cast<CallLayer*>(&backend)) layer->restart_numbering();
}

void set_hosts(BackendImpl& backend, std::vector<std::string> hosts) {
  if (auto* layer = dynamic_cast<CallLayer*>(&backend)) layer->log().set_hosts(std::move(hosts));
}

std::vector<int> lost_ranks(BackendImpl& backend) {
  auto* layer = dynamic_cast<CallLayer*>(&backend);
  return layer ? layer->log().lost() : std::vector<int>{};
}

void forget_lost(BackendImpl& backend, const std::vector<int>& world_ranks) {
  if (auto* layer = dynamic_cast<CallLayer*>(&backend)) layer->log().forget_lost(world_ranks);
}

BackendImpl& without_call_layer(BackendImpl& backend) {
  auto* layer = dynamic_cast<CallLayer*>(&backend);
  return layer ? layer->inner() : backend;
}

}  // namespace dist::core
