// The cereal archives the object collectives serialize with: cereal's binary format (raw bytes,
// uint64 length prefixes), written to a byte vector and read from a span with bounds checks so
// that corrupt or mismatched bytes from a peer raise InvalidArgument instead of crashing.
#pragma once

#include <algorithm>
#include <cereal/cereal.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "dist/export.hpp"

namespace dist::detail {

// Appends cereal's binary format to a byte vector. The vector grows geometrically and is cut to
// the bytes written when the archive is destroyed (read its size only then); a field costs a
// bounds check and a copy.
class ObjectOutputArchive
    : public cereal::OutputArchive<ObjectOutputArchive, cereal::AllowEmptyClassElision> {
 public:
  explicit ObjectOutputArchive(std::vector<std::byte>& out)
      : OutputArchive(this), out_(out), used_(out.size()) {}
  ~ObjectOutputArchive() { out_.resize(used_); }
  ObjectOutputArchive(const ObjectOutputArchive&) = delete;
  ObjectOutputArchive& operator=(const ObjectOutputArchive&) = delete;
  void save_binary(const void* data, std::size_t size) {
    if (size > out_.size() - used_) grow(size);
    if (size > 0) std::memcpy(out_.data() + used_, data, size);
    used_ += size;
  }

 private:
  void grow(std::size_t size) { out_.resize(std::max({used_ + size, 2 * out_.size(), std::size_t{256}})); }

  std::vector<std::byte>& out_;
  std::size_t used_;  // out_[0, used_) is written; the rest is room to grow into
};

// Reads cereal's binary format from a span. Every read is bounds-checked, and a length prefix
// that cannot fit the remaining bytes (above small_container elements) is rejected before any
// container is resized, so a corrupt length cannot make the reader allocate gigabytes.
class ObjectInputArchive
    : public cereal::InputArchive<ObjectInputArchive, cereal::AllowEmptyClassElision> {
 public:
  // Containers up to this many elements are accepted even when their length exceeds the bytes
  // left (elements that serialize to nothing, such as std::monostate, take no bytes).
  static constexpr std::uint64_t small_container = 1u << 16;

  explicit ObjectInputArchive(std::span<const std::byte> in) : InputArchive(this), in_(in) {}
  void load_binary(void* data, std::size_t size) {
    if (size > remaining()) [[unlikely]]
      throw_truncated(size);
    if (size > 0) std::memcpy(data, in_.data() + pos_, size);
    pos_ += size;
  }
  void check_length(std::uint64_t length) const {
    if (length > remaining() && length > small_container) [[unlikely]]
      throw_corrupt_length(length);
  }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  // The error paths, kept out of line so the reads inline to a compare and a copy.
  [[noreturn]] [[gnu::noinline, gnu::cold]] void throw_truncated(std::size_t size) const {
    throw cereal::Exception("truncated data: " + std::to_string(size) + " bytes needed at offset " +
                            std::to_string(pos_) + ", " + std::to_string(remaining()) + " left");
  }
  [[noreturn]] [[gnu::noinline, gnu::cold]] void throw_corrupt_length(std::uint64_t length) const {
    throw cereal::Exception("corrupt length " + std::to_string(length) + " at offset " +
                            std::to_string(pos_ - sizeof(std::uint64_t)) + ": only " +
                            std::to_string(remaining()) + " bytes left");
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

template <class T>
requires(std::is_arithmetic_v<T>) void CEREAL_SAVE_FUNCTION_NAME(ObjectOutputArchive& ar,
                                                                 const T& t) {
  ar.save_binary(std::addressof(t), sizeof(t));
}
template <class T>
requires(std::is_arithmetic_v<T> &&
         !std::is_same_v<T, bool>) void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, T& t) {
  ar.load_binary(std::addressof(t), sizeof(t));
}
// A bool is one byte that must be 0 or 1 (any other value would be undefined behaviour).
inline void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, bool& b) {
  std::uint8_t byte = 0;
  ar.load_binary(&byte, 1);
  if (byte > 1) throw cereal::Exception("corrupt bool value " + std::to_string(byte));
  b = byte == 1;
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(ObjectOutputArchive& ar, const cereal::NameValuePair<T>& t) {
  ar(t.value);
}
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, cereal::NameValuePair<T>& t) {
  ar(t.value);
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(ObjectOutputArchive& ar, const cereal::SizeTag<T>& t) {
  ar(t.size);
}
template <class T> void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, cereal::SizeTag<T>& t) {
  ar(t.size);
  ar.check_length(static_cast<std::uint64_t>(t.size));
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(ObjectOutputArchive& ar, const cereal::BinaryData<T>& bd) {
  ar.save_binary(bd.data, static_cast<std::size_t>(bd.size));
}
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, cereal::BinaryData<T>& bd) {
  ar.load_binary(bd.data, static_cast<std::size_t>(bd.size));
}

// Raises InvalidArgument: "<function>: cannot deserialize the object from rank <source> (<n>
// bytes): <reason>".
[[noreturn]] DIST_API void throw_deserialize_error(const char* function, int source,
                                                   std::size_t bytes, const char* reason);

// Appends the serialized bytes of `obj` to `out`.
template <class T> void append_bytes(const T& obj, std::vector<std::byte>& out) {
  ObjectOutputArchive ar(out);
  ar(obj);
}

// The serialized bytes of `obj`.
template <class T> std::vector<std::byte> to_bytes(const T& obj) {
  std::vector<std::byte> out;
  append_bytes(obj, out);
  return out;
}

// Deserializes a T from `bytes`, which came from rank `source` (for the error message). Bytes
// left over after the object, like any other decoding failure, raise InvalidArgument.
template <class T>
T from_bytes(std::span<const std::byte> bytes, const char* function, int source) {
  try {
    T obj{};
    ObjectInputArchive ar(bytes);
    ar(obj);
    if (ar.remaining() != 0)
      throw cereal::Exception(std::to_string(ar.remaining()) +
                              " bytes left over after the object (did every rank pass the "
                              "same type?)");
    return obj;
  } catch (const std::exception& e) {
    throw_deserialize_error(function, source, bytes.size(), e.what());
  }
}

}  // namespace dist::detail

CEREAL_REGISTER_ARCHIVE(dist::detail::ObjectOutputArchive)
CEREAL_REGISTER_ARCHIVE(dist::detail::ObjectInputArchive)
CEREAL_SETUP_ARCHIVE_TRAITS(dist::detail::ObjectInputArchive, dist::detail::ObjectOutputArchive)
