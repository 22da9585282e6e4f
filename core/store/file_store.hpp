// FileStore (declared in <dist/store.hpp>): a Store kept in a file that several processes share,
// under the name core has always used.
#pragma once

#include "core/store/store.hpp"

namespace dist::core {

using FileStore = dist::FileStore;

}  // namespace dist::core
