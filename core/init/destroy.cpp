// The parts of dist/api.hpp that end or inspect a launch: destroy_dist (drops the process-wide
// context and closes every group's backend, also those of Groups still held) and infer_launcher.
#include "core/context.hpp"
#include "core/init/launcher.hpp"
#include "dist/api.hpp"

namespace dist {

void destroy_dist() { core::destroy_process_context(); }

std::string infer_launcher() { return core::infer_launcher(); }

}  // namespace dist
