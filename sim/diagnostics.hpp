// The messages of the sim's errors: what each rank called, which field differs, who is missing
// and who has returned, so a user can see the bug without a debugger.
#pragma once

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dist/sim/run.hpp"
#include "sim/op.hpp"

namespace dist::sim {

// "0-3, 7" / "0-65535 except 17": core::rank_ranges.
std::string rank_list(const std::vector<int>& ranks);
// Ranks disagree on `field` of op.
std::string desync_message(const Op& op, std::string_view field);
// op can never complete because the ranks in `gone` have finished; how_finished(r) says how
// ("returned without calling it"), and ranks finished alike share a line.
std::string unreachable_message(const Op& op, const std::vector<int>& gone,
                                const std::function<std::string(int)>& how_finished);
// Participant i (global rank) returned while its own call in op was still unmatched.
std::string abandoned_message(const Op& op, std::size_t i, int rank);
// "rank 0 left by an exception while its all_reduce(...) on world #1 was in flight": a rank whose
// Work of `op` (participant i) an exception destroyed with the call still unmatched.
std::string left_message(const Op& op, std::size_t i, int rank);
// Every live rank is blocked; activities[r] is what rank r does ("returned", "waits in ..."). Ranks
// doing the same share a line: "ranks 0-16, 18-63: waits in ...", in the order of their first rank.
std::string deadlock_message(const std::vector<std::string>& activities);
// " (arrived: ...; missing: ...)" for an op still gathering.
std::string waiting_detail(const Op& op);
std::string timeout_message(const Op& op, std::size_t i, int rank,
                            std::chrono::milliseconds timeout);
// RunError's list of outcomes: "\n  ranks 0, 1: <message>", ranks with the same message on one
// line in the order of their first rank (a hash map: O(n) for a 65,536-rank run).
std::string outcome_lines(std::span<const Outcome> outcomes);

}  // namespace dist::sim
