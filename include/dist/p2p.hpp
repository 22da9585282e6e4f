// Point-to-point messages: send/recv (blocking) and isend/irecv (returning a Work). `dst`/`src`
// are ranks within `group`; a recv matches the oldest unmatched send from `src` with the same tag.
// `src` = any_source (sim, gloo and mpi) takes a message with that tag from whichever rank sends
// one; recv returns the rank the message came from, and an irecv's Work::source() tells it. In
// sim's deterministic mode the sender chosen among those ready comes from Cluster.seed.
// A send completes when its receiver has the data: code that counts on buffering is caught as a
// deadlock in sim instead of hanging on a real network for large messages.
#pragma once

#include <span>
#include <vector>

#include "dist/api.hpp"
#include "dist/detail/erased.hpp"
#include "dist/export.hpp"
#include "dist/tensor.hpp"

namespace dist {

template <Element T> Work isend(std::span<T> data, int dst, int tag = 0, const Group& group = {}) {
  return detail::track_unwaited_send(detail::send(detail::input_of(data), dst, tag, group),
                                     detail::input_of(data));
}
template <Element T> Work irecv(std::span<T> data, int src, int tag = 0, const Group& group = {}) {
  return detail::track_unwaited(detail::recv(detail::buffer_of(data), src, tag, group));
}
template <Element T> void send(std::span<T> data, int dst, int tag = 0, const Group& group = {}) {
  detail::send(detail::input_of(data), dst, tag, group).wait();
}
template <Element T>
int recv(std::span<T> data, int src, int tag = 0, const Group& group = {}) {
  Work work = detail::recv(detail::buffer_of(data), src, tag, group);
  work.wait();
  return work.source();
}
template <Element T>
void send(const std::vector<T>& data, int dst, int tag = 0, const Group& group = {}) {
  send(std::span<const T>(data), dst, tag, group);
}
template <Element T>
int recv(std::vector<T>& data, int src, int tag = 0, const Group& group = {}) {
  return recv(std::span<T>(data), src, tag, group);
}
DIST_API void send(const Tensor& data, int dst, int tag = 0, const Group& group = {});
DIST_API int recv(Tensor& data, int src, int tag = 0, const Group& group = {});
DIST_API Work isend(const Tensor& data, int dst, int tag = 0, const Group& group = {});
DIST_API Work irecv(Tensor& data, int src, int tag = 0, const Group& group = {});

// One send or receive of a batch (torch.distributed.P2POp); `peer` is a rank of `group` (an
// irecv's may be any_source where recv's may).
struct P2POp {
  enum class Kind { isend, irecv };
  template <Element T>
  static P2POp isend(std::span<const T> data, int peer, int tag = 0, const Group& group = {}) {
    return {Kind::isend, detail::input_of(data), {}, peer, tag, group};
  }
  template <Element T>
  static P2POp irecv(std::span<T> data, int peer, int tag = 0, const Group& group = {}) {
    return {Kind::irecv, {}, detail::buffer_of(data), peer, tag, group};
  }
  static P2POp isend(const Tensor& data, int peer, int tag = 0, const Group& group = {}) {
    return {Kind::isend, detail::input_of(data), {}, peer, tag, group};
  }
  static P2POp irecv(Tensor& data, int peer, int tag = 0, const Group& group = {}) {
    return {Kind::irecv, {}, detail::buffer_of(data), peer, tag, group};
  }
  // The operation's buffer, as its checks read it.
  detail::ConstBufferRef data() const { return kind == Kind::isend ? sent : received; }

  Kind kind = Kind::isend;
  detail::ConstBufferRef sent;  // an isend's (empty for an irecv)
  detail::BufferRef received;   // an irecv's (empty for an isend)
  int peer = 0;
  int tag = 0;
  Group group;
};

// Posts every operation of `ops` before any completes, so sends and receives that wait on each
// other (a ring exchange) never deadlock in one batch; returns their Works, in the order of
// `ops`, each to be waited. The operations share one group. Every operation's arguments are
// checked before any is posted: an InvalidArgument names the first bad one ("ops[2]").
DIST_API std::vector<Work> batch_isend_irecv(const std::vector<P2POp>& ops);

}  // namespace dist
