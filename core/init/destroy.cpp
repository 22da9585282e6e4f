// The parts of dist/api.hpp that end or inspect a launch: destroy_dist (drops the process-wide
// context, closing its backend's connections) and infer_launcher.
#include "core/context.hpp"
#include "core/init/launcher.hpp"
#include "dist/api.hpp"

namespace dist {

void destroy_dist() { core::set_process_context(nullptr); }

std::string infer_launcher() { return core::infer_launcher(); }

}  // namespace dist
