// Reference point-to-point messaging: a set of sends and recvs over a world, matched FIFO per
// (src, dst, tag) channel. Standard library only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "reference/validate.hpp"

namespace dist::reference {

// A message rank `src` sends to rank `dst` with `tag`.
template <class T>
struct Send {
  int src;
  int dst;
  int tag;
  std::vector<T> data;
};

// A receive posted by rank `dst` for a message from rank `src` with `tag`.
struct Recv {
  int dst;
  int src;
  int tag;
};

namespace detail {

inline std::string describe_message(std::string_view kind, std::size_t index, int src, int dst,
                                    int tag) {
  return std::string(kind) + " #" + std::to_string(index) + " (src " + std::to_string(src) +
         ", dst " + std::to_string(dst) + ", tag " + std::to_string(tag) + ")";
}

inline void check_endpoints(std::string_view kind, std::size_t index, int src, int dst, int tag,
                            int world) {
  const std::string who = describe_message(kind, index, src, dst, tag);
  if (src < 0 || src >= world)
    invalid("p2p", who + ": src " + std::to_string(src) + " is out of range [0, " +
                       std::to_string(world) + ")");
  if (dst < 0 || dst >= world)
    invalid("p2p", who + ": dst " + std::to_string(dst) + " is out of range [0, " +
                       std::to_string(world) + ")");
  if (src == dst) invalid("p2p", who + ": src and dst are the same rank " + std::to_string(src));
}

}  // namespace detail

// The payload each recv receives, in the order of `recvs`. Recv k matches the earliest send not
// yet matched with the same (src, dst, tag): messages on one channel arrive in the order sent
// (FIFO per channel); channels are independent. Errors (std::invalid_argument): world < 1, a rank
// out of [0, world), src == dst, a recv with no send left to match, a send that no recv matches.
template <class T>
std::vector<std::vector<T>> p2p(const std::vector<Send<T>>& sends, const std::vector<Recv>& recvs,
                                int world) {
  detail::check_world("p2p", world);
  for (std::size_t i = 0; i < sends.size(); ++i)
    detail::check_endpoints("send", i, sends[i].src, sends[i].dst, sends[i].tag, world);
  for (std::size_t k = 0; k < recvs.size(); ++k)
    detail::check_endpoints("recv", k, recvs[k].src, recvs[k].dst, recvs[k].tag, world);

  std::vector<bool> matched(sends.size(), false);
  std::vector<std::vector<T>> out;
  out.reserve(recvs.size());
  for (std::size_t k = 0; k < recvs.size(); ++k) {
    const Recv& rv = recvs[k];
    std::size_t i = 0;
    while (i < sends.size() && (matched[i] || sends[i].src != rv.src || sends[i].dst != rv.dst ||
                                sends[i].tag != rv.tag))
      ++i;
    if (i == sends.size())
      detail::invalid("p2p", detail::describe_message("recv", k, rv.src, rv.dst, rv.tag) +
                                 " has no matching send");
    matched[i] = true;
    out.push_back(sends[i].data);
  }
  for (std::size_t i = 0; i < sends.size(); ++i) {
    if (!matched[i])
      detail::invalid("p2p", detail::describe_message("send", i, sends[i].src, sends[i].dst,
                                                      sends[i].tag) +
                                 " is never received");
  }
  return out;
}

}  // namespace dist::reference
