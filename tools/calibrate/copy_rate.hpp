// The node's copy rate: the network model's node_gbps on a CPU node, measured rather than fitted
// (with half-duplex ranks, two ranks' points cannot tell where it lies above their own rate).
#pragma once

namespace dist::calibrate {

// `threads` threads each copy a buffer of their own (64 MiB, paged in first) at once, from a
// common start: the GB/s they move together, the fastest of three runs. dist::InvalidArgument
// when threads < 1; dist::Error when the buffers cannot be had.
double measure_node_copy_gbps(int threads);

}  // namespace dist::calibrate
