// The parts of dist/init.hpp that need no backend: destroy_dist (drops the process-wide context,
// closing its backend's connections) and infer_launcher.
#include "core/context.hpp"
#include "core/init/launcher.hpp"
#include "dist/init.hpp"

namespace dist {

void destroy_dist() { core::set_process_context(nullptr); }

std::string infer_launcher() { return core::infer_launcher(); }

}  // namespace dist
