// ProcessBackend: every rank a separate process started by distrun, on gloo ("gloo_procs") or on
// nccl ("nccl_procs", process p on GPU p). Every process runs the same cases (same RC_PARAMS
// seed); a case's ranks are the first k processes, and all processes exchange every rank's
// result, so all reach the same verdict.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.hpp"
#include "dist/objects.hpp"
#include "props/backends.hpp"
#include "props/process_cluster.hpp"
#include "props/scratch.hpp"
#include "real/registry.hpp"

namespace dist {
// The half-precision types travel in results as their bits.
template <class Archive>
void serialize(Archive& ar, float16& h) {
  ar(h.bits);
}
template <class Archive>
void serialize(Archive& ar, bfloat16& h) {
  ar(h.bits);
}
}  // namespace dist

namespace props {

namespace procs {
// One process's account of a case, sent to every process.
struct CaseReport {
  std::string step;  // which case of which test; must be the same on every process
  bool ran = false;  // this process was one of the case's ranks
  bool ok = true;
  std::string result;  // the rank's return value, serialized
  int code = -1;       // the dist::ErrorCode it failed with, or -1
  int failed_rank = -1;
  std::string message;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(step, ran, ok, result, code, failed_rank, message);
  }
};

template <class R>
inline constexpr bool sendable =
    cereal::traits::is_output_serializable<R, dist::detail::ObjectOutputArchive>::value &&
    cereal::traits::is_input_serializable<R, dist::detail::ObjectInputArchive>::value;

template <class T>
std::string encode(const T& value) {
  const auto bytes = dist::detail::to_bytes(value);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
template <class T>
T decode(const std::string& text, int from) {
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  return dist::detail::from_bytes<T>(std::span(data, text.size()), "props process", from);
}

// The current test's full name ("Suite/gloo_procs.Property").
inline std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : "(no test)";
}

// Runs fn as rank `cluster.rank()` of case `id`'s world and records how it ended in `report`.
template <class F>
void run_rank(Cluster& cluster, dist::Backend backend, std::uint64_t id, const WorldShape& shape,
              F& fn, CaseReport& report) {
  std::exception_ptr error;
  try {
    auto context = cluster.open_case_world(backend, id, shape.size(), shape.ranks_per_node);
    dist::core::ContextBinding binding(context.get());
    report.result = encode(fn());
  } catch (...) {  // the case world is gone by now, so its peers see this rank leave
    error = std::current_exception();
  }
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    report.message = e.what();
  } catch (...) {
    report.message = "a non-standard exception";
  }
  const RankOutcome o = detail::outcome_of(error, report.message);
  report.ok = false;
  report.code = o.code ? static_cast<int>(*o.code) : -1;
  report.failed_rank = o.failed_rank;
}

// Every process's report of the case, after checking they all ran the same case.
inline std::vector<CaseReport> exchange_reports(Cluster& cluster, const CaseReport& mine) {
  std::vector<std::string> texts;
  try {
    texts = cluster.exchange(encode(mine));
  } catch (const std::exception& e) {
    abandon("lost the other processes after " + mine.step + ": " + e.what());
  }
  std::vector<CaseReport> reports;
  std::string labels;
  bool same = true;
  for (std::size_t p = 0; p < texts.size(); ++p) {
    reports.push_back(decode<CaseReport>(texts[p], static_cast<int>(p)));
    same = same && reports.back().step == mine.step;
    labels += "\n  process " + std::to_string(p) + ": " + reports.back().step;
  }
  if (!same) abandon("the processes are out of step (did they get one RC_PARAMS seed?):" + labels);
  return reports;
}

// The ranks' results in rank order, or the RunFailure naming every rank's outcome.
template <class R>
std::vector<R> results_of(const std::vector<CaseReport>& reports, int k) {
  std::vector<RankOutcome> outcomes;
  std::string what = "run on " + std::to_string(k) + " processes failed:";
  bool failed = false;
  for (int r = 0; r < k; ++r) {
    const CaseReport& c = reports[static_cast<std::size_t>(r)];
    RankOutcome o{.ok = c.ok, .code = std::nullopt, .failed_rank = c.failed_rank,
                  .message = c.message};
    if (c.code >= 0) o.code = static_cast<dist::ErrorCode>(c.code);
    if (!c.ok) {
      failed = true;
      what += "\n  rank " + std::to_string(r) + ": " + c.message;
    }
    outcomes.push_back(std::move(o));
  }
  if (failed) throw RunFailure(what, std::move(outcomes));
  std::vector<R> out;
  for (int r = 0; r < k; ++r) out.push_back(decode<R>(reports[static_cast<std::size_t>(r)].result, r));
  return out;
}
}  // namespace procs

// One process per rank (distrun -n W, or mpirun -n W for mpi): a case on k <= W ranks runs on
// processes 0..k-1, with local groups as init_dist would make them; cases on more than W ranks
// are discarded.
// gloo_procs: gloo over TCP loopback, 8% of the budget, so the suite keeps to CI's time (about
// 20 s). nccl_procs: nccl, process p on GPU p, the world's unique id through the launcher's TCP
// store as in production; cases on more ranks than GPUs are discarded too, and where nccl cannot
// run every test skips saying why. mpi_procs: the mpi backend, every process a rank of mpirun's
// MPI world, each case world a communicator over the first k of them; it skips outside mpirun.
// MPI's shared-memory transport is fast, so it runs 25% of the budget (about 10 s on 4 processes).
template <dist::Backend K>
struct ProcessBackend {
  static std::string name() { return std::string(dist::to_string(K)) + "_procs"; }
  static constexpr Capabilities capabilities =
      detail::real_capabilities(K, K == dist::Backend::mpi ? 25 : 8);
  // Why a rank per process cannot run here: the backend's own reason, or a launcher it needs.
  static const dist::real::BackendEntry& entry() { return dist::real::backend_entry(K, "props"); }
  static std::string unavailable() {
    if (std::string why = entry().unavailable(1); !why.empty()) return why;
    if (entry().launcher == "mpi" && !procs::under_mpirun())
      return "its processes must be mpirun's: DIST_PROPS_PROCS_BACKEND=" + name() +
             " props/run_procs.sh";
    return "";
  }
  // A process per rank (the launcher's world size), each within what the backend runs here
  // (nccl: a GPU per rank). A backend whose ranks are never threads (mpi) answers for ranks in
  // one process, which is not what a world of processes asks: it runs as many as were launched.
  static int max_ranks() {
    if (!entry().threads) return procs::launched_processes();
    return std::min(detail::max_ranks_here(K), procs::launched_processes());
  }
  // Why a world of `ranks` processes cannot run here ("" when it can).
  static std::string unavailable_for(int ranks) {
    return entry().unavailable(entry().threads ? ranks : 1);
  }

  template <class F>
  static auto run(const WorldShape& shape, F&& fn) {
    using R = decltype(fn());
    static_assert(procs::sendable<R>,
                  "a rank per process sends every rank's result to every process: the property's "
                  "result type needs a cereal serialize() (ranks must not share memory)");
    procs::Cluster& cluster = procs::Cluster::get();
    if (shape.size() > cluster.size())
      RC_DISCARD(name() + ": " + std::to_string(shape.size()) + " ranks, but only " +
                 std::to_string(cluster.size()) + " processes");
    if (const std::string why = unavailable_for(shape.size()); !why.empty())
      RC_DISCARD(name() + ": " + why);
    const std::uint64_t id = cluster.next_case();
    std::ostringstream step;
    step << "case " << id << " of " << procs::test_name() << " on " << shape;
    procs::CaseReport mine;
    mine.step = step.str();
    if (cluster.rank() < shape.size()) {
      mine.ran = true;
      procs::run_rank(cluster, K, id, shape, fn, mine);
    }
    return procs::results_of<R>(procs::exchange_reports(cluster, mine), shape.size());
  }
};
static_assert(BackendUnderTest<GlooProcessBackend>);
static_assert(BackendUnderTest<NcclProcessBackend>);
static_assert(BackendUnderTest<MpiProcessBackend>);

// The suites of a rank per process: they skip outside distrun (and nccl_procs where nccl cannot
// run); otherwise all processes start each test together (naming their scratch paths after
// process 0), and agree on its verdict at the end.
template <dist::Backend K>
class BackendSuite<ProcessBackend<K>> : public ::testing::Test {
 protected:
  void SetUp() override {
    using B = ProcessBackend<K>;
    if (!selected(B::name())) GTEST_SKIP() << B::name() << " is not in DIST_PROPS_BACKENDS";
    if (!procs::under_launcher())
      GTEST_SKIP() << B::name() << " runs each rank as a process; run under distrun (mpirun for "
                   << "mpi_procs): " << procs::how_to_run;
    if (const std::string why = unavailable_reason<B>(); !why.empty())
      GTEST_SKIP() << B::name() << " cannot run here: " << why;
    const auto seed = rc::detail::configuration().testParams.seed;
    auto& cluster = procs::Cluster::get();
    cluster.require_in_step(
        "start of " + procs::test_name() + " with seed " + std::to_string(seed),
        "(pass one RC_PARAMS=seed=N to every process)");
    // Readies every process (mpi: MPI_Init is collective over mpirun's processes, and a case
    // world may use only some of them).
    dist::real::backend_entry(K, "props").prepare(cluster.rank());
    active_ = true;
    current_case_percent() = B::capabilities.case_percent;
    current_max_ranks() = max_ranks_of<B>();
    run_leader_pid() = cluster.first_pid();
  }
  void TearDown() override {
    current_case_percent() = 100;
    current_max_ranks() = unbounded_ranks;
    run_leader_pid() = 0;
    if (!active_) return;
    auto& cluster = procs::Cluster::get();
    cluster.require_in_step("end of " + procs::test_name(), "at the end of a test");
    const std::string verdict = HasFailure() ? "failed" : "passed";
    std::vector<std::string> verdicts;
    try {
      verdicts = cluster.exchange(verdict);
    } catch (const std::exception& e) {
      procs::abandon("lost the other processes at the end of a test: " + std::string(e.what()));
    }
    std::string all;
    for (std::size_t p = 0; p < verdicts.size(); ++p)
      all += "\n  process " + std::to_string(p) + ": " + verdicts[p];
    if (std::count(verdicts.begin(), verdicts.end(), verdict) != std::ssize(verdicts))
      ADD_FAILURE() << "the processes disagree on the verdict (a property that depends on the "
                       "process it runs in):"
                    << all;
  }

 private:
  bool active_ = false;
};

}  // namespace props
