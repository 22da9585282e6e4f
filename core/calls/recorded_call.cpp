// The Works of recorded calls (FinishedCall, RecordedCall) and the explanation of a failed call.
#include "core/calls/recorded_call.hpp"

#include <optional>
#include <string>

#include "core/calls/diagnosis.hpp"
#include "core/work_decorator.hpp"
#include "dist/errors.hpp"

namespace dist::core {

namespace {
// The exception being handled, rethrown as the same class with the call's site in front:
// "all_reduce(op=sum, float32 x 4) on world #2: gloo all_reduce on the group ... failed: ...".
[[noreturn]] void rethrow_at(const std::string& at) {
  try {
    throw;
  } catch (const RankFailure& e) {
    throw RankFailure(at + ": " + e.what(), e.failed_ranks());
  } catch (const TimeoutError& e) {
    throw TimeoutError(at + ": " + e.what(), e.missing_ranks());
  } catch (const BackendError& e) {
    throw BackendError(at + ": " + e.what(), e.vendor_code());
  }
}

// A DesyncError the backend found itself (mpi agrees on every call): the same text on every rank,
// the call's number in front.
[[noreturn]] void rethrow_desync(const GroupSite& site, std::uint64_t seq) {
  try {
    throw;
  } catch (const DesyncError& e) {
    if (seq == 0) throw;
    throw DesyncError("collective on " + site.name + " #" + std::to_string(seq) + ": " + e.what());
  }
}

}  // namespace

[[noreturn]] void explain_failure(const GroupSite& site, const CallDesc& call, std::uint64_t seq) {
  if (seq == 0) throw;
  const std::int64_t now = wall_clock_us();
  const CallRecord mine{call, seq, site.name, CallState::failed, now, now, 0, site.key};
  try {
    throw;
  } catch (const detail::WaitTimeout&) {  // the caller's own timeout: the operation goes on
  } catch (const TimeoutError& e) {
    if (e.missing_ranks().empty()) diagnose_timeout(site, mine, e.what());
  } catch (const RankFailure& e) {
    site.log->note_lost(e.failed_ranks());  // dist::reconfigure leaves them out
    diagnose_failure(site, mine, e.failed_rank());
  } catch (const DesyncError&) {
    rethrow_desync(site, seq);
  } catch (...) {
  }
  rethrow_at(describe(mine));
}

namespace {
// The call as errors name it: "all_reduce(op=sum, float32 x 4) on world #2".
std::string call_text(const GroupSite& site, std::uint64_t seq, const CallDesc& call) {
  CallRecord record;
  record.call = call;
  record.seq = seq;
  record.group = site.name;
  return describe(record);
}

class FinishedCall final : public detail::WorkState {
 public:
  FinishedCall(std::shared_ptr<const GroupSite> site, std::uint64_t seq, const CallDesc& call)
      : site_(std::move(site)), seq_(seq), call_(call) {}
  void wait() override {}
  bool is_completed() override { return true; }
  std::string describe() const override { return call_text(*site_, seq_, call_); }

 private:
  std::shared_ptr<const GroupSite> site_;
  std::uint64_t seq_;
  CallDesc call_;
};

// An operation in flight that the call layer recorded: its wait ends the record, and explains a
// failure as the call itself would have (`group`: the layer, for a numbered collective).
class RecordedCall final : public WorkDecorator {
 public:
  RecordedCall(std::shared_ptr<detail::WorkState> inner, std::shared_ptr<const GroupSite> site,
               std::uint64_t ticket, std::uint64_t seq, const CallDesc& call, const void* group)
      : WorkDecorator(std::move(inner)),
        site_(std::move(site)),
        ticket_(ticket),
        seq_(seq),
        call_(call),
        group_(group) {}

  void wait() override {
    wait_then(std::nullopt, [&](bool ok) { end(ok); });
  }
  void wait_for(std::chrono::milliseconds timeout) override {
    wait_then(timeout, [&](bool ok) { end(ok); });
  }
  const void* collective_of() const override { return group_; }
  std::string describe() const override { return call_text(*site_, seq_, call_); }

 private:
  // Called while a failed wait's exception is handled: explains it.
  void end(bool ok) {
    site_->log->recorder.end(ticket_, ok ? CallState::completed : CallState::failed);
    if (!ok) explain_failure(*site_, call_, seq_);
  }

  std::shared_ptr<const GroupSite> site_;
  std::uint64_t ticket_;
  std::uint64_t seq_;
  CallDesc call_;
  const void* group_;
};

}  // namespace

Work finished_call(std::shared_ptr<const GroupSite> site, std::uint64_t seq, const CallDesc& call) {
  return Work(std::make_shared<FinishedCall>(std::move(site), seq, call));
}

Work recorded_call(const Work& work, std::shared_ptr<const GroupSite> site, std::uint64_t ticket,
                   std::uint64_t seq, const CallDesc& call, const void* group) {
  return Work(
      std::make_shared<RecordedCall>(work.state(), std::move(site), ticket, seq, call, group));
}

}  // namespace dist::core
