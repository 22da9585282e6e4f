// nccl's instantiation of the conformance suite (testing/conformance/): ranks as threads, one GPU
// each, with data also on the GPU; every case skips, saying why, without two GPUs.
#include <algorithm>
#include <chrono>
#include <string>

#include "real/nccl/world.hpp"
#include "real/testing.hpp"
#include "testing/conformance/world.hpp"

namespace conformance {

const WorldRunner& world_runner() {
  static const int gpus = dist::real::nccl_device_count();
  static const WorldRunner runner = [] {
    WorldRunner w;
    w.name = "nccl";
    w.unavailable = [] {
      if (auto why = dist::real::nccl_unavailable_reason(); !why.empty()) return why;
      if (gpus < 2) return "needs 2 GPUs (one per rank), found " + std::to_string(gpus);
      return std::string();
    };
    w.run = [](int n, const std::function<void(int rank)>& fn) {
      dist::real::run_thread_world_or_throw(dist::Backend::nccl, n, std::chrono::seconds(120), fn);
    };
    w.max_size = std::max(gpus, 1);  // NCCL refuses two ranks on one GPU
    w.world_sizes = {std::max(gpus, 2)};
    w.large_count = 1000;
    w.large_chunk = 1000;
    w.device_form = true;
    w.float_mean_tolerance = 1e-5;  // ncclAvg may scale before summing: it rounds differently
    w.p2p_skip = "nccl runs a communicator's calls in issue order, so a rank's blocking send "
                "waits for its own later recv; its p2p is checked in group_device_test.cpp";
    return w;
  }();
  return runner;
}

}  // namespace conformance
