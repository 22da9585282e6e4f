// Chrome-trace (Perfetto) output of a sim run, written with nlohmann::json.
#include "sim/trace.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "dist/errors.hpp"
#include "sim/communicator.hpp"

namespace dist::sim {

std::string outcome_of(const std::exception_ptr& error) {
  if (!error) return "ok";
  try {
    std::rethrow_exception(error);
  } catch (const DesyncError&) {
    return "DesyncError";
  } catch (const DeadlockError&) {
    return "DeadlockError";
  } catch (const TimeoutError&) {
    return "TimeoutError";
  } catch (const RankFailure&) {
    return "RankFailure";
  } catch (const BackendError&) {
    return "BackendError";
  } catch (const Error&) {
    return "Error";
  } catch (...) {
    return "exception";
  }
}

void Trace::record_one(const Op& op, std::size_t i, double end_us, const std::string& outcome) {
  const Call& c = op.calls[i];
  TraceRecord r;
  r.rank = op.participants[i];
  r.group = op.comm ? op.comm->name : "";
  r.seq = op.seq;
  r.kind = std::string(to_string(c.kind));
  r.call = c.describe();
  r.bytes = c.count * dtype_size(c.dtype);
  r.start_us = c.start_us;
  r.end_us = end_us;
  r.outcome = outcome;
  if (op.p2p) {
    r.flow = op.id;
    r.flow_start = c.kind == OpKind::send;
  }
  records_.push_back(std::move(r));
}

void Trace::record_op(const Op& op, double end_us, const std::string& outcome) {
  for (std::size_t i = 0; i < op.participants.size(); ++i)
    if (op.arrived[i]) record_one(op, i, end_us, outcome);
}

namespace {
nlohmann::json slice(const TraceRecord& r) {
  return {{"name", r.kind},
          {"cat", r.flow ? "p2p" : "collective"},
          {"ph", "X"},
          {"ts", r.start_us},
          {"dur", std::max(r.end_us - r.start_us, 0.0)},
          {"pid", 0},
          {"tid", r.rank},
          {"args",
           {{"call", r.call},
            {"group", r.group},
            {"seq", r.seq},
            {"bytes", r.bytes},
            {"outcome", r.outcome}}}};
}

// A flow arrow from the send's slice to the recv's slice.
nlohmann::json flow_point(const TraceRecord& r) {
  nlohmann::json e = {{"name", "p2p"}, {"cat", "p2p"}, {"id", r.flow}, {"pid", 0}, {"tid", r.rank}};
  e["ph"] = r.flow_start ? "s" : "f";
  e["ts"] = r.flow_start ? r.start_us : r.end_us;
  if (!r.flow_start) e["bp"] = "e";
  return e;
}
}  // namespace

void Trace::write(const std::string& path, int world_size) const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0},
                    {"args", {{"name", "dist::sim"}}}});
  for (int r = 0; r < world_size; ++r)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", r},
                      {"args", {{"name", "rank " + std::to_string(r)}}}});
  for (const auto& r : records_) {
    events.push_back(slice(r));
    if (r.flow && r.outcome == "ok") events.push_back(flow_point(r));
  }
  std::ofstream out(path);
  out << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump(1) << "\n";
  if (!out) throw Error(ErrorCode::backend, "sim: cannot write the trace to '" + path + "'");
}

}  // namespace dist::sim
