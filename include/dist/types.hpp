// Core value types of the public API: element types (DType, float16, bfloat16), reduction
// operations (ReduceOp and its MMEngine string names), backends and devices.
#pragma once

#include <bit>
#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "dist/export.hpp"

namespace dist {

// IEEE 754 binary16, stored as its bits. Converts to and from float with round-to-nearest-even.
struct DIST_API float16 {
  std::uint16_t bits = 0;
  float16() = default;
  explicit float16(float value);
  explicit operator float() const;
  static constexpr float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  friend bool operator==(float16 a, float16 b) { return a.bits == b.bits; }
};

// bfloat16 (the upper half of an IEEE binary32), stored as its bits; round-to-nearest-even.
struct DIST_API bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float value);
  explicit operator float() const;
  static constexpr bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  friend bool operator==(bfloat16 a, bfloat16 b) { return a.bits == b.bits; }
};

// The element types every collective accepts.
enum class DType : std::uint8_t {
  int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, float64
};
inline constexpr DType all_dtypes[] = {DType::int8,    DType::uint8,   DType::int32,
                                       DType::uint32,  DType::int64,   DType::uint64,
                                       DType::float16, DType::bfloat16, DType::float32,
                                       DType::float64};

DIST_API std::string_view to_string(DType dtype);
DIST_API std::size_t dtype_size(DType dtype);
DIST_API bool is_floating(DType dtype);

template <class T> struct dtype_of;
template <> struct dtype_of<std::int8_t> { static constexpr DType value = DType::int8; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::uint8; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::int32; };
template <> struct dtype_of<std::uint32_t> { static constexpr DType value = DType::uint32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::int64; };
template <> struct dtype_of<std::uint64_t> { static constexpr DType value = DType::uint64; };
template <> struct dtype_of<float16> { static constexpr DType value = DType::float16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::bfloat16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::float64; };
// `long long` is a distinct type from int64_t on LP64 Linux; map it (and its unsigned twin) too.
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) == 8 &&
           !std::is_same_v<T, std::int64_t> && !std::is_same_v<T, std::uint64_t>)
struct dtype_of<T> {
  static constexpr DType value = std::is_signed_v<T> ? DType::int64 : DType::uint64;
};

// An element type a collective accepts (cv-qualifiers are ignored).
template <class T>
concept Element = requires { dtype_of<std::remove_cv_t<T>>::value; };

template <Element T> inline constexpr DType dtype_v = dtype_of<std::remove_cv_t<T>>::value;

// Reduction operations. `mean` is a sum divided by the group size (exact for integers:
// the wrapped integer sum divided with truncation toward zero).
enum class ReduceOp : std::uint8_t { sum, mean, product, min, max, band, bor, bxor };

DIST_API std::string_view to_string(ReduceOp op);
// Parses MMEngine's names case-insensitively ("sum", "mean", "product", "min", "max", "band",
// "bor", "bxor"); returns nothing for any other name.
DIST_API std::optional<ReduceOp> parse_reduce_op(std::string_view name);
DIST_API bool is_bitwise(ReduceOp op);
// Whether `op` may be applied to `dtype` (bitwise operations need an integer type).
DIST_API bool op_allowed(ReduceOp op, DType dtype);

// A reduction argument: a ReduceOp, or an MMEngine op name that is resolved (and rejected when
// unknown) only when the group has more than one rank, as upstream does.
class DIST_API OpArg {
 public:
  OpArg(ReduceOp op) : op_(op) {}                                   // NOLINT: implicit by design
  OpArg(const char* name) : name_(name) {}                         // NOLINT
  OpArg(std::string_view name) : name_(name) {}                    // NOLINT
  OpArg(const std::string& name) : name_(name) {}                  // NOLINT
  // The operation (sum for premul_sum); throws InvalidArgument for an unknown name.
  ReduceOp resolve() const;
  // premul_sum's factor; empty for every other op.
  std::optional<double> premul_factor() const { return premul_; }

 private:
  friend DIST_API OpArg premul_sum(double factor);
  std::optional<ReduceOp> op_;
  std::string name_;
  std::optional<double> premul_;
};

// torch's _make_nccl_premul_sum: each rank's input multiplied by `factor`, then summed (floating
// dtypes only: an integer dtype raises InvalidArgument). all_reduce scales its data in place
// before the sum; reduce and reduce_scatter scale a host copy and complete before they return
// (their _async forms too). Host buffers only.
DIST_API OpArg premul_sum(double factor);

// The communication backends. `sim` is the in-process simulated cluster.
enum class Backend : std::uint8_t { sim, gloo, nccl, mpi };
DIST_API std::string_view to_string(Backend backend);

// Where data lives: the host, or a CUDA device.
struct Device {
  enum class Kind : std::uint8_t { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;

  static constexpr Device cpu() { return {}; }
  static constexpr Device cuda(int index = 0) { return {Kind::cuda, index}; }
  bool is_cpu() const { return kind == Kind::cpu; }
  bool is_cuda() const { return kind == Kind::cuda; }
  friend bool operator==(const Device&, const Device&) = default;
};
DIST_API std::string to_string(Device device);
// Parses "cpu", "cuda" and "cuda:N"; throws InvalidArgument otherwise.
DIST_API Device parse_device(std::string_view name);

// recv's and irecv's `src` for a message from whichever rank of the group sends one (torch's
// recv with src=None): recv returns that rank, Work::source tells it.
inline constexpr int any_source = -1;

}  // namespace dist
