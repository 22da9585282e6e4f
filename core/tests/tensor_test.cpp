// Unit tests for dist::Tensor: factories, typed access checks, copies and views, DLPack export and
// import (ownership, deleter counts, rejections), cuda views in a build without CUDA, and cuda
// tensors through a registered device-memory provider.
#include <gtest/gtest.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/device_memory.hpp"
#include "dist/tensor.hpp"

namespace dist {
namespace {

// Expects `f` to throw InvalidArgument whose message contains every one of `parts`.
template <class F>
void expect_invalid(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
  }
}

TEST(Tensor, DefaultIsEmptyFloat32) {
  Tensor t;
  EXPECT_EQ(t.dtype(), DType::float32);
  EXPECT_EQ(t.shape(), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(t.numel(), 0u);
  EXPECT_EQ(t.nbytes(), 0u);
  EXPECT_TRUE(t.device().is_cpu());
  EXPECT_TRUE(t.values<float>().empty());
}

TEST(Tensor, EmptyAndZeros) {
  Tensor e = Tensor::empty({2, 3, 4}, DType::float64);
  EXPECT_EQ(e.numel(), 24u);
  EXPECT_EQ(e.nbytes(), 192u);
  EXPECT_TRUE(e.is_owning());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(e.data()) % 64, 0u) << "storage is 64-byte aligned";
  Tensor z = Tensor::zeros({5}, DType::int32);
  for (std::int32_t v : z.values<std::int32_t>()) EXPECT_EQ(v, 0);
  Tensor scalar = Tensor::zeros({}, DType::float16);
  EXPECT_EQ(scalar.numel(), 1u);
  EXPECT_EQ(scalar.nbytes(), 2u);
  EXPECT_EQ(Tensor::empty({3, 0}, DType::uint8).numel(), 0u);
  expect_invalid([] { (void)Tensor::empty({2, -1}, DType::int8); }, {"negative", "-1"});
  expect_invalid([] { (void)Tensor::zeros({-3}, DType::int8); }, {"negative"});
  expect_invalid([] { (void)Tensor::empty({1LL << 62, 1LL << 62}, DType::int8); }, {"too large"});
}

TEST(Tensor, FromAndView) {
  Tensor t = Tensor::from(std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.dtype(), DType::int64);
  EXPECT_EQ(t.shape(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_TRUE(t.is_owning());
  EXPECT_EQ(t.values<std::int64_t>()[5], 6);
  expect_invalid([] { (void)Tensor::from(std::vector<float>{1, 2, 3}, {2, 2}); }, {"3"});

  std::vector<double> host{1.5, 2.5, 3.5};
  Tensor v = Tensor::view(std::span<double>(host));
  EXPECT_FALSE(v.is_owning());
  EXPECT_EQ(v.data(), host.data());
  EXPECT_EQ(v.shape(), (std::vector<std::int64_t>{3}));
  v.values<double>()[1] = 9.0;
  EXPECT_EQ(host[1], 9.0);
  Tensor cv = Tensor::view(std::span<double>(host), {3, 1});
  EXPECT_EQ(cv.shape(), (std::vector<std::int64_t>{3, 1}));
  expect_invalid([&] { (void)Tensor::view(std::span<double>(host), {4}); }, {"3"});
  expect_invalid([] { (void)Tensor::view(nullptr, DType::int8, {2}); }, {"null"});
  EXPECT_EQ(Tensor::view(nullptr, DType::int8, {0}).numel(), 0u);
}

TEST(Tensor, TypedAccessChecksDtype) {
  Tensor t = Tensor::zeros({4}, DType::float32);
  EXPECT_EQ(t.values<float>().size(), 4u);
  const Tensor& ct = t;
  EXPECT_EQ(ct.values<const float>().size(), 4u);
  expect_invalid([&] { (void)t.values<double>(); }, {"float32", "float64"});
  expect_invalid([&] { (void)ct.values<std::int32_t>(); }, {"float32", "int32"});
  Tensor h = Tensor::zeros({2}, DType::float16);
  EXPECT_EQ(h.values<float16>()[0], float16::from_bits(0));
  expect_invalid([&] { (void)h.values<bfloat16>(); }, {"float16", "bfloat16"});
}

TEST(Tensor, CloneIsIndependent) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3});
  Tensor shared = a;  // copies share storage
  Tensor b = a.clone();
  EXPECT_NE(b.data(), a.data());
  EXPECT_EQ(b.shape(), a.shape());
  EXPECT_TRUE(b.is_owning());
  b.values<float>()[0] = 42;
  EXPECT_EQ(a.values<float>()[0], 1.0f);
  a.values<float>()[1] = 7;
  EXPECT_EQ(shared.values<float>()[1], 7.0f);
  EXPECT_EQ(b.values<float>()[1], 2.0f);
  EXPECT_EQ(Tensor().clone().numel(), 0u);
}

TEST(Tensor, SubAliasesAndChecksRange) {
  Tensor t = Tensor::from(std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  Tensor s = t.sub(2, {2, 2});
  EXPECT_EQ(s.shape(), (std::vector<std::int64_t>{2, 2}));
  EXPECT_TRUE(s.is_owning());
  EXPECT_EQ(s.data(), static_cast<std::int32_t*>(t.data()) + 2);
  EXPECT_EQ(s.values<std::int32_t>()[0], 2);
  s.values<std::int32_t>()[3] = 50;
  EXPECT_EQ(t.values<std::int32_t>()[5], 50);
  EXPECT_EQ(t.sub(8, {0}).numel(), 0u);
  EXPECT_EQ(t.sub(0, {8}).data(), t.data());
  expect_invalid([&] { (void)t.sub(7, {2}); }, {"out of range", "8"});
  expect_invalid([&] { (void)t.sub(9, {0}); }, {"out of range"});
  expect_invalid([&] { (void)t.sub(0, {-1}); }, {"negative"});
  Tensor kept = t.sub(4, {4});
  t = Tensor();  // the view keeps the storage alive
  EXPECT_EQ(kept.values<std::int32_t>()[1], 50);
}

TEST(Tensor, ReshapeSharesStorage) {
  Tensor t = Tensor::zeros({6}, DType::uint8);
  Tensor r = t.reshape({2, 3});
  EXPECT_EQ(r.data(), t.data());
  EXPECT_EQ(r.shape(), (std::vector<std::int64_t>{2, 3}));
  r.values<std::uint8_t>()[4] = 9;
  EXPECT_EQ(t.values<std::uint8_t>()[4], 9);
  EXPECT_EQ(Tensor::zeros({1}, DType::int8).reshape({}).numel(), 1u);
  expect_invalid([&] { (void)t.reshape({4}); }, {"4", "6"});
}

TEST(Tensor, CopyFrom) {
  Tensor dst = Tensor::zeros({2, 2}, DType::float64);
  Tensor src = Tensor::from(std::vector<double>{1, 2, 3, 4});
  dst.copy_from(src);
  EXPECT_EQ(dst.values<double>()[3], 4.0);
  EXPECT_NE(dst.data(), src.data());
  dst.copy_from(dst);  // copying onto itself is a no-op
  EXPECT_EQ(dst.values<double>()[0], 1.0);
  expect_invalid([&] { dst.copy_from(Tensor::zeros({4}, DType::float32)); },
                 {"float64", "float32"});
  expect_invalid([&] { dst.copy_from(Tensor::zeros({3}, DType::float64)); }, {"3", "4"});
}

TEST(Tensor, ToSameDeviceIsItself) {
  Tensor t = Tensor::zeros({3}, DType::int8);
  EXPECT_EQ(t.to(Device::cpu()).data(), t.data());
}

TEST(Tensor, CudaViewsWithoutCuda) {
  alignas(64) static float fake_device_memory[6];
  Tensor v = Tensor::view(fake_device_memory, DType::float32, {2, 3}, Device::cuda(1));
  EXPECT_EQ(v.device(), Device::cuda(1));
  EXPECT_EQ(v.shape(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(v.numel(), 6u);
  EXPECT_EQ(v.nbytes(), 24u);
  EXPECT_EQ(v.data(), fake_device_memory);
  EXPECT_FALSE(v.is_owning());
  Tensor s = v.sub(3, {3});
  EXPECT_EQ(s.device(), Device::cuda(1));
  EXPECT_EQ(s.data(), fake_device_memory + 3);
  EXPECT_EQ(v.reshape({6}).device(), Device::cuda(1));
  EXPECT_EQ(v.to(Device::cuda(1)).data(), v.data());
  expect_invalid([&] { (void)v.values<float>(); }, {"cuda:1", "cpu"});
  expect_invalid([&] { (void)v.clone(); }, {"without CUDA", "cuda:1"});
  expect_invalid([&] { (void)v.to(Device::cpu()); }, {"without CUDA", "cuda:1"});
  expect_invalid([] { (void)Tensor::empty({2}, DType::int8, Device::cuda(2)); },
                 {"without CUDA", "cuda:2"});
  expect_invalid([] { (void)Tensor::zeros({2}, DType::int8, Device::cuda()); },
                 {"without CUDA", "cuda:0"});
  Tensor host = Tensor::zeros({6}, DType::float32);
  expect_invalid([&] { (void)host.to(Device::cuda(3)); }, {"without CUDA", "cuda:3"});
  expect_invalid([&] { host.copy_from(v); }, {"without CUDA", "cuda:1"});
  expect_invalid([&] { v.copy_from(host); }, {"without CUDA", "cuda:1"});
}

// A hand-made DLManagedTensor over memory the test owns; its deleter only counts its calls.
struct FakeDlpack {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // empty: null strides
  int deleted = 0;
  DLManagedTensor managed{};

  explicit FakeDlpack(std::vector<std::int64_t> dims, std::vector<std::int64_t> steps = {})
      : shape(std::move(dims)), strides(std::move(steps)) {}

  DLManagedTensor* make(void* data, DLDataType dtype, DLDevice device = {kDLCPU, 0}) {
    managed.dl_tensor = {data, device, static_cast<int>(shape.size()), dtype, shape.data(),
                         strides.empty() ? nullptr : strides.data(), 0};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* m) { ++static_cast<FakeDlpack*>(m->manager_ctx)->deleted; };
    return &managed;
  }
};

// Wraps an exported tensor's deleter so the test can count its calls.
int wrapped_deleter_calls = 0;
void (*wrapped_deleter)(DLManagedTensor*) = nullptr;
DLManagedTensor* count_deleter(DLManagedTensor* m) {
  wrapped_deleter_calls = 0;
  wrapped_deleter = m->deleter;
  m->deleter = [](DLManagedTensor* self) {
    ++wrapped_deleter_calls;
    wrapped_deleter(self);
  };
  return m;
}

TEST(TensorDlpack, ExportDescribesTheTensorAndKeepsItAlive) {
  Tensor t = Tensor::from(std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}, {3, 2});
  void* data = t.data();
  DLManagedTensor* m = t.to_dlpack();
  t = Tensor();  // the export keeps the storage alive
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.data, data);
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.device.device_id, 0);
  ASSERT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 3);
  EXPECT_EQ(dl.shape[1], 2);
  EXPECT_EQ(dl.strides, nullptr);
  EXPECT_EQ(dl.byte_offset, 0u);
  EXPECT_EQ(dl.dtype.code, kDLUInt);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(static_cast<std::uint32_t*>(dl.data)[5], 6u);
  m->deleter(m);

  DLManagedTensor* scalar = Tensor::zeros({}, DType::bfloat16).to_dlpack();
  EXPECT_EQ(scalar->dl_tensor.ndim, 0);
  EXPECT_EQ(scalar->dl_tensor.dtype.code, kDLBfloat);
  EXPECT_EQ(scalar->dl_tensor.dtype.bits, 16);
  scalar->deleter(scalar);
}

TEST(TensorDlpack, RoundTripSharesDataAndDeletesOnce) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_dlpack(count_deleter(a.to_dlpack()));
  EXPECT_EQ(b.data(), a.data());
  EXPECT_EQ(b.dtype(), DType::float32);
  EXPECT_EQ(b.shape(), a.shape());
  EXPECT_TRUE(b.device().is_cpu());
  EXPECT_TRUE(b.is_owning());
  Tensor copy = b;
  Tensor part = b.sub(1, {3});
  Tensor shaped = b.reshape({4});
  a = Tensor();
  b = Tensor();
  copy = Tensor();
  shaped = Tensor();
  EXPECT_EQ(wrapped_deleter_calls, 0);
  EXPECT_EQ(part.values<float>()[2], 4.0f);  // still alive through the manager context
  part = Tensor();
  EXPECT_EQ(wrapped_deleter_calls, 1);
}

TEST(TensorDlpack, ImportsEveryDtype) {
  const DLDataType codes[] = {{kDLInt, 8, 1},   {kDLUInt, 8, 1},  {kDLInt, 32, 1},
                              {kDLUInt, 32, 1}, {kDLInt, 64, 1},  {kDLUInt, 64, 1},
                              {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLFloat, 32, 1},
                              {kDLFloat, 64, 1}};
  alignas(8) static std::uint8_t bytes[64];
  for (std::size_t i = 0; i < std::size(all_dtypes); ++i) {
    FakeDlpack fake({2});
    {
      Tensor t = Tensor::from_dlpack(fake.make(bytes, codes[i]));
      EXPECT_EQ(t.dtype(), all_dtypes[i]) << to_string(all_dtypes[i]);
      EXPECT_EQ(fake.deleted, 0);
    }
    EXPECT_EQ(fake.deleted, 1);
  }
}

TEST(TensorDlpack, HonoursByteOffsetAndCompactStrides) {
  std::vector<std::int32_t> data(8);
  std::iota(data.begin(), data.end(), 0);
  FakeDlpack fake({2, 3}, {3, 1});
  DLManagedTensor* m = fake.make(data.data(), {kDLInt, 32, 1});
  m->dl_tensor.byte_offset = 2 * sizeof(std::int32_t);
  Tensor t = Tensor::from_dlpack(m);
  EXPECT_EQ(t.data(), data.data() + 2);
  EXPECT_EQ(t.values<std::int32_t>()[0], 2);
  EXPECT_EQ(t.values<std::int32_t>()[5], 7);
  t = Tensor();
  EXPECT_EQ(fake.deleted, 1);

  FakeDlpack unit({1, 4, 1}, {99, 1, 7});  // size-1 dims: any stride
  EXPECT_EQ(Tensor::from_dlpack(unit.make(data.data(), {kDLInt, 32, 1})).numel(), 4u);
  EXPECT_EQ(unit.deleted, 1);

  FakeDlpack no_deleter({2});
  DLManagedTensor* nd = no_deleter.make(data.data(), {kDLInt, 32, 1});
  nd->deleter = nullptr;
  EXPECT_EQ(Tensor::from_dlpack(nd).values<std::int32_t>()[1], 1);
}

TEST(TensorDlpack, RejectionsCallTheDeleterOnce) {
  static double data[16];
  const auto rejected = [](FakeDlpack& fake, DLManagedTensor* m,
                           std::initializer_list<std::string> parts) {
    expect_invalid([&] { (void)Tensor::from_dlpack(m); }, parts);
    EXPECT_EQ(fake.deleted, 1);
  };
  FakeDlpack complex({2});
  rejected(complex, complex.make(data, {kDLComplex, 64, 1}), {"unsupported dtype"});
  FakeDlpack int16({2});
  rejected(int16, int16.make(data, {kDLInt, 16, 1}), {"unsupported dtype", "16 bits"});
  FakeDlpack lanes({2});
  rejected(lanes, lanes.make(data, {kDLFloat, 32, 4}), {"unsupported dtype", "4 lanes"});
  FakeDlpack strided({2, 3}, {1, 2});
  rejected(strided, strided.make(data, {kDLFloat, 64, 1}), {"compact", "stride 2"});
  FakeDlpack transposed({3, 4}, {1, 3});
  rejected(transposed, transposed.make(data, {kDLFloat, 64, 1}), {"compact"});
  FakeDlpack opencl({2});
  rejected(opencl, opencl.make(data, {kDLFloat, 64, 1}, {kDLOpenCL, 0}), {"unsupported device"});
  FakeDlpack negative({2, -2});
  rejected(negative, negative.make(data, {kDLFloat, 64, 1}), {"negative"});
  FakeDlpack null_data({2});
  rejected(null_data, null_data.make(nullptr, {kDLFloat, 64, 1}), {"null data"});
  expect_invalid([] { (void)Tensor::from_dlpack(nullptr); }, {"null"});
}

TEST(TensorDlpack, CudaTensorsKeepTheirDevice) {
  alignas(64) static std::uint8_t fake_device_memory[32];
  FakeDlpack fake({4, 2});
  Tensor t = Tensor::from_dlpack(fake.make(fake_device_memory, {kDLFloat, 32, 1}, {kDLCUDA, 2}));
  EXPECT_EQ(t.device(), Device::cuda(2));
  EXPECT_EQ(t.data(), fake_device_memory);
  EXPECT_EQ(t.numel(), 8u);
  expect_invalid([&] { (void)t.values<float>(); }, {"cuda:2"});
  DLManagedTensor* out = t.sub(2, {6}).to_dlpack();
  EXPECT_EQ(out->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(out->dl_tensor.device.device_id, 2);
  EXPECT_EQ(out->dl_tensor.data, fake_device_memory + 8);
  t = Tensor();
  EXPECT_EQ(fake.deleted, 0) << "the export keeps the imported storage alive";
  out->deleter(out);
  EXPECT_EQ(fake.deleted, 1);
}

// With a provider registered (a build with the nccl backend registers CUDA's), cuda tensors are
// allocated, zeroed and copied through it. This fake keeps "device" memory on the host.
class HostBackedDeviceMemory final : public dist::core::DeviceMemory {
 public:
  std::shared_ptr<void> allocate(Device device, std::size_t bytes) override {
    devices.push_back(device);
    return std::shared_ptr<void>(new std::byte[bytes + 1], [](void* p) { delete[] static_cast<std::byte*>(p); });
  }
  void copy(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) override {
    copies.push_back(to_string(src_device) + "->" + to_string(dst_device));
    std::memcpy(dst, src, bytes);
  }
  void zero(void* data, Device device, std::size_t bytes) override {
    devices.push_back(device);
    std::memset(data, 0, bytes);
  }
  std::vector<Device> devices;
  std::vector<std::string> copies;
};

TEST(Tensor, CudaTensorsGoThroughTheRegisteredDeviceMemory) {
  HostBackedDeviceMemory memory;
  dist::core::set_device_memory(&memory);
  const Tensor host = Tensor::from(std::vector<float>{1, 2, 3});
  const Tensor on_gpu = host.to(Device::cuda(1));
  EXPECT_EQ(on_gpu.device(), Device::cuda(1));
  EXPECT_TRUE(on_gpu.is_owning());
  const Tensor zeros = Tensor::zeros({2}, DType::int32, Device::cuda(0));
  const Tensor copy = on_gpu.clone();
  const Tensor back = copy.to(Device::cpu());
  Tensor target = Tensor::zeros({3}, DType::float32);
  target.copy_from(on_gpu);
  dist::core::set_device_memory(nullptr);
  EXPECT_EQ(back.values<float>()[2], 3.0f);
  EXPECT_EQ(target.values<float>()[0], 1.0f);
  EXPECT_EQ(zeros.to(Device::cuda(0)).data(), zeros.data());  // same device: no copy
  EXPECT_EQ(memory.devices, (std::vector<Device>{Device::cuda(1), Device::cuda(0), Device::cuda(0),
                                                 Device::cuda(1)}));
  EXPECT_EQ(memory.copies, (std::vector<std::string>{"cpu->cuda:1", "cuda:1->cuda:1", "cuda:1->cpu",
                                                     "cuda:1->cpu"}));
  expect_invalid([] { (void)Tensor::empty({2}, DType::int8, Device::cuda(0)); }, {"without CUDA"});
}

}  // namespace
}  // namespace dist
