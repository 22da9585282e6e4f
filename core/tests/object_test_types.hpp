// Types the decoder tests (objects_test.cpp, object_limits_test.cpp, object_fuzz_test.cpp) read
// peers' bytes as: recursive ones (a tree, a linked list, a JSON-like value) and byte builders for
// their encodings; and the error a decode raises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "dist/errors.hpp"
#include "dist/objects.hpp"

namespace object_test {

// What decoding `bytes` as a T sent by rank `from` raises: the InvalidArgument's text, or
// "no error".
template <class T>
std::string decode_error(std::span<const std::byte> bytes, int from = 1) {
  try {
    dist::detail::from_bytes<T>(bytes, "test", from);
  } catch (const dist::InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

// A tree: 4 bytes of value, then the children (a uint64 count and each child).
struct Node {
  int value = 0;
  std::vector<Node> kids;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(value, kids);
  }
  friend bool operator==(const Node&, const Node&) = default;
};

// A linked list: 4 bytes of value, then a one-byte "next is present" flag and the next cell.
struct Cell {
  int value = 0;
  std::unique_ptr<Cell> next;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(value, next);
  }
};

// A JSON-like value: a 4-byte alternative index, then a number, a string, a list or an object.
struct Json {
  std::variant<std::monostate, double, std::string, std::vector<Json>, std::map<std::string, Json>>
      v;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(v);
  }
  friend bool operator==(const Json&, const Json&) = default;
};

inline void put_u64(std::vector<std::byte>& out, std::uint64_t v) {
  const auto at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}
inline void put_i32(std::vector<std::byte>& out, std::int32_t v) {
  const auto at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

// The encoding of a chain of `levels` Nodes, each the only child of the one above (12 bytes a
// level), written by hand: encoding a very deep chain with cereal would itself recurse that deep.
inline std::vector<std::byte> node_chain_bytes(std::size_t levels) {
  std::vector<std::byte> out;
  out.reserve(12 * levels);
  for (std::size_t i = 0; i < levels; ++i) {
    put_i32(out, static_cast<std::int32_t>(i));
    put_u64(out, i + 1 < levels ? 1 : 0);
  }
  return out;
}

// The same chain built as an object (levels small enough to encode and destroy recursively).
inline Node node_chain(std::size_t levels) {
  Node root;
  Node* at = &root;
  for (std::size_t i = 1; i < levels; ++i) {
    at->kids.emplace_back();
    at = &at->kids.back();
    at->value = static_cast<int>(i);
  }
  return root;
}

// The encoding of a Cell list `levels` long (5 bytes a cell).
inline std::vector<std::byte> cell_list_bytes(std::size_t levels) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i < levels; ++i) {
    put_i32(out, 7);
    out.push_back(std::byte{i + 1 < levels ? std::uint8_t{1} : std::uint8_t{0}});
  }
  return out;
}

}  // namespace object_test
