// The ledger of Works not yet waited, the isend buffer checksum, and the errors they raise.
#include "core/work_ledger.hpp"

#include <cstring>

#include "core/calls/call_log.hpp"
#include "core/context.hpp"
#include "dist/detail/erased.hpp"
#include "dist/errors.hpp"

namespace dist::core {

void WorkLedger::add(const std::shared_ptr<detail::WorkState>& state) {
  std::lock_guard lock(mutex_);
  state->issued.ticket = ++next_;
  pending_.emplace(next_, state);
}

void WorkLedger::remove(detail::WorkState& state) {
  std::lock_guard lock(mutex_);
  pending_.erase(std::exchange(state.issued.ticket, 0));
}

std::vector<std::shared_ptr<detail::WorkState>> WorkLedger::take() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<detail::WorkState>> out;
  for (auto& [ticket, state] : pending_) {
    state->issued.ticket = 0;
    out.push_back(std::move(state));
  }
  pending_.clear();
  return out;
}

std::vector<std::shared_ptr<detail::WorkState>> WorkLedger::collectives_of(const void* group) {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<detail::WorkState>> out;
  if (!group) return out;
  for (const auto& [ticket, state] : pending_)
    if (state->collective_of == group) out.push_back(state);
  return out;
}

std::string describe_work(const detail::WorkState& state) {
  if (const auto& r = state.recorded; r.site) {
    CallRecord record;
    record.call = r.call;
    record.seq = r.seq;
    record.group = r.site->name;
    return describe(record);
  }
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

void finish_issued(detail::WorkState& state, bool check_buffer) {
  auto& issued = state.issued;
  if (auto ledger = issued.ledger.lock()) ledger->remove(state);
  issued.ticket = 0;
  if (!check_buffer || !issued.send_data) return;
  const auto* data = std::exchange(issued.send_data, nullptr);
  if (content_sum(data, issued.send_bytes) == issued.send_sum) return;
  throw InvalidArgument(describe_work(state) +
                        ": its buffer changed between the isend and the end of its wait() (the "
                        "checksum differs); the receiver may have got either contents. Keep a send "
                        "buffer untouched until wait() returns");
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

namespace dist::detail {

namespace {
Work enter(Work work, core::Context*& context) {
  context = core::current_context();
  if (!work.state()) return work;
  work.state()->start();
  if (!context) return work;
  work.state()->issued.ledger = context->works;
  context->works->add(work.state());
  return work;
}
}  // namespace

Work track_unwaited(Work work) {
  core::Context* context = nullptr;
  return enter(std::move(work), context);
}

Work track_unwaited_send(Work work, ConstBufferRef data) {
  core::Context* context = nullptr;
  work = enter(std::move(work), context);
  if (work.state() && context && context->check_send_buffers && data.device.is_cpu()) {
    auto& issued = work.state()->issued;
    issued.send_data = data.data;
    issued.send_bytes = data.bytes();
    issued.send_sum = core::content_sum(data.data, data.bytes());
  }
  return work;
}

}  // namespace dist::detail
