// Point-to-point exchanges against reference::p2p: random messages (src, dst, tag, count) on the
// world or a random subgroup, sent and received blocking in one global order, or all posted at
// once (irecv in a random cross-channel order, then isend, then wait; one by one, or as one
// batch_isend_irecv) so FIFO matching per (src, dst, tag) channel decides who gets what.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "dist/dist.hpp"
#include "props/backends.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

// A message between group-local ranks.
struct Message {
  int src = 0;
  int dst = 1;
  int tag = 0;
  std::size_t count = 0;
  friend std::ostream& operator<<(std::ostream& os, const Message& m) {
    return os << m.src << "->" << m.dst << " tag " << m.tag << " x" << m.count;
  }
};

rc::Gen<Message> message(int size) {
  return rc::gen::apply(
      [size](int src, int hop, int tag, std::size_t count) {
        return Message{src, (src + hop) % size, tag, count};
      },
      gen::uniform(0, size), gen::uniform(1, size), gen::uniform(0, 3),
      rc::gen::weightedOneOf<std::size_t>({{1, rc::gen::just<std::size_t>(0)},
                                           {6, gen::uniform<std::size_t>(1, 9)},
                                           {1, gen::uniform<std::size_t>(9, 5000)}}));
}

using Channel = std::tuple<int, int, int>;
Channel channel(const Message& m) { return {m.src, m.dst, m.tag}; }

// Each rank's receives in posting order: its incoming messages in the order `shuffle` visits
// them, except that on one channel they stay in send order (FIFO: a receive sized for the k-th
// message on a channel gets the k-th message).
std::vector<std::vector<std::size_t>> receive_orders(const std::vector<Message>& msgs, int size,
                                                     const std::vector<int>& shuffle) {
  std::vector<std::vector<std::size_t>> order(static_cast<std::size_t>(size));
  std::map<Channel, std::vector<std::size_t>> fifo;
  for (std::size_t i = 0; i < msgs.size(); ++i) fifo[channel(msgs[i])].push_back(i);
  std::map<Channel, std::size_t> next;
  for (int s : shuffle) {
    const Message& m = msgs[static_cast<std::size_t>(s)];
    const Channel c = channel(m);
    order[static_cast<std::size_t>(m.dst)].push_back(fifo[c][next[c]++]);
  }
  return order;
}

template <class T>
PerRank<T> exchange(const std::vector<Message>& msgs, const PerRank<T>& payloads,
                    const std::vector<std::size_t>& my_recvs, bool posted, bool batched,
                    const dist::Group& g) {
  const int me = dist::get_rank(g);
  PerRank<T> received;
  for (std::size_t i : my_recvs) received.emplace_back(msgs[i].count);
  if (!posted) {  // blocking, in message order, rotating through the three data forms
    std::size_t next = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      const Message& m = msgs[i];
      if (m.src == me && i % 3 == 0) dist::send(payloads[i], m.dst, m.tag, g);
      if (m.src == me && i % 3 == 1) dist::send(std::span<const T>(payloads[i]), m.dst, m.tag, g);
      if (m.src == me && i % 3 == 2) dist::send(dist::Tensor::from(payloads[i]), m.dst, m.tag, g);
      if (m.dst == me) dist::recv(received[next++], m.src, m.tag, g);
    }
    return received;
  }
  if (batched) {  // the same order, as one batch
    std::vector<dist::P2POp> ops;
    for (std::size_t k = 0; k < my_recvs.size(); ++k) {
      const Message& m = msgs[my_recvs[k]];
      ops.push_back(dist::P2POp::irecv(std::span<T>(received[k]), m.src, m.tag, g));
    }
    for (std::size_t i = 0; i < msgs.size(); ++i)
      if (msgs[i].src == me)
        ops.push_back(
            dist::P2POp::isend(std::span<const T>(payloads[i]), msgs[i].dst, msgs[i].tag, g));
    auto works = dist::batch_isend_irecv(ops);
    for (auto it = works.rbegin(); it != works.rend(); ++it) it->wait();
    return received;
  }
  std::vector<dist::Work> work;
  for (std::size_t k = 0; k < my_recvs.size(); ++k) {
    const Message& m = msgs[my_recvs[k]];
    work.push_back(dist::irecv(std::span<T>(received[k]), m.src, m.tag, g));
  }
  for (std::size_t i = 0; i < msgs.size(); ++i)
    if (msgs[i].src == me)
      work.push_back(dist::isend(std::span<const T>(payloads[i]), msgs[i].dst, msgs[i].tag, g));
  for (auto it = work.rbegin(); it != work.rend(); ++it) it->wait();
  return received;
}

template <BackendUnderTest B>
void p2p_matches_reference() {
  const auto shape = *gen::world_shape(2, 8);
  const bool on_subgroup = *rc::gen::arbitrary<bool>();
  const auto members = on_subgroup ? *gen::subgroup(shape.size(), 2) : std::vector<int>{};
  const int size = on_subgroup ? static_cast<int>(members.size()) : shape.size();
  const auto msgs = *rc::gen::container<std::vector<Message>>(message(size));
  const bool posted = B::capabilities.no_posted_p2p.empty() && *rc::gen::arbitrary<bool>();
  const bool batched = posted && *rc::gen::arbitrary<bool>();
  const auto shuffle =
      posted ? *gen::permutation(static_cast<int>(msgs.size())) : std::vector<int>{};
  const auto orders =
      posted ? receive_orders(msgs, size, shuffle) : std::vector<std::vector<std::size_t>>{};
  const auto dtype = *rc::gen::arbitrary<dist::DType>();
  RC_CLASSIFY(on_subgroup, "subgroup");
  RC_CLASSIFY(posted && !batched, "posted all at once");
  RC_CLASSIFY(batched, "one batch_isend_irecv");
  RC_CLASSIFY(msgs.empty(), "no messages");
  with_dtype(dtype, [&]<class T>(std::type_identity<T>) {
    PerRank<T> payloads;
    for (const Message& m : msgs)
      payloads.push_back(*rc::gen::container<std::vector<T>>(
          m.count, gen::value<T>(Values::bitwise, dist::ReduceOp::sum)));
    std::vector<ref::Send<ref_t<T>>> sends;
    for (std::size_t i = 0; i < msgs.size(); ++i)
      sends.push_back({msgs[i].src, msgs[i].dst, msgs[i].tag, to_ref(payloads[i])});
    std::vector<std::vector<std::size_t>> recvs_of(static_cast<std::size_t>(size));
    for (std::size_t i = 0; i < msgs.size(); ++i)
      recvs_of[static_cast<std::size_t>(msgs[i].dst)].push_back(i);
    if (posted) recvs_of = orders;
    std::vector<ref::Recv> recvs;
    RC_LOG() << (on_subgroup ? "on the subgroup" : "on the world")
             << (batched  ? ", as one batch"
                 : posted ? ", all posted at once"
                          : ", blocking in message order")
             << "\n";
    for (const auto& rs : recvs_of)
      for (std::size_t i : rs) {
        RC_LOG() << "recv " << recvs.size() << ": group rank " << msgs[i].dst << " posts recv(src "
                 << msgs[i].src << ", tag " << msgs[i].tag << ")\n";
        recvs.push_back({msgs[i].dst, msgs[i].src, msgs[i].tag});
      }
    const auto want = from_ref<T>(ref::p2p(sends, recvs, size));
    const auto got = run_on<B>(shape, [&] {
      const dist::Group g = on_subgroup ? dist::new_group(members) : dist::Group{};
      if (!g.is_member()) return PerRank<T>{};
      return exchange<T>(msgs, payloads, recvs_of[static_cast<std::size_t>(dist::get_rank(g))],
                         posted, batched, g);
    });
    PerRank<T> flat;  // group-rank order, as the reference's recvs
    for (int gr = 0; gr < size; ++gr) {
      const int r = on_subgroup ? members[static_cast<std::size_t>(gr)] : gr;
      for (const auto& v : got[static_cast<std::size_t>(r)]) flat.push_back(v);
    }
    require_same(flat, want, "received payloads", "recv");
  });
}

template <class B>
class P2P : public BackendSuite<B> {};
TYPED_TEST_SUITE(P2P, AllBackends, BackendNames);

TYPED_TEST(P2P, ExchangesMatchReference) {
  PROPS_SKIP_BELOW_RANKS(TypeParam, 2);
  if (const std::string_view why = TypeParam::capabilities.no_posted_p2p; !why.empty())
    std::cout << TypeParam::name() << ": blocking p2p only; posted all at once skipped: " << why
              << std::endl;
  check(150, [] { p2p_matches_reference<TypeParam>(); });
}

}  // namespace
}  // namespace props
