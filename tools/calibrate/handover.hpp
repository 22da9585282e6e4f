// What it costs a process to hand its core to another: the network model's handover_us, paid per
// latency-bound step where a node runs more ranks than it has cores.
#pragma once

namespace dist::calibrate {

// Two processes pinned to one core (the caller's, its affinity restored after) take turns through
// a shared flag, each yielding the core until the other passes the turn back: the microseconds
// of one hand-over, the fastest of three runs of 20,000 turns. dist::TimeoutError past `limit_s`
// (the other process is killed), dist::Error when the processes cannot be made or pinned.
double measure_handover_us(double limit_s);

}  // namespace dist::calibrate
