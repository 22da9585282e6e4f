// Random programs: subgroups created by every rank, then a sequence of collectives on the world
// and on those subgroups (each rank runs the steps of the groups it belongs to). Also one-rank
// mutations of a program, its reference outputs, and what a mutated run must end with.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <variant>
#include <vector>

#include "props/collective.hpp"
#include "props/generators.hpp"

namespace props {

struct Step {
  int group = -1;  // index into Program::groups; -1: the world
  Call call;
};

struct Program {
  std::vector<std::vector<int>> groups;  // global ranks, in group-rank order
  std::vector<Step> steps;
  std::uint64_t salt = 0;  // seeds every step's inputs
  Values mode = Values::exact;
};
std::ostream& operator<<(std::ostream& os, const Program& p);

// One rank's call at one step changed, or left out.
enum class Change : std::uint8_t { op, count, root, kind, dtype, missing };
std::string_view to_string(Change change);
struct Mutation {
  int rank = 0;
  std::size_t step = 0;
  Change change = Change::missing;
  Call call;  // what `rank` calls instead (unused for missing)
};
std::ostream& operator<<(std::ostream& os, const Mutation& m);

// The global ranks taking part in a step, in group-rank order.
std::vector<int> members_of(const Program& p, const Step& s, int world);
// The steps a mutation may target: those on groups of two or more ranks.
std::vector<std::size_t> mutable_steps(const Program& p, int world);

namespace gen {
// A program for `world` ranks; `favour_world` puts more of its steps on the world group.
rc::Gen<Program> program(int world, Values mode, bool favour_world = true);
// A mutation of one of mutable_steps(p, world) (which must not be empty).
rc::Gen<Mutation> mutation(const Program& p, int world);
}  // namespace gen

// A step's output on one rank, of the step's dtype.
using AnyValues =
    std::variant<std::vector<std::int8_t>, std::vector<std::uint8_t>, std::vector<std::int32_t>,
                 std::vector<std::uint32_t>, std::vector<std::int64_t>, std::vector<std::uint64_t>,
                 std::vector<dist::float16>, std::vector<dist::bfloat16>, std::vector<float>,
                 std::vector<double>>;
// Per rank, per step: the output of each step the rank completed.
using Log = std::vector<std::vector<std::optional<AnyValues>>>;
// Nothing when equal (bitwise, NaN == NaN), else a report.
std::optional<std::string> differences(const AnyValues& actual, const AnyValues& expected);

// Runs the program on the calling rank (inside a run), recording each completed step in `row`;
// `mutation` (if any) changes this rank's call at its step.
void run_program(const Program& p, const std::optional<Mutation>& mutation, int world,
                 std::vector<std::optional<AnyValues>>& row);
// The reference's outputs of every step on every member rank.
Log reference_log(const Program& p, int world);

// What a rank of a mutated run must end with.
struct Expectation {
  enum class Kind : std::uint8_t {
    ok,         // returns normally with every step's reference output
    fails_at,   // fails with an allowed error at `step`, after the reference outputs of all before
    must_fail,  // fails (missing call); its outputs are exact except on the mutated group from
                // `step`
    either,     // ok or an allowed failure; outputs exact except on the mutated group from `step`
  };
  Kind kind = Kind::ok;
  std::size_t step = 0;
  bool desync = false;  // fails_at: the failure must be a DesyncError
};
std::vector<Expectation> expectations(const Program& p, const Mutation& m, int world);

}  // namespace props
