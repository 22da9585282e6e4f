// Names, printing and generators of collective calls (props/collective.hpp).
#include "props/collective.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace props {

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::all_reduce:
      return "all_reduce";
    case Kind::reduce:
      return "reduce";
    case Kind::broadcast:
      return "broadcast";
    case Kind::all_gather:
      return "all_gather";
    case Kind::gather:
      return "gather";
    case Kind::scatter:
      return "scatter";
    case Kind::reduce_scatter:
      return "reduce_scatter";
    case Kind::all_to_all:
      return "all_to_all";
    case Kind::barrier:
      return "barrier";
  }
  return "?";
}

std::string_view to_string(Form form) {
  switch (form) {
    case Form::vector:
      return "vector";
    case Form::span:
      return "span";
    case Form::tensor:
      return "tensor";
    case Form::async:
      return "async";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, const Call& c) {
  os << to_string(c.kind) << "(";
  if (has_data(c.kind)) os << dist::to_string(c.dtype) << " x " << c.count;
  if (has_op(c.kind)) os << ", op=" << dist::to_string(c.op);
  if (has_root(c.kind)) os << ", root=" << c.root;
  return os << ", " << to_string(c.form) << ")";
}

namespace detail {
void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(what);
}
}  // namespace detail

namespace gen {

rc::Gen<Form> form() {
  return rc::gen::element(Form::vector, Form::span, Form::tensor, Form::async);
}

rc::Gen<Call> call(Kind kind, dist::DType dtype, int size, rc::Gen<std::size_t> counts) {
  return rc::gen::apply(
      [=](dist::ReduceOp op, int root, std::size_t count, Form f) {
        return Call{.kind = kind,
                    .dtype = dtype,
                    .op = has_op(kind) ? op : dist::ReduceOp::sum,
                    .root = has_root(kind) ? root : 0,
                    .count = has_data(kind) ? count : 0,
                    .form = f};
      },
      op_for(dtype), root(size), std::move(counts), form());
}

rc::Gen<Call> any_call(dist::DType dtype, int size, rc::Gen<std::size_t> counts) {
  const std::vector<Kind> kinds(std::begin(all_kinds), std::end(all_kinds));
  return rc::gen::mapcat(rc::gen::elementOf(kinds),
                         [=](Kind k) { return call(k, dtype, size, counts); });
}

}  // namespace gen
}  // namespace props
