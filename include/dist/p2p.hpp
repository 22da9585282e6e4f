// Point-to-point messages: send/recv (blocking) and isend/irecv (returning a Work). `dst`/`src`
// are ranks within `group`; a recv matches the oldest unmatched send from `src` with the same tag.
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
  return detail::issued_send(detail::send(detail::buffer_of(data), dst, tag, group),
                             detail::buffer_of(data));
}
template <Element T> Work irecv(std::span<T> data, int src, int tag = 0, const Group& group = {}) {
  return detail::issued(detail::recv(detail::buffer_of(data), src, tag, group));
}
template <Element T> void send(std::span<T> data, int dst, int tag = 0, const Group& group = {}) {
  detail::send(detail::buffer_of(data), dst, tag, group).wait();
}
template <Element T> void recv(std::span<T> data, int src, int tag = 0, const Group& group = {}) {
  detail::recv(detail::buffer_of(data), src, tag, group).wait();
}
template <Element T>
void send(const std::vector<T>& data, int dst, int tag = 0, const Group& group = {}) {
  send(std::span<const T>(data), dst, tag, group);
}
template <Element T>
void recv(std::vector<T>& data, int src, int tag = 0, const Group& group = {}) {
  recv(std::span<T>(data), src, tag, group);
}
DIST_API void send(const Tensor& data, int dst, int tag = 0, const Group& group = {});
DIST_API void recv(Tensor& data, int src, int tag = 0, const Group& group = {});
DIST_API Work isend(const Tensor& data, int dst, int tag = 0, const Group& group = {});
DIST_API Work irecv(Tensor& data, int src, int tag = 0, const Group& group = {});

}  // namespace dist
