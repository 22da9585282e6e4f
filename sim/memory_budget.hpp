// What a simulated world needs in memory, against what this process may have: a cluster that
// cannot fit is refused before any rank starts, and a run that runs out says what it needed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "dist/sim/run.hpp"

namespace dist::sim {

struct MemoryNeed {
  std::size_t resident = 0;  // bytes the ranks' own state and touched stacks take at least
  std::size_t address = 0;   // bytes of address space (stacks as mapped, guards included)
};

// The least a run of `cluster` needs (per-rank state and the stack pages a rank touches).
MemoryNeed memory_need(const Cluster& cluster);

// Why `cluster` cannot fit in this process (available memory or RLIMIT_AS), or nothing.
std::optional<std::string> refuse_memory(const Cluster& cluster);

// The sentence a RunError adds when a rank ran out of memory: ranks asked for, what the run
// needs at least, what the process held at its peak.
std::string out_of_memory_note(const Cluster& cluster);

// The address space this process has mapped (what RLIMIT_AS counts), in bytes.
std::size_t address_space_in_use();

// "1.5 GiB", "640 MiB", "12 KiB".
std::string bytes_text(std::size_t bytes);

}  // namespace dist::sim
