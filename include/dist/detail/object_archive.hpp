// The cereal archives the object collectives serialize with: cereal's binary format (raw bytes,
// uint64 length prefixes), written to a byte vector and read from a span. The bytes read come from
// a peer, so the reader trusts none of them: corrupt, truncated or mismatched bytes raise
// InvalidArgument (through from_bytes) instead of crashing, and decoding is bounded:
// - memory: a length prefix of n elements is accepted only if n times the fewest bytes one element
//   takes (min_encoded_bytes) fits the bytes left, and containers whose elements decode one by one
//   grow as they really decode, so no length makes the reader allocate what the message cannot
//   hold;
// - stack: values nest at most ObjectInputArchive::max_depth levels deep.
#pragma once

#include <algorithm>
#include <array>
#include <cereal/cereal.hpp>
#include <cereal/types/memory.hpp>
#include <chrono>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <forward_list>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
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
  void grow(std::size_t size) {
    out_.resize(std::max({used_ + size, 2 * out_.size(), std::size_t{256}}));
  }

  std::vector<std::byte>& out_;
  std::size_t used_;  // out_[0, used_) is written; the rest is room to grow into
};

// The fewest bytes one value of T takes in cereal's binary format, for the types whose layout
// dist knows (the STL types dist/objects.hpp includes cereal's support for); 0 for empty types
// (std::monostate, empty structs), which may take none; 1 for any other type, such as a user struct
// (cereal cannot tell what its serialize() writes).
template <class T>
constexpr std::size_t min_encoded_bytes();

template <class T, template <class...> class Of>
inline constexpr bool is_instance_of = false;
template <template <class...> class Of, class... A>
inline constexpr bool is_instance_of<Of<A...>, Of> = true;
template <class T>
inline constexpr bool is_std_array = false;
template <class T, std::size_t N>
inline constexpr bool is_std_array<std::array<T, N>> = true;

template <class T, template <class...> class... Of>
inline constexpr bool is_any_of = (is_instance_of<T, Of> || ...);
// The containers cereal writes as a uint64 element count and the elements.
template <class T>
inline constexpr bool is_pair_container =
    is_any_of<T, std::map, std::multimap, std::unordered_map, std::unordered_multimap>;
template <class T>
inline constexpr bool is_sized_container =
    is_pair_container<T> ||
    is_any_of<T, std::basic_string, std::vector, std::deque, std::list, std::forward_list, std::set,
              std::multiset, std::unordered_set, std::unordered_multiset>;

template <class... Ts>
constexpr std::size_t min_encoded_sum(const std::tuple<Ts...>*) {
  return (std::size_t{0} + ... + min_encoded_bytes<Ts>());
}
template <class... Ts>
constexpr std::size_t min_encoded_sum(const std::variant<Ts...>*) {
  return sizeof(std::int32_t) + std::min({min_encoded_bytes<Ts>()...});  // index, alternative
}

// For a container of is_sized_container, the fewest bytes one of its elements takes.
template <class T>
constexpr std::size_t element_min_bytes() {
  if constexpr (is_pair_container<T>)
    return min_encoded_bytes<typename T::key_type>() + min_encoded_bytes<typename T::mapped_type>();
  else return min_encoded_bytes<typename T::value_type>();
}

template <class T>
constexpr std::size_t min_encoded_bytes() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_arithmetic_v<U> || std::is_enum_v<U>) return sizeof(U);
  else if constexpr (is_sized_container<U>) return sizeof(cereal::size_type);
  else if constexpr (is_std_array<U>)
    return std::tuple_size_v<U> * min_encoded_bytes<typename U::value_type>();
  else if constexpr (is_any_of<U, std::optional, std::unique_ptr>) return 1;  // the "present" flag
  else if constexpr (is_any_of<U, std::shared_ptr, std::weak_ptr>)
    return sizeof(std::uint32_t);  // the pointer id
  else if constexpr (is_instance_of<U, std::pair>)
    return min_encoded_bytes<typename U::first_type>() +
           min_encoded_bytes<typename U::second_type>();
  else if constexpr (is_any_of<U, std::tuple, std::variant>)
    return min_encoded_sum(static_cast<const U*>(nullptr));
  else if constexpr (is_instance_of<U, std::complex>) return 2 * sizeof(typename U::value_type);
  else if constexpr (is_instance_of<U, std::chrono::duration>) return sizeof(typename U::rep);
  else return std::is_empty_v<U> ? 0 : 1;
}

// Reads cereal's binary format from a span, bounds-checking every read. The prologue and
// epilogue hooks below tell it which value it is in, so that
// - a length prefix is checked against the element type of the container reading it: n elements
//   of at least m > 0 bytes each must fit the bytes left (n * m <= remaining(); a user struct
//   counts as m = 1). Elements that may take no bytes (m = 0) draw instead on one allowance of
//   empty_element_bytes for the whole object, so nested containers of them cannot multiply it;
// - values nest at most max_depth levels deep.
// The containers that cereal would size before loading their elements (vector, deque, list,
// forward_list, unordered_set) are loaded by the overloads below instead, growing as elements
// decode; what they reserve ahead of the data comes from a budget of the message's size.
class ObjectInputArchive
    : public cereal::InputArchive<ObjectInputArchive, cereal::AllowEmptyClassElision> {
 public:
  // How deep values may nest: the top-level object is level 1, and every value inside another
  // (a struct's field, a container's element, a pointer's or an optional's value, a variant's
  // alternative, a map entry and its key and value) one level below it. Numbers and enums, which
  // hold nothing, and cereal's wrappers (names, length prefixes, raw bytes, pointer wrappers) are
  // no level. A struct with a vector of children takes two levels per generation. 1024 covers what
  // an MMEngine peer can send (pickle stops at Python's recursion limit of 1000), and decoding that
  // deep takes at most about 0.6 MiB of stack (measured: up to 560 bytes a level at -O0 or under
  // the sanitizers, 60-90 at -O2): a thread with 1 MiB of stack free decodes it.
  static constexpr std::size_t max_depth = 1024;
  // The bytes of memory that elements taking no bytes of the message (std::monostate, empty
  // structs) may fill, over the whole object.
  static constexpr std::uint64_t empty_element_bytes = 1u << 16;

  explicit ObjectInputArchive(std::span<const std::byte> in)
      : InputArchive(this), in_(in), reserve_left_(in.size()) {}
  void load_binary(void* data, std::size_t size) {
    if (size > remaining()) [[unlikely]]
      throw_truncated(size);
    if (size > 0) std::memcpy(data, in_.data() + pos_, size);
    pos_ += size;
  }
  std::size_t remaining() const { return in_.size() - pos_; }

  // The prologue hook: a value of type T begins. A container's length prefix comes next.
  template <class T>
  void enter() {
    if (++depth_ > max_depth) [[unlikely]]
      throw_too_deep();
    if constexpr (is_sized_container<T>)
      element_ = {element_min_bytes<T>(), sizeof(typename T::value_type)};
    else element_ = {1, 1};  // a user type's own length prefix: at least a byte an element
  }
  // The epilogue hook: the value ends.
  void leave() { --depth_; }
  // Checks a length prefix just read against the element type entered last.
  void check_length(std::uint64_t length) {
    const auto [min_bytes, size] = std::exchange(element_, ElementType{1, 1});
    if (min_bytes > 0) {
      if (length > remaining() / min_bytes) [[unlikely]]
        throw_corrupt_length(length, min_bytes);
    } else if (length > empty_left_ / std::max<std::size_t>(size, 1)) [[unlikely]] {
      throw_corrupt_length(length, 0);
    } else {
      empty_left_ -= length * std::max<std::size_t>(size, 1);
    }
  }
  // How many of `length` elements of `size` bytes a container may reserve before they decode:
  // all reservations of the object together stay within the message's size.
  std::size_t reservable(std::uint64_t length, std::size_t size) {
    const auto n = std::min<std::uint64_t>(length, reserve_left_ / std::max<std::size_t>(size, 1));
    reserve_left_ -= static_cast<std::size_t>(n) * size;
    return static_cast<std::size_t>(n);
  }

 private:
  struct ElementType {
    std::size_t min_bytes;  // the fewest bytes one element takes in the message
    std::size_t size;       // sizeof one element in memory
  };
  // The error paths, kept out of line so the reads inline to a compare and a copy.
  [[noreturn]] [[gnu::noinline, gnu::cold]] void throw_truncated(std::size_t size) const {
    throw cereal::Exception("truncated data: " + std::to_string(size) + " bytes needed at offset " +
                            std::to_string(pos_) + ", " + std::to_string(remaining()) + " left");
  }
  [[noreturn]] [[gnu::noinline, gnu::cold]] void throw_corrupt_length(std::uint64_t length,
                                                                      std::size_t min_bytes) const {
    const auto at = "corrupt length " + std::to_string(length) + " at offset " +
                    std::to_string(pos_ - sizeof(std::uint64_t)) + ": ";
    if (min_bytes == 0)
      throw cereal::Exception(at + "more elements that take no bytes than the " +
                              std::to_string(empty_element_bytes) + "-byte allowance of an object");
    throw cereal::Exception(at + "elements of at least " + std::to_string(min_bytes) +
                            " bytes, only " + std::to_string(remaining()) + " bytes left");
  }
  [[noreturn]] [[gnu::noinline, gnu::cold]] void throw_too_deep() const {
    throw cereal::Exception("values nested more than " + std::to_string(max_depth) +
                            " levels deep at offset " + std::to_string(pos_) +
                            " (the decoder's limit)");
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;
  ElementType element_{1, 1};
  std::uint64_t empty_left_ = empty_element_bytes;
  std::size_t reserve_left_;
};

// The values that count as levels: not numbers (which hold nothing), nor cereal's own wrappers
// around a value.
template <class T>
inline constexpr bool is_level = !std::is_arithmetic_v<T> && !std::is_enum_v<T> &&
                                 !is_any_of<T, cereal::NameValuePair, cereal::SizeTag,
                                            cereal::BinaryData, cereal::memory_detail::PtrWrapper,
                                            cereal::memory_detail::LoadAndConstructLoadWrapper>;
template <class T>
void prologue(ObjectInputArchive& ar, const T&) {
  if constexpr (is_level<T>) ar.enter<T>();
}
template <class T>
void epilogue(ObjectInputArchive& ar, const T&) {
  if constexpr (is_level<T>) ar.leave();
}

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
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, cereal::SizeTag<T>& t) {
  ar.load_binary(std::addressof(t.size), sizeof(t.size));
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

// The containers cereal sizes before loading their elements one by one, loaded instead by
// growing them as elements decode. (Arithmetic vectors keep cereal's load: one block of bytes
// that the length check has already matched against the bytes left.)
template <class T, class A>
requires(!std::is_arithmetic_v<T>) void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar,
                                                                  std::vector<T, A>& v) {
  cereal::size_type n = 0;
  ar(cereal::make_size_tag(n));
  v.clear();
  v.reserve(ar.reservable(n, sizeof(T)));
  for (cereal::size_type i = 0; i < n; ++i) {
    if (v.size() == v.capacity()) v.reserve(std::min<std::size_t>(n, 2 * v.size() + 1));
    ar(v.emplace_back());
  }
}
template <class T, class A>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, std::deque<T, A>& d) {
  cereal::size_type n = 0;
  ar(cereal::make_size_tag(n));
  d.clear();
  for (cereal::size_type i = 0; i < n; ++i) ar(d.emplace_back());
}
template <class T, class A>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, std::list<T, A>& l) {
  cereal::size_type n = 0;
  ar(cereal::make_size_tag(n));
  l.clear();
  for (cereal::size_type i = 0; i < n; ++i) ar(l.emplace_back());
}
template <class T, class A>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, std::forward_list<T, A>& l) {
  cereal::size_type n = 0;
  ar(cereal::make_size_tag(n));
  l.clear();
  auto last = l.before_begin();
  for (cereal::size_type i = 0; i < n; ++i) ar(*(last = l.emplace_after(last)));
}
template <class Set>
void load_unordered_set(ObjectInputArchive& ar, Set& set) {
  cereal::size_type n = 0;
  ar(cereal::make_size_tag(n));
  set.clear();
  set.reserve(ar.reservable(n, sizeof(typename Set::value_type)));
  for (cereal::size_type i = 0; i < n; ++i) {
    typename Set::key_type key;
    ar(key);
    set.emplace(std::move(key));
  }
}
template <class K, class H, class E, class A>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, std::unordered_set<K, H, E, A>& set) {
  load_unordered_set(ar, set);
}
template <class K, class H, class E, class A>
void CEREAL_LOAD_FUNCTION_NAME(ObjectInputArchive& ar, std::unordered_multiset<K, H, E, A>& set) {
  load_unordered_set(ar, set);
}

// Raises InvalidArgument: "<function>: cannot deserialize the object from rank <source> (<n>
// bytes): <reason>".
[[noreturn]] DIST_API void throw_deserialize_error(const char* function, int source,
                                                   std::size_t bytes, const char* reason);

// Appends the serialized bytes of `obj` to `out`.
template <class T>
void append_bytes(const T& obj, std::vector<std::byte>& out) {
  ObjectOutputArchive ar(out);
  ar(obj);
}

// The serialized bytes of `obj`.
template <class T>
std::vector<std::byte> to_bytes(const T& obj) {
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
