// Uneven all_to_all (split sizes) against reference::all_to_all_v: a random matrix of block sizes
// (many empty blocks, mostly small ones, now and then large ones) on the world or a random
// subgroup, called as the span form, as all_to_all_async + wait (mixed per rank), or the list form.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "props/backends.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

// How one rank calls the uneven all_to_all. span and async issue the same single collective, so
// ranks may mix them; the list form first exchanges the counts, so a case uses it on every rank.
enum class Form { span, async, list };

std::ostream& operator<<(std::ostream& os, Form f) {
  return os << (f == Form::span ? "span" : f == Form::async ? "async" : "list");
}

// splits[i][j]: the elements group rank i sends to group rank j.
using Splits = std::vector<std::vector<std::size_t>>;

struct SplitMatrix {
  Splits splits;
  friend std::ostream& operator<<(std::ostream& os, const SplitMatrix& m) {
    for (std::size_t i = 0; i < m.splits.size(); ++i) {
      os << "\n  rank " << i << " sends";
      for (const std::size_t s : m.splits[i]) os << " " << s;
    }
    return os;
  }
};

// A block size: empty often, 1..9 mostly, now and then up to 2000.
rc::Gen<std::size_t> block_size() {
  return rc::gen::weightedOneOf<std::size_t>({{3, rc::gen::just<std::size_t>(0)},
                                              {6, gen::uniform<std::size_t>(1, 10)},
                                              {1, gen::uniform<std::size_t>(10, 2001)}});
}

rc::Gen<SplitMatrix> split_matrix(int size) {
  const auto n = static_cast<std::size_t>(size);
  return rc::gen::map(
      rc::gen::container<Splits>(n, rc::gen::container<std::vector<std::size_t>>(n, block_size())),
      [](Splits s) { return SplitMatrix{std::move(s)}; });
}

std::size_t row_sum(const std::vector<std::size_t>& row) {
  std::size_t total = 0;
  for (const std::size_t s : row) total += s;
  return total;
}

// One rank's input (the sum of its row of splits): drawn element by element when small (so it
// shrinks), else filled from a drawn seed.
template <class T>
std::vector<T> payload(std::size_t count) {
  if (count <= 256)
    return *rc::gen::container<std::vector<T>>(count,
                                               gen::value<T>(Values::bitwise, dist::ReduceOp::sum));
  return fill<T>(count, *rc::gen::arbitrary<std::uint64_t>(), Values::bitwise, dist::ReduceOp::sum);
}

// Every group rank's input, its row of splits long (the splits copied: rapidcheck reruns this
// while shrinking, after the property has returned).
template <class T>
rc::Gen<PerRankData<T>> inputs_for(const Splits& splits) {
  return rc::gen::exec([splits] {
    PerRankData<T> d;
    for (const auto& row : splits) d.ranks.push_back(payload<T>(row_sum(row)));
    return d;
  });
}

// The calling group rank's exchange: sends input per its row of `splits`, receives its column.
template <class T>
std::vector<T> exchange(const Splits& splits, const std::vector<T>& input, Form form,
                        const dist::Group& g) {
  const auto me = static_cast<std::size_t>(dist::get_rank(g));
  std::vector<std::int64_t> input_splits, output_splits;
  for (std::size_t j = 0; j < splits.size(); ++j) {
    input_splits.push_back(static_cast<std::int64_t>(splits[me][j]));
    output_splits.push_back(static_cast<std::int64_t>(splits[j][me]));
  }
  if (form == Form::list) {
    std::vector<std::vector<T>> inputs;
    auto first = input.begin();
    for (const std::size_t s : splits[me]) {
      inputs.emplace_back(first, first + static_cast<std::ptrdiff_t>(s));
      first += static_cast<std::ptrdiff_t>(s);
    }
    std::vector<T> out;
    for (const auto& block : dist::all_to_all(inputs, g))
      out.insert(out.end(), block.begin(), block.end());
    return out;
  }
  std::size_t total = 0;
  for (std::size_t j = 0; j < splits.size(); ++j) total += splits[j][me];
  std::vector<T> out(total);
  const std::span<const std::int64_t> os(output_splits), is(input_splits);
  if (form == Form::span) dist::all_to_all(std::span<T>(out), std::span<const T>(input), os, is, g);
  else dist::all_to_all_async(std::span<T>(out), std::span<const T>(input), os, is, g).wait();
  return out;
}

// Every group rank's form: the list form on all of them, or span / async per rank.
std::vector<Form> forms_of(int size) {
  if (*gen::uniform(0, 3) == 0)
    return std::vector<Form>(static_cast<std::size_t>(size), Form::list);
  return *rc::gen::container<std::vector<Form>>(static_cast<std::size_t>(size),
                                                rc::gen::element(Form::span, Form::async));
}

void classify(const Splits& splits, const std::vector<Form>& forms, bool on_subgroup) {
  const auto has = [&](Form f) { return std::find(forms.begin(), forms.end(), f) != forms.end(); };
  bool some_empty = false, some_large = false, one_sends_nothing = false;
  for (const auto& row : splits) {
    one_sends_nothing = one_sends_nothing || row_sum(row) == 0;
    for (const std::size_t s : row) {
      some_empty = some_empty || s == 0;
      some_large = some_large || s >= 10;
    }
  }
  RC_CLASSIFY(has(Form::list), "list form");
  RC_CLASSIFY(has(Form::span) && !has(Form::async), "span form");
  RC_CLASSIFY(has(Form::async) && !has(Form::span), "async + wait");
  RC_CLASSIFY(has(Form::span) && has(Form::async), "span and async mixed");
  RC_CLASSIFY(some_empty, "some block empty");
  RC_CLASSIFY(one_sends_nothing, "a rank sends nothing");
  RC_CLASSIFY(some_large, "a block of 10 or more");
  RC_CLASSIFY(on_subgroup, "subgroup");
  RC_CLASSIFY(splits.size() == 1, "group of 1");
}

template <BackendUnderTest B>
void uneven_all_to_all_matches_reference() {
  const auto shape = *gen::world_shape(2, 8);
  const bool on_subgroup = *rc::gen::arbitrary<bool>();
  const auto members = on_subgroup ? *gen::subgroup(shape.size()) : std::vector<int>{};
  const int size = on_subgroup ? static_cast<int>(members.size()) : shape.size();
  const Splits splits = (*split_matrix(size)).splits;
  const auto forms = forms_of(size);
  const auto dtype = *rc::gen::arbitrary<dist::DType>();
  classify(splits, forms, on_subgroup);
  RC_LOG() << (on_subgroup ? "on the subgroup" : "on the world") << ", forms by group rank:";
  for (const Form f : forms) RC_LOG() << " " << f;
  RC_LOG() << "\n";
  with_dtype(dtype, [&]<class T>(std::type_identity<T>) {
    const auto inputs = (*inputs_for<T>(splits)).ranks;
    const auto want = from_ref<T>(ref::all_to_all_v(to_ref(inputs), splits));
    const auto got = run_on<B>(shape, [&] {
      const dist::Group g = on_subgroup ? dist::new_group(members) : dist::Group{};
      if (!g.is_member()) return std::vector<T>{};
      const auto me = static_cast<std::size_t>(dist::get_rank(g));
      return exchange<T>(splits, inputs[me], forms[me], g);
    });
    PerRank<T> by_group_rank;  // group-rank order, as the reference's outputs
    for (int gr = 0; gr < size; ++gr) {
      const int r = on_subgroup ? members[static_cast<std::size_t>(gr)] : gr;
      by_group_rank.push_back(got[static_cast<std::size_t>(r)]);
    }
    require_same(by_group_rank, want, "outputs", "group rank");
  });
}

template <class B>
class Uneven : public BackendSuite<B> {};
TYPED_TEST_SUITE(Uneven, AllBackends, BackendNames);

TYPED_TEST(Uneven, AllToAllMatchesReference) {
  PROPS_SKIP_BELOW_RANKS(TypeParam, 2);  // worlds of 2 to 8 ranks
  check(150, [] { uneven_all_to_all_matches_reference<TypeParam>(); });
}

}  // namespace
}  // namespace props
