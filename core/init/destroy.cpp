// The parts of dist/api.hpp that end or inspect a launch: destroy_dist (drops the process-wide
// context and closes every group's backend, also those of Groups still held) and infer_launcher.
#include <string>

#include "core/context.hpp"
#include "core/init/launcher.hpp"
#include "dist/api.hpp"

namespace dist {

// Works never waited are named once every group is closed (work_ledger.hpp); a sim rank's
// context ends with its run, so there only the check is made.
void destroy_dist() {
  const std::string event = "destroy_dist() was called";
  if (core::Context* rank = core::bound_context())
    return core::check_all_waited(*rank->works, event);
  if (const auto old = core::destroy_process_context()) core::check_all_waited(*old->works, event);
}

std::string infer_launcher() { return core::infer_launcher(); }

}  // namespace dist
