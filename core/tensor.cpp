// dist::Tensor: 64-byte-aligned cpu storage, views (sub, reshape), copies, and DLPack import/export.
// cuda memory comes from the registered DeviceMemory (core/device_memory.hpp), when there is one.
#include "dist/tensor.hpp"

#include <dlpack/dlpack.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "core/device_memory.hpp"

namespace dist {
namespace {

constexpr std::align_val_t storage_alignment{64};

// The cuda memory provider, or InvalidArgument saying there is none.
core::DeviceMemory& cuda_memory(std::string_view what, Device device) {
  if (auto* memory = core::device_memory()) return *memory;
  throw InvalidArgument(std::string(what) + ": this program has no CUDA memory (dist was built " +
                        "without CUDA, or its nccl backend is not linked), so it cannot allocate " +
                        "or copy memory on " + to_string(device));
}

// The element count of `shape`; throws for a negative dimension or a size that overflows.
std::size_t checked_numel(const std::vector<std::int64_t>& shape, DType dtype,
                          std::string_view what) {
  const std::size_t limit = std::numeric_limits<std::size_t>::max() / dtype_size(dtype);
  std::size_t n = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      throw InvalidArgument(std::string(what) + ": dimension " + std::to_string(i) +
                            " is negative (" + std::to_string(shape[i]) + ")");
    const auto d = static_cast<std::size_t>(shape[i]);
    if (d != 0 && n > limit / d)
      throw InvalidArgument(std::string(what) + ": shape is too large to address");
    n *= d;
  }
  return n;
}

std::shared_ptr<void> allocate_cpu(std::size_t bytes) {
  void* p = ::operator new(bytes, storage_alignment);
  return {p, [](void* q) { ::operator delete(q, storage_alignment); }};
}

void* offset_bytes(void* data, std::size_t bytes) {
  return bytes == 0 ? data : static_cast<void*>(static_cast<std::byte*>(data) + bytes);
}

DLDataType dl_dtype(DType dtype) {
  const auto bits = static_cast<std::uint8_t>(dtype_size(dtype) * 8);
  switch (dtype) {
    case DType::int8:
    case DType::int32:
    case DType::int64: return {kDLInt, bits, 1};
    case DType::uint8:
    case DType::uint32:
    case DType::uint64: return {kDLUInt, bits, 1};
    case DType::bfloat16: return {kDLBfloat, bits, 1};
    case DType::float16:
    case DType::float32:
    case DType::float64: return {kDLFloat, bits, 1};
  }
  throw InvalidArgument("to_dlpack: unknown dtype");
}

std::string describe(DLDataType t) {
  return "code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " +
         std::to_string(t.lanes) + " lanes";
}

DType dtype_from_dl(DLDataType t) {
  for (DType d : all_dtypes) {
    const DLDataType want = dl_dtype(d);
    if (t.code == want.code && t.bits == want.bits && t.lanes == want.lanes) return d;
  }
  throw InvalidArgument("from_dlpack: unsupported dtype (" + describe(t) + ")");
}

DLDevice dl_device(Device device) {
  if (device.is_cuda()) return {kDLCUDA, device.index};
  return {kDLCPU, 0};
}

Device device_from_dl(DLDevice d) {
  if (d.device_type == kDLCPU) return Device::cpu();
  if (d.device_type == kDLCUDA && d.device_id >= 0) return Device::cuda(d.device_id);
  throw InvalidArgument("from_dlpack: unsupported device (type " +
                        std::to_string(static_cast<int>(d.device_type)) + ", id " +
                        std::to_string(d.device_id) + "); only cpu and cuda are supported");
}

std::vector<std::int64_t> shape_from_dl(const DLTensor& dl) {
  if (dl.ndim < 0) throw InvalidArgument("from_dlpack: negative ndim " + std::to_string(dl.ndim));
  if (dl.ndim > 0 && dl.shape == nullptr) throw InvalidArgument("from_dlpack: null shape");
  return std::vector<std::int64_t>(dl.shape, dl.shape + dl.ndim);
}

// Throws unless `dl` is compact row-major (null strides, or the compact ones; size-1 dims and
// empty tensors may carry any stride).
void check_compact(const DLTensor& dl, const std::vector<std::int64_t>& shape, std::size_t numel) {
  if (dl.strides == nullptr || numel == 0) return;
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && dl.strides[i] != expected)
      throw InvalidArgument("from_dlpack: only compact row-major tensors are supported, but dim " +
                            std::to_string(i) + " has stride " + std::to_string(dl.strides[i]) +
                            " (expected " + std::to_string(expected) + ")");
    expected *= shape[i];
  }
}

// What an exported DLManagedTensor points into: the storage it keeps alive and its shape.
struct ExportContext {
  std::shared_ptr<void> owner;
  std::vector<std::int64_t> shape;
  DLManagedTensor managed{};
};

}  // namespace

Tensor::Tensor() = default;

Tensor::Tensor(std::shared_ptr<void> storage, void* data, DType dtype,
               std::vector<std::int64_t> shape, Device device)
    : storage_(std::move(storage)), data_(data), dtype_(dtype), shape_(std::move(shape)),
      device_(device) {
  checked_numel(shape_, dtype_, "Tensor");
}

std::size_t Tensor::numel() const {
  std::size_t n = 1;
  for (std::int64_t d : shape_) n *= static_cast<std::size_t>(d);
  return n;
}

Tensor Tensor::empty(std::vector<std::int64_t> shape, DType dtype, Device device) {
  const std::size_t n = checked_numel(shape, dtype, "Tensor::empty");
  auto storage = device.is_cuda() ? cuda_memory("Tensor::empty", device).allocate(device, n * dtype_size(dtype))
                                  : allocate_cpu(n * dtype_size(dtype));
  void* data = storage.get();
  return Tensor(std::move(storage), data, dtype, std::move(shape), device);
}

Tensor Tensor::zeros(std::vector<std::int64_t> shape, DType dtype, Device device) {
  Tensor t = empty(std::move(shape), dtype, device);
  if (device.is_cuda()) cuda_memory("Tensor::zeros", device).zero(t.data_, device, t.nbytes());
  else std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::view(void* data, DType dtype, std::vector<std::int64_t> shape, Device device) {
  const std::size_t n = checked_numel(shape, dtype, "Tensor::view");
  if (data == nullptr && n != 0)
    throw InvalidArgument("Tensor::view: null data for " + std::to_string(n) + " elements");
  return Tensor(nullptr, data, dtype, std::move(shape), device);
}

void Tensor::check_typed_access(DType requested) const {
  if (!device_.is_cpu())
    throw InvalidArgument("Tensor::values: the tensor is on " + to_string(device_) +
                          "; typed element access needs a cpu tensor");
  if (requested != dtype_)
    throw InvalidArgument("Tensor::values: the tensor has dtype " + std::string(to_string(dtype_)) +
                          " but " + std::string(to_string(requested)) + " was requested");
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_, device_);
  t.copy_from(*this);
  return t;
}

Tensor Tensor::to(Device device) const {
  if (device == device_) return *this;
  Tensor t = empty(shape_, dtype_, device);
  t.copy_from(*this);
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  if (src.dtype_ != dtype_)
    throw InvalidArgument("Tensor::copy_from: dtype mismatch: destination is " +
                          std::string(to_string(dtype_)) + ", source is " +
                          std::string(to_string(src.dtype_)));
  if (src.numel() != numel())
    throw InvalidArgument("Tensor::copy_from: element count mismatch: destination has " +
                          std::to_string(numel()) + ", source has " + std::to_string(src.numel()));
  if (nbytes() == 0 || (data_ == src.data_ && device_ == src.device_)) return;
  if (device_.is_cuda() || src.device_.is_cuda())
    cuda_memory("Tensor::copy_from", device_.is_cuda() ? device_ : src.device_)
        .copy(data_, device_, src.data_, src.device_, nbytes());
  else std::memmove(data_, src.data_, nbytes());
}

Tensor Tensor::reshape(std::vector<std::int64_t> shape) const {
  const std::size_t n = checked_numel(shape, dtype_, "Tensor::reshape");
  if (n != numel())
    throw InvalidArgument("Tensor::reshape: the new shape holds " + std::to_string(n) +
                          " elements, the tensor has " + std::to_string(numel()));
  return Tensor(storage_, data_, dtype_, std::move(shape), device_);
}

Tensor Tensor::sub(std::size_t offset, std::vector<std::int64_t> shape) const {
  const std::size_t n = checked_numel(shape, dtype_, "Tensor::sub");
  const std::size_t total = numel();
  if (offset > total || n > total - offset)
    throw InvalidArgument("Tensor::sub: elements [" + std::to_string(offset) + ", " +
                          std::to_string(offset) + " + " + std::to_string(n) +
                          ") are out of range for a tensor of " + std::to_string(total) +
                          " elements");
  void* data = offset_bytes(data_, offset * dtype_size(dtype_));
  return Tensor(storage_, data, dtype_, std::move(shape), device_);
}

DLManagedTensor* Tensor::to_dlpack() const {
  auto* ctx = new ExportContext{storage_, shape_, {}};
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = data_;
  dl.device = dl_device(device_);
  dl.ndim = static_cast<int>(ctx->shape.size());
  dl.dtype = dl_dtype(dtype_);
  dl.shape = ctx->shape.data();
  dl.strides = nullptr;
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
  };
  return &ctx->managed;
}

Tensor Tensor::from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) throw InvalidArgument("from_dlpack: null DLManagedTensor");
  // Owned from here on: every rejection below releases it exactly once, as does the last Tensor.
  std::shared_ptr<DLManagedTensor> owner(managed, [](DLManagedTensor* m) {
    if (m->deleter != nullptr) m->deleter(m);
  });
  const DLTensor& dl = managed->dl_tensor;
  const DType dtype = dtype_from_dl(dl.dtype);
  const Device device = device_from_dl(dl.device);
  std::vector<std::int64_t> shape = shape_from_dl(dl);
  const std::size_t n = checked_numel(shape, dtype, "from_dlpack");
  check_compact(dl, shape, n);
  if (dl.data == nullptr && n != 0)
    throw InvalidArgument("from_dlpack: null data for " + std::to_string(n) + " elements");
  void* data = offset_bytes(dl.data, dl.byte_offset);
  return Tensor(std::move(owner), data, dtype, std::move(shape), device);
}

}  // namespace dist

namespace dist::core {
namespace {
std::atomic<DeviceMemory*>& provider() {
  static std::atomic<DeviceMemory*> memory{nullptr};
  return memory;
}
}  // namespace

DeviceMemory* device_memory() { return provider().load(std::memory_order_acquire); }
void set_device_memory(DeviceMemory* memory) { provider().store(memory, std::memory_order_release); }

}  // namespace dist::core
