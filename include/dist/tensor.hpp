// dist::Tensor: a dense, contiguous n-dimensional array with a dtype, a shape and a device. It owns
// its storage or views someone else's; copies share storage (like torch). Interchanges through DLPack.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "dist/errors.hpp"
#include "dist/export.hpp"
#include "dist/types.hpp"

struct DLManagedTensor;

namespace dist {

class DIST_API Tensor {
 public:
  // An empty float32 tensor of shape {0} on the cpu.
  Tensor();

  // A new owning tensor; the contents are uninitialised (empty) or zero (zeros).
  static Tensor empty(std::vector<std::int64_t> shape, DType dtype, Device device = Device::cpu());
  static Tensor zeros(std::vector<std::int64_t> shape, DType dtype, Device device = Device::cpu());
  // A new owning cpu tensor holding `values`; the shape defaults to {values.size()}.
  template <Element T>
  static Tensor from(std::vector<T> values, std::vector<std::int64_t> shape = {});
  // A non-owning view of memory the caller keeps alive; the shape defaults to {values.size()}.
  // The elements must not be const (a collective may write through the tensor).
  template <Element T>
  static Tensor view(std::span<T> values, std::vector<std::int64_t> shape = {});
  static Tensor view(void* data, DType dtype, std::vector<std::int64_t> shape,
                     Device device = Device::cpu());

  // Imports a DLPack tensor (contiguous, of a supported dtype, on cpu or cuda) and takes
  // ownership of it: its deleter runs when the last Tensor sharing the storage goes away.
  static Tensor from_dlpack(DLManagedTensor* managed);
  // Exports to DLPack; the returned tensor keeps this storage alive until its deleter is called.
  DLManagedTensor* to_dlpack() const;

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  Device device() const { return device_; }
  std::size_t numel() const;
  std::size_t nbytes() const { return numel() * dtype_size(dtype_); }
  bool is_owning() const { return static_cast<bool>(storage_); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  // The elements as a typed span; throws InvalidArgument if T is not the dtype or the tensor is
  // not on the cpu.
  template <Element T> std::span<T> values();
  template <Element T> std::span<const T> values() const;

  // An owning deep copy on the same device.
  Tensor clone() const;
  // This tensor on `device` (itself when already there, else a copy).
  Tensor to(Device device) const;
  // Copies `src` (same dtype and element count, any shape or device) into this tensor.
  void copy_from(const Tensor& src);
  // A view sharing the storage with a different shape of the same element count.
  Tensor reshape(std::vector<std::int64_t> shape) const;
  // A view sharing the storage of the elements [offset, offset + numel(shape)).
  Tensor sub(std::size_t offset, std::vector<std::int64_t> shape) const;

 private:
  Tensor(std::shared_ptr<void> storage, void* data, DType dtype, std::vector<std::int64_t> shape,
         Device device);
  void check_typed_access(DType requested) const;

  std::shared_ptr<void> storage_;  // empty for views
  void* data_ = nullptr;
  DType dtype_ = DType::float32;
  std::vector<std::int64_t> shape_{0};
  Device device_{};
};

template <Element T>
Tensor Tensor::from(std::vector<T> values, std::vector<std::int64_t> shape) {
  if (shape.empty()) shape = {static_cast<std::int64_t>(values.size())};
  auto owner = std::make_shared<std::vector<T>>(std::move(values));
  void* data = owner->data();
  Tensor t(std::shared_ptr<void>(owner, data), data, dtype_v<T>, std::move(shape), Device::cpu());
  if (t.numel() != owner->size())
    throw InvalidArgument("Tensor::from: shape does not hold " + std::to_string(owner->size()) +
                          " elements");
  return t;
}

template <Element T>
Tensor Tensor::view(std::span<T> values, std::vector<std::int64_t> shape) {
  static_assert(!std::is_const_v<T>,
                "dist: Tensor::view makes a tensor the collectives may write through: pass a "
                "std::span<T> of non-const elements (a read-only input takes the span itself)");
  if (shape.empty()) shape = {static_cast<std::int64_t>(values.size())};
  Tensor t = view(const_cast<std::remove_cv_t<T>*>(values.data()), dtype_v<T>, std::move(shape));
  if (t.numel() != values.size())
    throw InvalidArgument("Tensor::view: shape does not hold " + std::to_string(values.size()) +
                          " elements");
  return t;
}

template <Element T> std::span<T> Tensor::values() {
  check_typed_access(dtype_v<T>);
  return {static_cast<T*>(data_), numel()};
}

template <Element T> std::span<const T> Tensor::values() const {
  check_typed_access(dtype_v<T>);
  return {static_cast<const T*>(data_), numel()};
}

}  // namespace dist
