// Random programs (props/program.hpp): generation, mutation, execution on a rank, the reference's
// outputs, and the expected ending of each rank of a mutated run.
#include "props/program.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

namespace props {

namespace {
std::uint64_t input_seed(const Program& p, std::size_t step, int rank) {
  return mix(p.salt ^ mix(step * 131 + static_cast<std::uint64_t>(rank)));
}

template <class T>
std::vector<T> step_input(const Program& p, std::size_t step, const Call& c, int rank, int size) {
  return fill<T>(input_count(c, size), input_seed(p, step, rank), p.mode, c.op);
}

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
}  // namespace

std::string_view to_string(Change change) {
  switch (change) {
    case Change::op:
      return "different op";
    case Change::count:
      return "different count";
    case Change::root:
      return "different root";
    case Change::kind:
      return "different kind";
    case Change::dtype:
      return "different dtype";
    case Change::missing:
      return "call missing";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, const Program& p) {
  os << "Program (" << p.mode << " inputs, salt " << p.salt << ")";
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    os << "\n  group " << g << " = new_group({";
    for (std::size_t i = 0; i < p.groups[g].size(); ++i) os << (i ? ", " : "") << p.groups[g][i];
    os << "})";
  }
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const Step& st = p.steps[s];
    os << "\n  step " << s << " on "
       << (st.group < 0 ? "world" : "group " + std::to_string(st.group)) << ": " << st.call;
  }
  return os;
}

std::ostream& operator<<(std::ostream& os, const Mutation& m) {
  os << "rank " << m.rank << ", step " << m.step << ": " << to_string(m.change);
  if (m.change != Change::missing) os << " -> " << m.call;
  return os;
}

std::vector<int> members_of(const Program& p, const Step& s, int world) {
  if (s.group >= 0) return p.groups[static_cast<std::size_t>(s.group)];
  std::vector<int> all(static_cast<std::size_t>(world));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

std::vector<std::size_t> mutable_steps(const Program& p, int world) {
  std::vector<std::size_t> out;
  for (std::size_t s = 0; s < p.steps.size(); ++s)
    if (members_of(p, p.steps[s], world).size() >= 2) out.push_back(s);
  return out;
}

namespace gen {

namespace {
// One step: a group (the world, or one of `gs`) and a call of any kind for it, with small counts.
rc::Gen<Step> step(int world, const std::vector<std::vector<int>>& gs, bool favour_world) {
  const int last = static_cast<int>(gs.size()) - 1;
  const auto group =
      favour_world
          ? rc::gen::weightedOneOf<int>({{2, rc::gen::just(-1)}, {3, gen::uniform(-1, last + 1)}})
          : gen::uniform(-1, last + 1);
  return rc::gen::mapcat(group, [world, gs](int g) {
    const int size = g < 0 ? world : static_cast<int>(gs[static_cast<std::size_t>(g)].size());
    const auto counts = rc::gen::weightedOneOf<std::size_t>(
        {{1, rc::gen::just<std::size_t>(0)}, {5, gen::uniform<std::size_t>(1, 12)}});
    const auto call =
        rc::gen::mapcat(dtype(), [=](dist::DType d) { return any_call(d, size, counts); });
    return rc::gen::map(call, [g](Call c) { return Step{g, c}; });
  });
}
}  // namespace

// 0..3 groups and 1..12 steps; both shrink by dropping elements.
rc::Gen<Program> program(int world, Values mode, bool favour_world) {
  const auto groups =
      rc::gen::resize(3, rc::gen::container<std::vector<std::vector<int>>>(subgroup(world)));
  return rc::gen::mapcat(groups, [=](const std::vector<std::vector<int>>& gs) {
    const auto steps = rc::gen::resize(
        12,
        rc::gen::nonEmpty(rc::gen::container<std::vector<Step>>(step(world, gs, favour_world))));
    return rc::gen::apply(
        [gs, mode](std::vector<Step> st, std::uint64_t salt) {
          return Program{gs, std::move(st), salt, mode};
        },
        steps, rc::gen::arbitrary<std::uint64_t>());
  });
}

namespace {
std::vector<Change> changes_for(Kind kind) {
  Change out[6] = {Change::kind, Change::missing};
  std::size_t n = 2;
  if (has_op(kind)) out[n++] = Change::op;
  if (has_root(kind)) out[n++] = Change::root;
  if (has_data(kind)) out[n++] = Change::count;
  if (has_data(kind)) out[n++] = Change::dtype;
  return std::vector<Change>(out, out + n);
}

// A call that differs from `c` in `change` only (kind: also in whatever the new kind needs).
rc::Gen<Call> changed(const Call& c, Change change, int size) {
  switch (change) {
    case Change::op:
      return rc::gen::map(
          rc::gen::suchThat(op_for(c.dtype), [c](dist::ReduceOp o) { return o != c.op; }),
          [c](dist::ReduceOp o) {
            Call d = c;
            d.op = o;
            return d;
          });
    case Change::root:
      return rc::gen::map(rc::gen::suchThat(root(size), [c](int r) { return r != c.root; }),
                          [c](int r) {
                            Call d = c;
                            d.root = r;
                            return d;
                          });
    case Change::count:
      return rc::gen::map(gen::uniform<std::size_t>(1, 3), [c](std::size_t k) {
        Call d = c;
        d.count += k;
        return d;
      });
    case Change::dtype:
      return rc::gen::map(
          rc::gen::suchThat(
              dtype(), [c](dist::DType t) { return t != c.dtype && dist::op_allowed(c.op, t); }),
          [c](dist::DType t) {
            Call d = c;
            d.dtype = t;
            return d;
          });
    case Change::kind:
      return rc::gen::map(rc::gen::suchThat(rc::gen::elementOf(std::vector(std::begin(all_kinds),
                                                                           std::end(all_kinds))),
                                            [c](Kind k) { return k != c.kind; }),
                          [c](Kind k) {
                            Call d = c;
                            d.kind = k;
                            if (!has_op(k) || !has_op(c.kind)) d.op = dist::ReduceOp::sum;
                            return d;
                          });
    case Change::missing:
      break;
  }
  return rc::gen::just(c);
}
}  // namespace

rc::Gen<Mutation> mutation(const Program& p, int world) {
  return rc::gen::mapcat(rc::gen::elementOf(mutable_steps(p, world)), [p, world](std::size_t s) {
    const Call& c = p.steps[s].call;
    const auto members = members_of(p, p.steps[s], world);
    const int size = static_cast<int>(members.size());
    return rc::gen::mapcat(rc::gen::elementOf(changes_for(c.kind)), [=](Change ch) {
      return rc::gen::apply(
          [=](int rank, Call d) {
            return Mutation{rank, s, ch, d};
          },
          rc::gen::elementOf(members), changed(c, ch, size));
    });
  });
}

}  // namespace gen

std::optional<std::string> differences(const AnyValues& actual, const AnyValues& expected) {
  if (actual.index() != expected.index()) return std::string("a different dtype");
  return std::visit(
      [&](const auto& a) {
        return props::differences(a, std::get<std::decay_t<decltype(a)>>(expected));
      },
      actual);
}

void run_program(const Program& p, const std::optional<Mutation>& mutation, int world,
                 std::vector<std::optional<AnyValues>>& row) {
  const int rank = dist::get_rank();
  std::vector<dist::Group> groups;
  for (const auto& g : p.groups) groups.push_back(dist::new_group(g));
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const Step& step = p.steps[s];
    const auto members = members_of(p, step, world);
    if (!contains(members, rank)) continue;
    Call call = step.call;
    if (mutation && mutation->rank == rank && mutation->step == s) {
      if (mutation->change == Change::missing) continue;
      call = mutation->call;
    }
    const dist::Group g =
        step.group < 0 ? dist::Group{} : groups[static_cast<std::size_t>(step.group)];
    with_dtype(call.dtype, [&]<class T>(std::type_identity<T>) {
      const int size = static_cast<int>(members.size());
      row[s] = AnyValues(execute<T>(call, step_input<T>(p, s, call, rank, size), g));
    });
  }
}

Log reference_log(const Program& p, int world) {
  Log log(static_cast<std::size_t>(world), std::vector<std::optional<AnyValues>>(p.steps.size()));
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const Call& c = p.steps[s].call;
    const auto members = members_of(p, p.steps[s], world);
    const int size = static_cast<int>(members.size());
    with_dtype(c.dtype, [&]<class T>(std::type_identity<T>) {
      PerRank<T> in;
      for (int m : members) in.push_back(step_input<T>(p, s, c, m, size));
      const auto out = expected<T>(c, in);
      for (std::size_t i = 0; i < members.size(); ++i)
        log[static_cast<std::size_t>(members[i])][s] = AnyValues(out[i]);
    });
  }
  return log;
}

std::vector<Expectation> expectations(const Program& p, const Mutation& m, int world) {
  using K = Expectation::Kind;
  std::vector<Expectation> out(static_cast<std::size_t>(world));
  const auto g = members_of(p, p.steps[m.step], world);
  const bool missing = m.change == Change::missing;
  std::set<int> tainted(g.begin(), g.end());
  for (int r : g) {
    const bool must = !missing || r != m.rank;
    out[static_cast<std::size_t>(r)] =
        missing ? Expectation{must ? K::must_fail : K::either, m.step, false}
                : Expectation{K::fails_at, m.step, true};
  }
  // A rank sharing a later step with an affected rank is affected from that step on.
  for (std::size_t s = m.step + 1; s < p.steps.size(); ++s) {
    const auto members = members_of(p, p.steps[s], world);
    if (std::none_of(members.begin(), members.end(), [&](int r) { return tainted.count(r) > 0; }))
      continue;
    for (int r : members) {
      if (!tainted.insert(r).second) continue;
      out[static_cast<std::size_t>(r)] =
          missing ? Expectation{K::either, m.step, false} : Expectation{K::fails_at, s, false};
    }
  }
  return out;
}

}  // namespace props
