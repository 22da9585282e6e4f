// The ledger of Works not yet waited, the isend buffer checksum, and the errors they raise.
#include "core/work_ledger.hpp"

#include <cstring>
#include <utility>

#include "core/context.hpp"
#include "core/work_decorator.hpp"
#include "dist/detail/erased.hpp"
#include "dist/errors.hpp"

namespace dist::core {

std::uint64_t WorkLedger::add(std::shared_ptr<detail::WorkState> state) {
  std::lock_guard lock(mutex_);
  pending_.emplace(++next_, std::move(state));
  return next_;
}

void WorkLedger::remove(std::uint64_t ticket) {
  std::lock_guard lock(mutex_);
  pending_.erase(ticket);
}

std::vector<std::shared_ptr<detail::WorkState>> WorkLedger::take() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<detail::WorkState>> out;
  for (auto& [ticket, state] : pending_) out.push_back(std::move(state));
  pending_.clear();
  return out;
}

std::vector<std::shared_ptr<detail::WorkState>> WorkLedger::collectives_of(const void* group) {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<detail::WorkState>> out;
  if (!group) return out;
  for (const auto& [ticket, state] : pending_)
    if (state->collective_of() == group) out.push_back(state);
  return out;
}

std::string describe_work(const detail::WorkState& state) {
  std::string own = state.describe();
  return own.empty() ? "an asynchronous operation" : own;
}

std::uint64_t content_sum(const void* data, std::size_t bytes) {
  // FNV-1a over 8-byte words, then the tail bytes and the length: order-sensitive, and fast
  // enough to run at memory speed beside the copy it guards.
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = 0xcbf29ce484222325ULL;
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return (h ^ bytes) * 0x100000001b3ULL;
}

void check_all_waited(WorkLedger& ledger, const std::string& event) {
  const auto left = ledger.take();
  if (left.empty()) return;
  constexpr std::size_t shown = 4;
  std::string msg = event + " with " + std::to_string(left.size()) + " Work" +
                    (left.size() > 1 ? "s" : "") + " never waited: ";
  for (std::size_t i = 0; i < left.size() && i < shown; ++i)
    msg += (i ? ", " : "") + describe_work(*left[i]);
  if (left.size() > shown) msg += " and " + std::to_string(left.size() - shown) + " more";
  msg +=
      ". Call wait() on every Work (or see is_completed() return true) first: until then the "
      "operation may still read or write its buffers, and its error is lost";
  throw InvalidArgument(msg);
}

}  // namespace dist::core

namespace dist::core {

namespace {
// A Work handed to the user by an *_async call, isend or irecv: in its rank's ledger until it is
// waited or seen complete, and for an isend with the checksum of its buffer at the call.
class UnwaitedWork final : public WorkDecorator {
 public:
  // `check_send_buffers`: the rank's setting (Context::check_send_buffers).
  UnwaitedWork(std::shared_ptr<detail::WorkState> inner, std::weak_ptr<WorkLedger> ledger,
               bool check_send_buffers)
      : WorkDecorator(std::move(inner)),
        ledger_(std::move(ledger)),
        check_send_buffers_(check_send_buffers) {}
  void entered(std::uint64_t ticket) { ticket_ = ticket; }
  // An isend's buffer, checksummed when the rank checks send buffers and it is host memory.
  void take_checksum(detail::ConstBufferRef data) {
    if (!check_send_buffers_ || !data.device.is_cpu()) return;
    send_data_ = data.data;
    send_bytes_ = data.bytes();
    send_sum_ = content_sum(data.data, data.bytes());
  }

  void wait() override {
    wait_then(std::nullopt, [&](bool ok) { finish(ok); });
  }
  void wait_for(std::chrono::milliseconds timeout) override {
    wait_then(timeout, [&](bool ok) { finish(ok); });
  }
  bool is_completed() override {
    const bool done = WorkDecorator::is_completed();
    if (done) finish(true);
    return done;
  }
  // Unwinding past the Work (dist::Work::~Work): nor is it a Work the rank forgot to wait.
  void abandon() noexcept override {
    WorkDecorator::abandon();
    try {
      finish(false);
    } catch (...) {
    }
  }

 private:
  // Leaves the ledger; with `check_buffer`, an isend whose buffer changed since the call raises
  // InvalidArgument.
  void finish(bool check_buffer) {
    if (const auto ledger = ledger_.lock(); ledger && ticket_ != 0)
      ledger->remove(std::exchange(ticket_, 0));
    if (!check_buffer || !send_data_) return;
    const auto* data = std::exchange(send_data_, nullptr);
    if (content_sum(data, send_bytes_) == send_sum_) return;
    throw InvalidArgument(describe_work(*this) +
                          ": its buffer changed between the isend and the end of its wait() (the "
                          "checksum differs); the receiver may have got either contents. Keep a "
                          "send buffer untouched until wait() returns");
  }

  std::weak_ptr<WorkLedger> ledger_;
  bool check_send_buffers_;
  std::uint64_t ticket_ = 0;         // 0: out of the ledger
  const void* send_data_ = nullptr;  // null: no checksum taken
  std::size_t send_bytes_ = 0;
  std::uint64_t send_sum_ = 0;
};

// Starts `work` and enters it in the calling rank's ledger, replacing it with its decorator, which
// is returned (null, `work` unchanged, without a state or a distributed context).
std::shared_ptr<UnwaitedWork> enter(Work& work) {
  if (!work.state()) return nullptr;
  work.state()->start();
  Context* context = current_context();
  if (!context) return nullptr;
  auto unwaited =
      std::make_shared<UnwaitedWork>(work.state(), context->works, context->check_send_buffers);
  unwaited->entered(context->works->add(unwaited));
  work = Work(unwaited);
  return unwaited;
}
}  // namespace

}  // namespace dist::core

namespace dist::detail {

Work track_unwaited(Work work) {
  core::enter(work);
  return work;
}

Work track_unwaited_send(Work work, ConstBufferRef data) {
  if (const auto unwaited = core::enter(work)) unwaited->take_checksum(data);
  return work;
}

}  // namespace dist::detail
