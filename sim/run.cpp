// dist::sim::run: builds the World and each rank's context, runs the body on one thread per rank,
// and reports every rank's outcome.
#include "dist/sim/run.hpp"

#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "dist/errors.hpp"
#include "dist/sim/predict.hpp"
#include "sim/diagnostics.hpp"
#include "sim/fibers.hpp"
#include "sim/memory_budget.hpp"
#include "sim/op_pool.hpp"
#include "sim/rank_binding.hpp"
#include "sim/rank_context.hpp"
#include "sim/spin.hpp"
#include "sim/world.hpp"

namespace dist::sim {

namespace {
std::string fault_text(const Fault& f) {
  const std::string at = std::to_string(f.rank) + ", " + std::to_string(f.at_call);
  switch (f.kind) {
    case Fault::Kind::kill: return "Fault::kill(" + at + ")";
    case Fault::Kind::stall:
      return "Fault::stall(" + at + ", " + std::to_string(f.delay.count()) + "ms)";
    case Fault::Kind::fail: return "Fault::fail(" + at + ", \"" + f.message + "\")";
    case Fault::Kind::restart:
      return "Fault::restart(" + at + ", " + std::to_string(f.delay.count()) + "ms)";
  }
  return "Fault";
}
}  // namespace

std::string to_string(const Cluster& c) {
  std::string out = "Cluster{.nodes = " + std::to_string(c.nodes) +
                    ", .ranks_per_node = " + std::to_string(c.ranks_per_node) +
                    ", .timeout = " + std::to_string(c.timeout.count()) +
                    "ms, .seed = " + std::to_string(c.seed) + ", .schedule = " +
                    (c.schedule == Schedule::deterministic ? "deterministic" : "concurrent");
  if (!c.faults.empty()) {
    out += ", .faults = {";
    for (std::size_t i = 0; i < c.faults.size(); ++i)
      out += (i ? ", " : "") + fault_text(c.faults[i]);
    out += "}";
  }
  if (!c.trace.empty()) out += ", .trace = \"" + c.trace + "\"";
  if (!c.trace_ranks.empty()) out += ", .trace_ranks = {" + rank_list(c.trace_ranks) + "}";
  if (!c.fibers) out += ", .fibers = false";
  if (c.stack_size) out += ", .stack_size = " + std::to_string(c.stack_size);
  if (c.network) out += ", .network = " + c.network->name;
  return out + "}";
}

namespace {
void check_fault(const Fault& f, std::size_t index, int world_size) {
  const std::string where =
      "sim::run: Cluster.faults[" + std::to_string(index) + "] = " + fault_text(f);
  if (f.rank < 0 || f.rank >= world_size)
    throw InvalidArgument(where + ": rank " + std::to_string(f.rank) +
                          " is not a rank of the world of " + std::to_string(world_size));
  if (f.at_call < 1)
    throw InvalidArgument(where + ": at_call = " + std::to_string(f.at_call) +
                          " must be >= 1 (calls count from 1)");
  if (f.delay.count() < 0)
    throw InvalidArgument(where + ": delay = " + std::to_string(f.delay.count()) +
                          "ms must not be negative");
}
}  // namespace

namespace detail {
void check_cluster(const Cluster& c) {
  if (c.nodes < 1)
    throw InvalidArgument("sim::run: Cluster.nodes must be >= 1, got " + std::to_string(c.nodes));
  if (c.ranks_per_node < 1)
    throw InvalidArgument("sim::run: Cluster.ranks_per_node must be >= 1, got " +
                          std::to_string(c.ranks_per_node));
  const long long ranks = static_cast<long long>(c.nodes) * c.ranks_per_node;
  if (c.max_world_size < 1)
    throw InvalidArgument("sim::run: Cluster.max_world_size must be >= 1, got " +
                          std::to_string(c.max_world_size));
  if (ranks > c.max_world_size)
    throw InvalidArgument("sim::run: Cluster.nodes × ranks_per_node = " + std::to_string(c.nodes) +
                          " × " + std::to_string(c.ranks_per_node) + " = " + std::to_string(ranks) +
                          " ranks, more than Cluster.max_world_size = " +
                          std::to_string(c.max_world_size) + " (raise it for a larger world)");
  if (c.timeout.count() <= 0) throw InvalidArgument("sim::run: Cluster.timeout must be positive");
  for (const int r : c.trace_ranks)
    if (r < 0 || r >= ranks)
      throw InvalidArgument("sim::run: Cluster.trace_ranks holds " + std::to_string(r) +
                            ", not a rank of the world of " + std::to_string(ranks));
  for (std::size_t i = 0; i < c.faults.size(); ++i)
    check_fault(c.faults[i], i, static_cast<int>(ranks));
  if (c.network) {
    if (c.schedule != Schedule::deterministic)
      throw InvalidArgument(
          "sim::run: Cluster.network predicts in the deterministic schedule only (its clocks are "
          "virtual); set .schedule = dist::sim::Schedule::deterministic");
    check_network(*c.network);
  }
}
}  // namespace detail

namespace {
struct RankTask {
  World* world;
  core::Context* context;
  const std::function<void(int)>* body;
  Outcome outcome;
};

// The name of the exception class of an error code, as users catch it.
std::string_view error_class(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "InvalidArgument";
    case ErrorCode::not_initialized: return "NotInitialized";
    case ErrorCode::desync: return "DesyncError";
    case ErrorCode::deadlock: return "DeadlockError";
    case ErrorCode::timeout: return "TimeoutError";
    case ErrorCode::rank_failure: return "RankFailure";
    case ErrorCode::backend: return "BackendError";
    case ErrorCode::aborted: return "Aborted";
  }
  return "Error";
}

std::string describe_error(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return std::string(error_class(err.code())) + ": " + err.what();
  } catch (const std::bad_alloc& err) {
    return std::string("out of memory (") + err.what() + ")";
  } catch (const std::exception& err) {
    return std::string("exception: ") + err.what();
  } catch (...) {
    return "unknown exception";
  }
}

void* rank_main(void* arg) {
  auto* task = static_cast<RankTask*>(arg);
  const int rank = task->context->rank;
  task->outcome.rank = rank;
  // Named for debuggers and top, and for the tests' check that no rank thread outlives its run.
  if (!task->world->fibers())
    pthread_setname_np(pthread_self(), ("sim rank " + std::to_string(rank)).substr(0, 15).c_str());
  for (bool first = true;; first = false) {
    {
      core::ContextBinding bind(task->context);
      try {
        if (first) task->world->enter(rank);
        (*task->body)(rank);
        core::check_all_waited(*task->context->works, "rank " + std::to_string(rank) + " returned");
        check_joined(*task->context);
      } catch (...) {
        task->outcome.error = std::current_exception();
      }
      task->context->works->take();  // a failed rank's Works are let go on its own thread
    }
    if (!task->world->killed(rank)) break;
    // A Fault::restart killed the process: its replacement runs the function again.
    task->outcome.error = nullptr;
    replace_process(*task->world, task->context, rank, task->world->restart(rank));
  }
  try {
    task->outcome.message = task->outcome.error ? describe_error(task->outcome.error) : "ok";
    if (task->outcome.message.starts_with("out of memory"))
      task->outcome.message += "; " + out_of_memory_note(task->world->cluster());
  } catch (const std::bad_alloc&) {  // no memory left even for the message
    task->outcome.message = "out of memory";
  }
  task->world->finish(rank, task->outcome.error, task->outcome.message);
  return nullptr;
}

// The ranks that never started count as failed, so the started ones cannot wait on them.
void never_started(World& world, RankTask& task, int rank, const std::string& why) {
  task.outcome = {rank, std::make_exception_ptr(RankFailure(why, rank)), why};
  world.finish(rank, task.outcome.error, why);
}

// One OS thread per rank (concurrent mode, or Cluster::fibers = false).
void run_threads(World& world, std::vector<RankTask>& tasks) {
  const int n = world.size();
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (world.cluster().stack_size > 0) pthread_attr_setstacksize(&attr, world.cluster().stack_size);
  std::vector<pthread_t> threads;
  for (int r = 0; r < n; ++r) {
    pthread_t t;
    if (const int rc = pthread_create(&t, &attr, rank_main, &tasks[static_cast<std::size_t>(r)])) {
      const std::string why = std::string("could not start the rank thread: ") + std::strerror(rc) +
                              (rc == EAGAIN ? " (out of memory or over the OS's thread limit; a "
                                              "smaller Cluster::stack_size needs less)"
                                            : "");
      for (int k = r; k < n; ++k) never_started(world, tasks[static_cast<std::size_t>(k)], k, why);
      break;
    }
    threads.push_back(t);
  }
  pthread_attr_destroy(&attr);
  for (auto& t : threads) pthread_join(t, nullptr);
}

// Deterministic mode: every rank a fiber of this thread, resumed when the baton names it.
void run_fibers(World& world, std::vector<RankTask>& tasks) {
  Fibers fibers(world.size(), world.cluster().stack_size);
  world.use_fibers(&fibers);
  core::Context* const outside = core::exchange_binding(nullptr);
  fibers.run({
      .body = [&](int r) { rank_main(&tasks[static_cast<std::size_t>(r)]); },
      .next = [&] { return world.baton(); },
      // A rank's thread-locals: its context binding (rank_main binds it on its first run).
      .enter =
          [&](int r) {
    // The rank's own state, out of cache in a large world: its context and the world's
    // record of it, asked for with its frames.
    core::Context* const context = tasks[static_cast<std::size_t>(r)].context;
    world.prefetch_rank(r);
    prefetch_lines(context, sizeof(core::Context), true);
    core::exchange_binding(context);
      },
      .unstarted =
          [&](int r, const std::string& why) {
    never_started(world, tasks[static_cast<std::size_t>(r)], r, why);
      },
             .upcoming = [&](int r) { return world.upcoming(r); },
  });
  core::exchange_binding(outside);
  OpPool::unbind();
  world.use_fibers(nullptr);
}

ErrorCode run_error_code(const std::vector<Outcome>& outcomes) {
  std::optional<ErrorCode> consequence;
  for (const auto& o : outcomes) {
    if (o.ok()) continue;
    try {
      std::rethrow_exception(o.error);
    } catch (const RankFailure&) {
      if (!consequence) consequence = ErrorCode::rank_failure;
    } catch (const Error& e) {
      return e.code();
    } catch (...) {
      return ErrorCode::rank_failure;
    }
  }
  return consequence.value_or(ErrorCode::rank_failure);
}

[[noreturn]] void throw_run_error(const Cluster& cluster, std::vector<Outcome> outcomes) {
  int failed = 0;
  for (const auto& o : outcomes) failed += o.ok() ? 0 : 1;
  std::string msg = "dist::sim::run: " + std::to_string(failed) + " of " +
                    std::to_string(outcomes.size()) + " ranks failed\n  reproduce with " +
                    to_string(cluster);
  if (cluster.schedule == Schedule::concurrent)
    msg +=
        "\n  (the interleaving of a concurrent run is the OS's; set .schedule = "
        "dist::sim::Schedule::deterministic to replay it exactly from the seed)";
  msg += outcome_lines(outcomes);  // ranks with the same outcome share a line
  const ErrorCode code = run_error_code(outcomes);
  throw RunError(code, msg, std::move(outcomes));
}
}  // namespace

std::mt19937_64& rank_rng() { return core::random_engine(); }

namespace {
// Runs body on every rank; fills `prediction` (when given) from the network model, also when a
// rank failed.
void run_world(const Cluster& cluster, const std::function<void(int)>& body,
               Prediction* prediction) {
  detail::check_cluster(cluster);
  if (const auto why = refuse_memory(cluster))
    throw RunError(ErrorCode::backend,
                   "dist::sim::run: refused before starting: " + *why + "\n  reproduce with " +
                       to_string(cluster),
                   {});
  const int n = cluster.world_size();
  std::optional<World> built;
  std::vector<std::unique_ptr<core::Context>> contexts;
  std::vector<RankTask> tasks;
  try {
    World& world = built.emplace(cluster);
    tasks.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      contexts.push_back(make_context(world, r));
      tasks[static_cast<std::size_t>(r)] = {&world, contexts.back().get(), &body, {}};
    }
  } catch (const std::bad_alloc&) {
    contexts.clear();
    built.reset();
    throw RunError(ErrorCode::backend,
                   "dist::sim::run: out of memory while setting up " + std::to_string(n) +
                       " ranks, before any ran (" + out_of_memory_note(cluster) +
                       ")\n  reproduce with " + to_string(cluster),
                   {});
  }
  World& world = *built;
  const LiveRun live(contexts);  // from here on, an unbound thread's dist:: calls are refused
  if (runs_as_fibers(cluster)) run_fibers(world, tasks);
  else run_threads(world, tasks);
  world.write_trace();
  if (prediction && world.predictor()) *prediction = world.predictor()->report();
  std::vector<Outcome> outcomes;
  bool all_ok = true;
  for (auto& t : tasks) {
    all_ok = all_ok && t.outcome.ok();
    outcomes.push_back(std::move(t.outcome));
  }
  if (!all_ok) throw_run_error(cluster, std::move(outcomes));
}
}  // namespace

namespace detail {

void run_rank_threads(const Cluster& cluster, const std::function<void(int)>& body) {
  run_world(cluster, body, nullptr);
}

void run_predicting(const Cluster& cluster, const std::function<void(int)>& body,
                    Prediction& prediction) {
  if (!cluster.network)
    throw InvalidArgument(
        "dist::sim::run with a Prediction: the cluster has no network (set Cluster::network or "
        "start from a preset such as dist::sim::dgx_h100(nodes))");
  prediction = {};
  run_world(cluster, body, &prediction);
}

}  // namespace detail
}  // namespace dist::sim
