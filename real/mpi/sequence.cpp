// Sequence: posting each collective's steps in call order, and finishing each step.
#include "real/mpi/sequence.hpp"

#include <cstring>
#include <string>

#include "core/group_text.hpp"
#include "dist/errors.hpp"

namespace dist::real {

namespace {
using Step = Collective::Step;

// Whether `c` has posted its last MPI call, so the next collective may post its first.
bool last_step_posted(const Collective& c) {
  return c.posted && (c.step == Step::data || (c.step == Step::declare && c.failing));
}

std::uint64_t* words(Scratch& s) { return reinterpret_cast<std::uint64_t*>(s.data()); }
}  // namespace

void Sequence::start(std::shared_ptr<Collective> c) {
  std::lock_guard lock(mutex_);
  c->index = ++started_;
  if (broken_) return fail(*c, broken_);
  queue_.push_back(std::move(c));
  advance_locked();
}

bool Sequence::advance(const Collective& c) {
  std::lock_guard lock(mutex_);
  if (c.step != Step::done) advance_locked();
  return c.step == Step::done;
}

bool Sequence::wait(const Collective& c, Clock::time_point deadline) {
  const auto start = Clock::now();
  for (;;) {
    if (advance(c)) return true;
    if (Clock::now() >= deadline) return false;
    poll_pause(start);
  }
}

bool Sequence::give_up(std::exception_ptr why) {
  std::lock_guard lock(mutex_);
  return give_up_locked(std::move(why));
}

bool Sequence::give_up_locked(std::exception_ptr why) {
  bool pending = false;
  for (auto& c : queue_) {
    if (c->posted && c->request != MPI_REQUEST_NULL) {
      abandon(c->request, std::move(c->step == Step::data ? c->scratch : c->control), true);
      c->request = MPI_REQUEST_NULL;
      pending = true;
    }
    c->posted = false;
    if (c->step != Step::done) fail(*c, why);
  }
  queue_.clear();
  if (!broken_) broken_ = std::move(why);
  return pending;
}

void Sequence::fail(Collective& c, std::exception_ptr error) {
  c.error = std::move(error);
  c.step = Step::done;
  c.scratch.clear();
  c.control.clear();
}

void Sequence::advance_locked() {
  for (bool moved = true; moved && !queue_.empty();) {
    moved = false;
    for (auto& c : queue_) {  // what completed
      if (!c->posted) continue;
      int done = 0;
      MPI_Status status{};
      int code = MPI_SUCCESS;
      {
        auto lock = mpi_lock();
        code = MPI_Test(&c->request, &done, &status);
      }
      if (code != MPI_SUCCESS) return break_on(code, *c);
      if (!done) continue;
      c->posted = false;
      c->request = MPI_REQUEST_NULL;
      if (c->step == Step::data) c->status = status;
      finish_step(*c);
      moved = true;
    }
    for (auto& c : queue_) {  // what may be posted, in call order
      if (c->step == Step::done || last_step_posted(*c)) continue;
      if (c->posted) break;  // a step whose outcome decides what this collective posts next
      if (!post(*c)) return;
      moved = true;
      if (!last_step_posted(*c)) break;
    }
    while (!queue_.empty() && queue_.front()->step == Step::done) queue_.pop_front();
  }
}

bool Sequence::post(Collective& c) {
  const std::size_t p = world_ranks_.size();
  int code = MPI_SUCCESS;
  {
    auto lock = mpi_lock();
    switch (c.step) {
      case Step::agree: {
        const Agreement mine = agreement_of(c.call);
        c.control = Scratch(sizeof mine);
        std::memcpy(c.control.data(), mine.data(), sizeof mine);
        code = MPI_Iallreduce(MPI_IN_PLACE, c.control.data(), static_cast<int>(mine.size()),
                              MPI_UINT64_T, MPI_MAX, comm_, &c.request);
        break;
      }
      case Step::splits:
        c.control = Scratch(2 * p * sizeof(std::uint64_t));
        std::memcpy(c.control.data(), c.sends.data(), p * sizeof(std::uint64_t));
        code = MPI_Ialltoall(words(c.control), 1, MPI_UINT64_T, words(c.control) + p, 1,
                             MPI_UINT64_T, comm_, &c.request);
        break;
      case Step::declare: {
        constexpr int n = sizeof(Declared) / sizeof(std::uint64_t);
        c.control = Scratch((p + 1) * sizeof(Declared));
        std::memcpy(c.control.data(), &c.declared, sizeof(Declared));
        code = MPI_Iallgather(words(c.control), n, MPI_UINT64_T, words(c.control) + n, n,
                              MPI_UINT64_T, comm_, &c.request);
        break;
      }
      case Step::data: code = c.post(&c.request); break;
      case Step::done: return true;
    }
  }
  if (code != MPI_SUCCESS) {
    break_on(code, c);
    return false;
  }
  c.posted = true;
  return true;
}

void Sequence::break_on(int code, const Collective& c) {
  try {
    throw_mpi_error(code, std::string(core::to_string(c.call.kind)) + " on the " +
                              core::group_text(world_ranks_));
  } catch (...) {
    give_up_locked(std::current_exception());
  }
}

void Sequence::finish_step(Collective& c) {
  const std::size_t p = world_ranks_.size();
  switch (c.step) {
    case Step::agree: {
      Agreement reduced{};
      std::memcpy(reduced.data(), c.control.data(), sizeof reduced);
      c.control.clear();
      c.declared.call = call_words(c.call);
      if (!agreed(c.call, reduced)) {
        c.failing = true;
        c.step = Step::declare;
      } else if (c.call.kind == core::CallKind::all_to_all_v) {
        c.step = Step::splits;
      } else {
        c.step = c.post ? Step::data : Step::done;
      }
      return;
    }
    case Step::splits: {
      const std::uint64_t* received = words(c.control) + p;
      for (std::size_t j = 0; j < p; ++j) {
        if (received[j] == c.expects[j]) continue;
        c.declared.split_peer = j + 1;
        c.declared.peer_sends = received[j];
        c.declared.rank_expects = c.expects[j];
        break;
      }
      c.control.clear();
      c.step = Step::declare;
      return;
    }
    case Step::declare: {
      const std::span<const Declared> records(
          reinterpret_cast<const Declared*>(c.control.data()) + 1, p);
      bool disagree = c.failing;
      for (const Declared& d : records) disagree = disagree || d.split_peer != 0;
      if (disagree)
        return fail(c, std::make_exception_ptr(DesyncError(disagreement(records, world_ranks_))));
      c.control.clear();
      c.step = Step::data;
      return;
    }
    case Step::data: c.step = Step::done; return;
    case Step::done: return;
  }
}

}  // namespace dist::real
