// HashStore (declared in <dist/store.hpp>): an in-memory Store for ranks that are threads of one
// process, under the name core has always used.
#pragma once

#include "core/store/store.hpp"

namespace dist::core {

using HashStore = dist::HashStore;

}  // namespace dist::core
