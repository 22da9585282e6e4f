// Receives from any_source against a model: on a random world or subgroup, every rank but a random
// server posts a random number of isends (tags 0 and 1, a count per tag) to the server, which
// takes them all with recv(any_source, tag) in a random order of tags. It must get every message
// exactly once, learn each one's sender, and get each sender's messages on a tag in the order that
// sender posted them (MPI's non-overtaking rule), whichever sender it takes when. Backends without
// an any-source receive (nccl) must refuse it with InvalidArgument.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dist/dist.hpp"
#include "props/backends.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

constexpr int tags = 2;

bool receives_from_any_source(dist::Backend backend) { return backend != dist::Backend::nccl; }

// Sender s's k-th message on `tag`: `count` copies of s * 10000 + k.
std::vector<std::int32_t> payload(int sender, int k, std::size_t count) {
  return std::vector<std::int32_t>(count, sender * 10000 + k);
}

// The server's log, three ints per message: the source recv returned, the tag, the payload's k
// (-1 when the payload is not that sender's, or its copies differ; -2 for an empty message).
std::vector<int> serve(const std::vector<int>& tag_order, const std::vector<std::size_t>& count_of,
                       const dist::Group& g) {
  std::vector<int> log;
  for (const int tag : tag_order) {
    std::vector<std::int32_t> got(count_of[static_cast<std::size_t>(tag)], -1);
    const int from = dist::recv(got, dist::any_source, tag, g);
    int k = got.empty() ? -2 : got[0] - from * 10000;
    if (!got.empty() && got != payload(from, k, got.size())) k = -1;
    log.insert(log.end(), {from, tag, k});
  }
  return log;
}

template <BackendUnderTest B>
void any_source_matches_model() {
  const auto shape = *gen::world_shape(2, 8);
  const bool on_subgroup = *rc::gen::arbitrary<bool>();
  const auto members = on_subgroup ? *gen::subgroup(shape.size(), 2) : std::vector<int>{};
  const int size = on_subgroup ? static_cast<int>(members.size()) : shape.size();
  const int server = *gen::uniform<int>(0, size);
  // sends[s][t]: how many messages group rank s sends on tag t.
  const auto sends = *rc::gen::container<std::vector<std::vector<int>>>(
      static_cast<std::size_t>(size),
      rc::gen::container<std::vector<int>>(tags, gen::uniform<int>(0, 4)));
  const std::vector<std::size_t> count_of{*gen::uniform<std::size_t>(0, 9),
                                          *gen::uniform<std::size_t>(1, 3000)};
  std::vector<int> tag_order;
  for (int s = 0; s < size; ++s)
    for (int t = 0; t < tags && s != server; ++t)
      tag_order.insert(tag_order.end(), static_cast<std::size_t>(sends[s][t]), t);
  const auto perm = *gen::permutation(static_cast<int>(tag_order.size()));
  std::vector<int> shuffled;
  for (const int i : perm) shuffled.push_back(tag_order[static_cast<std::size_t>(i)]);
  const bool supported = receives_from_any_source(B::capabilities.backend);
  RC_CLASSIFY(on_subgroup, "subgroup");
  RC_CLASSIFY(shuffled.empty(), "no messages");
  const auto got = run_on<B>(shape, [&] {
    const dist::Group g = on_subgroup ? dist::new_group(members) : dist::Group{};
    if (!g.is_member()) return std::vector<int>{};
    const int me = dist::get_rank(g);
    if (!supported) {
      if (me != server) return std::vector<int>{};
      std::vector<std::int32_t> v(1);
      try {
        dist::recv(v, dist::any_source, 0, g);
      } catch (const dist::InvalidArgument&) {
        return std::vector<int>{1};
      }
      return std::vector<int>{0};
    }
    if (me == server) return serve(shuffled, count_of, g);
    std::vector<std::vector<std::int32_t>> data;
    for (int t = 0; t < tags; ++t)
      for (int k = 0; k < sends[static_cast<std::size_t>(me)][static_cast<std::size_t>(t)]; ++k)
        data.push_back(payload(me, k, count_of[static_cast<std::size_t>(t)]));
    std::vector<dist::Work> works;
    std::size_t next = 0;
    for (int t = 0; t < tags; ++t)
      for (int k = 0; k < sends[static_cast<std::size_t>(me)][static_cast<std::size_t>(t)]; ++k)
        works.push_back(dist::isend(std::span<const std::int32_t>(data[next++]), server, t, g));
    for (auto& w : works) w.wait();
    return std::vector<int>{};
  });
  const int server_rank = on_subgroup ? members[static_cast<std::size_t>(server)] : server;
  const auto& log = got[static_cast<std::size_t>(server_rank)];
  if (!supported) {
    RC_ASSERT(log == std::vector<int>{1});
    return;
  }
  RC_ASSERT(log.size() == 3 * shuffled.size());
  std::map<std::pair<int, int>, int> next;  // (source, tag) -> the k expected next
  for (std::size_t i = 0; i < shuffled.size(); ++i) {
    const int from = log[3 * i], tag = log[3 * i + 1], k = log[3 * i + 2];
    RC_LOG() << "message " << i << ": tag " << tag << " from group rank " << from << ", its #" << k
             << "\n";
    RC_ASSERT(tag == shuffled[i]);
    RC_ASSERT(from >= 0 && from < size && from != server);
    const int expected = next[{from, tag}]++;
    if (k != -2) RC_ASSERT(k == expected);  // each once, in the sender's order
  }
  for (int s = 0; s < size; ++s)
    for (int t = 0; t < tags && s != server; ++t) {
      const std::pair<int, int> channel{s, t};
      RC_ASSERT(next[channel] == sends[static_cast<std::size_t>(s)][static_cast<std::size_t>(t)]);
    }
}

template <class B>
class AnySource : public BackendSuite<B> {};
TYPED_TEST_SUITE(AnySource, AllBackends, BackendNames);

TYPED_TEST(AnySource, EveryMessageOnceInEachSendersOrder) {
  PROPS_SKIP_BELOW_RANKS(TypeParam, 2);
  check(100, [] { any_source_matches_model<TypeParam>(); });
}

}  // namespace
}  // namespace props
