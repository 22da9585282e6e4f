// The messages of the sim's errors: what each rank called, which field differs, who is missing
// and who has returned, so a user can see the bug without a debugger.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/op.hpp"

namespace dist::sim {

std::string rank_list(const std::vector<int>& ranks);
// Ranks disagree on `field` of op.
std::string desync_message(const Op& op, std::string_view field);
// op can never complete because the ranks in `gone` have finished; how_finished(r) says how.
std::string unreachable_message(const Op& op, const std::vector<int>& gone,
                                const std::function<std::string(int)>& how_finished);
// Participant i (global rank) returned while its own call in op was still unmatched.
std::string abandoned_message(const Op& op, std::size_t i, int rank);
// Every live rank is blocked; one line per rank.
std::string deadlock_message(const std::vector<std::string>& lines);
// " (arrived: ...; missing: ...)" for an op still gathering.
std::string waiting_detail(const Op& op);
std::string timeout_message(const Op& op, std::size_t i, int rank,
                            std::chrono::milliseconds timeout);

}  // namespace dist::sim
