// The core value types: float16/bfloat16 bit-level conversions (round-to-nearest-even), and the
// names, sizes and parsers of DType, ReduceOp, Backend and Device.
#include "dist/types.hpp"

#include <array>
#include <charconv>

#include "dist/errors.hpp"

namespace dist {
namespace {

constexpr std::uint32_t f32_exp_mask = 0x7F80'0000u;
constexpr std::uint32_t f32_mant_mask = 0x007F'FFFFu;
constexpr std::uint32_t f32_quiet_bit = 0x0040'0000u;

constexpr std::uint16_t f16_exp_mask = 0x7C00u;
constexpr std::uint16_t f16_mant_mask = 0x03FFu;
constexpr std::uint16_t f16_quiet_bit = 0x0200u;

constexpr std::uint16_t bf16_quiet_bit = 0x0040u;

// Shifts `value` right by `shift` (1..31) bits, rounding to nearest with ties to even.
constexpr std::uint32_t shift_right_rne(std::uint32_t value, int shift) {
  const std::uint32_t kept = value >> shift;
  const std::uint32_t rest = value & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  const bool round_up = rest > half || (rest == half && (kept & 1u) != 0);
  return kept + (round_up ? 1u : 0u);
}

std::uint16_t float_to_half_bits(float value) {
  const auto f = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const std::uint32_t exp = (f & f32_exp_mask) >> 23;
  const std::uint32_t mant = f & f32_mant_mask;
  if (exp == 0xFF) {  // inf keeps a zero mantissa; a NaN keeps its top payload bits, made quiet
    if (mant == 0) return sign | f16_exp_mask;
    return static_cast<std::uint16_t>(sign | f16_exp_mask | f16_quiet_bit | (mant >> 13));
  }
  const int e = static_cast<int>(exp) - 127;  // unbiased; float subnormals fall below -25
  if (e > 15) return sign | f16_exp_mask;
  if (e >= -14) {  // a half normal; a rounding carry may ripple into the exponent (up to inf)
    const std::uint32_t biased = (static_cast<std::uint32_t>(e + 15) << 23) | mant;
    return static_cast<std::uint16_t>(sign | shift_right_rne(biased, 13));
  }
  // A half subnormal (or zero): units of 2^-24 are significand * 2^(e + 1).
  const int shift = -(e + 1);
  if (shift > 25) return sign;  // below half of the smallest subnormal
  const std::uint32_t significand = mant | 0x0080'0000u;
  return static_cast<std::uint16_t>(sign | shift_right_rne(significand, shift));
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h & f16_exp_mask) >> 10;
  const std::uint32_t mant = h & f16_mant_mask;
  std::uint32_t f = sign;
  if (exp == 0x1F) {
    f |= f32_exp_mask | (mant << 13);
    if (mant != 0) f |= f32_quiet_bit;
  } else if (exp != 0) {
    f |= ((exp - 15u + 127u) << 23) | (mant << 13);
  } else if (mant != 0) {  // subnormal: mant * 2^-24 with its leading one at bit `top`
    const int top = std::bit_width(mant) - 1;
    const auto f_exp = static_cast<std::uint32_t>(top - 24 + 127);
    f |= (f_exp << 23) | ((mant << (23 - top)) & f32_mant_mask);
  }
  return std::bit_cast<float>(f);
}

std::uint16_t float_to_bfloat_bits(float value) {
  const auto f = std::bit_cast<std::uint32_t>(value);
  if ((f & f32_exp_mask) == f32_exp_mask && (f & f32_mant_mask) != 0)
    return static_cast<std::uint16_t>((f >> 16) | bf16_quiet_bit);
  // Rounding carries ripple into the exponent, so the largest finite values round up to inf.
  return static_cast<std::uint16_t>(shift_right_rne(f, 16));
}

float bfloat_bits_to_float(std::uint16_t b) {
  std::uint32_t f = static_cast<std::uint32_t>(b) << 16;
  if ((f & f32_exp_mask) == f32_exp_mask && (f & f32_mant_mask) != 0) f |= f32_quiet_bit;
  return std::bit_cast<float>(f);
}

constexpr std::array<std::string_view, 8> reduce_op_names = {
    "sum", "mean", "product", "min", "max", "band", "bor", "bxor"};

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

}  // namespace

float16::float16(float value) : bits(float_to_half_bits(value)) {}
float16::operator float() const { return half_bits_to_float(bits); }
bfloat16::bfloat16(float value) : bits(float_to_bfloat_bits(value)) {}
bfloat16::operator float() const { return bfloat_bits_to_float(bits); }

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::int32: return "int32";
    case DType::uint32: return "uint32";
    case DType::int64: return "int64";
    case DType::uint64: return "uint64";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
  }
  return "unknown";
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::int8:
    case DType::uint8: return 1;
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::int32:
    case DType::uint32:
    case DType::float32: return 4;
    case DType::int64:
    case DType::uint64:
    case DType::float64: return 8;
  }
  throw InvalidArgument("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

bool is_floating(DType dtype) {
  return dtype == DType::float16 || dtype == DType::bfloat16 || dtype == DType::float32 ||
         dtype == DType::float64;
}

std::string_view to_string(ReduceOp op) {
  const auto index = static_cast<std::size_t>(op);
  return index < reduce_op_names.size() ? reduce_op_names[index] : "unknown";
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (std::size_t i = 0; i < reduce_op_names.size(); ++i)
    if (equals_ignore_case(name, reduce_op_names[i])) return static_cast<ReduceOp>(i);
  return std::nullopt;
}

bool is_bitwise(ReduceOp op) {
  return op == ReduceOp::band || op == ReduceOp::bor || op == ReduceOp::bxor;
}

bool op_allowed(ReduceOp op, DType dtype) { return !is_bitwise(op) || !is_floating(dtype); }

OpArg premul_sum(double factor) {
  OpArg op(ReduceOp::sum);
  op.premul_ = factor;
  return op;
}

ReduceOp OpArg::resolve() const {
  if (op_) return *op_;
  if (auto op = parse_reduce_op(name_)) return *op;
  std::string names;
  for (std::string_view n : reduce_op_names) {
    if (!names.empty()) names += ", ";
    names += n;
  }
  throw InvalidArgument("reduce op should be one of " + names + ", but got '" + name_ + "'");
}

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::sim: return "sim";
    case Backend::gloo: return "gloo";
    case Backend::nccl: return "nccl";
    case Backend::mpi: return "mpi";
  }
  return "unknown";
}

std::string to_string(Device device) {
  if (device.is_cpu()) return "cpu";
  return "cuda:" + std::to_string(device.index);
}

Device parse_device(std::string_view name) {
  if (name == "cpu") return Device::cpu();
  if (name == "cuda") return Device::cuda(0);
  constexpr std::string_view prefix = "cuda:";
  if (name.starts_with(prefix)) {
    const std::string_view digits = name.substr(prefix.size());
    int index = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    const bool all_digits = !digits.empty() && digits.front() != '-' && digits.front() != '+';
    if (all_digits && ec == std::errc{} && end == digits.data() + digits.size())
      return Device::cuda(index);
  }
  throw InvalidArgument("invalid device '" + std::string(name) +
                        "': expected \"cpu\", \"cuda\" or \"cuda:N\" with N >= 0");
}

}  // namespace dist
