// Chrome-trace (Perfetto) output of a sim run: its records, written by core's Chrome-trace JSON.
#include "sim/trace.hpp"

#include <algorithm>
#include <fstream>

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

Trace::Trace(const std::vector<int>& ranks, int world_size)
    : traced_(static_cast<std::size_t>(std::max(world_size, 0)), ranks.empty()) {
  for (const int r : ranks) traced_[static_cast<std::size_t>(r)] = true;
}

void Trace::record_one(const Op& op, std::size_t i, double end_us, const std::string& outcome) {
  if (op.participants[i] < 0 || !traced_[static_cast<std::size_t>(op.participants[i])]) return;
  const Call& c = op.calls[i];
  TraceRecord r;
  r.rank = op.participants[i];
  r.group = op.comm ? op.comm->name : "";
  r.seq = op.seq;
  r.kind = std::string(to_string(c.kind));
  r.call = c.describe();
  r.bytes = c.count * dtype_size(c.dtype);
  r.start_us = c.start_us;
  // A chain's ranks end one by one (a predicting run's broadcast).
  r.end_us =
      outcome == "ok" && i < op.model_ends.size() ? std::max(op.model_ends[i], c.start_us) : end_us;
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

void Trace::write(const std::string& path) const {
  std::vector<int> tracks;  // the ranks traced, in rank order
  for (std::size_t r = 0; r < traced_.size(); ++r)
    if (traced_[r]) tracks.push_back(static_cast<int>(r));
  const std::string text = core::chrome_trace_json("dist::sim", tracks, records_);
  std::ofstream out(path);
  out << text;
  if (!out) throw Error(ErrorCode::backend, "sim: cannot write the trace to '" + path + "'");
}

}  // namespace dist::sim
