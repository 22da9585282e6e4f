// What the bounded fuzz tests share (core/tests/object_fuzz_test.cpp, the object decoder's, and
// core/store/tests/store_fuzz_test.cpp, the TCP store's): corpus files, hex dumps, the peak memory,
// DIST_FUZZ_* settings, and a seeded byte mutator (the same bytes for the same generator state).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace fuzz_support {

using Bytes = std::vector<std::byte>;

inline Bytes read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out(chars.size());
  std::transform(chars.begin(), chars.end(), out.begin(), [](char c) { return std::byte(c); });
  return out;
}

// Writes `bytes` to `path` (a corpus file).
inline void write_file(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

inline std::string hex(std::span<const std::byte> bytes, std::size_t limit = 256) {
  std::string out;
  char buf[4];
  for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(bytes[i]));
    out += buf;
  }
  if (bytes.size() > limit) out += "...";
  return out;
}

// The peak resident memory in KiB (VmHWM), after resetting it to the current one if `reset`.
inline long peak_kib(bool reset) {
  if (reset) std::ofstream("/proc/self/clear_refs") << "5";
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

inline std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

inline constexpr std::size_t max_mutant = 1 << 16;

// Applies 1-4 random mutations to a copy of `seed` (splicing draws on `others`, the corpus).
inline Bytes mutate(const Bytes& seed, const std::vector<const Bytes*>& others,
                    std::mt19937_64& rng) {
  Bytes b = seed;
  auto below = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  auto random_byte = [&] { return static_cast<std::byte>(rng() & 0xff); };
  auto put = [&](std::size_t at, const void* src, std::size_t n) {
    if (b.size() < n) return;
    at = std::min(at, b.size() - n);
    std::memcpy(b.data() + at, src, n);
  };
  const int rounds = 1 + static_cast<int>(below(4));
  for (int round = 0; round < rounds; ++round) {
    const std::size_t at = below(b.size() + 1);
    switch (below(11)) {
      case 0:  // flip one bit
        if (!b.empty()) b[below(b.size())] ^= static_cast<std::byte>(1u << below(8));
        break;
      case 1: {  // an interesting byte (a bool, a flag, a length's top byte)
        static constexpr std::uint8_t values[] = {0, 1, 2, 0x7f, 0x80, 0xfe, 0xff};
        if (!b.empty()) b[below(b.size())] = std::byte{values[below(std::size(values))]};
        break;
      }
      case 2: {  // a length: small, about the bytes left, huge
        const std::uint64_t left = b.size() - std::min(b.size(), at + 8);
        const std::uint64_t values[] = {0,          1,        2,          7,          8,
                                        255,        65535,    65536,      65537,      left,
                                        left / 8,   left + 1, 1ull << 31, 1ull << 32, 1ull << 62,
                                        1ull << 63, ~0ull,    left / 4};
        const std::uint64_t v = values[below(std::size(values))];
        put(at, &v, sizeof v);
        break;
      }
      case 3: {  // a 4-byte value: a variant index, an int, a pointer id
        const std::int32_t values[] = {-1,
                                       0,
                                       1,
                                       2,
                                       3,
                                       4,
                                       5,
                                       100,
                                       std::numeric_limits<int>::min(),
                                       static_cast<std::int32_t>(0x80000001u)};
        const std::int32_t v = values[below(std::size(values))];
        put(at, &v, sizeof v);
        break;
      }
      case 4:  // truncate
        b.resize(below(b.size() + 1));
        break;
      case 5: {  // insert random bytes
        Bytes extra(1 + below(16));
        for (auto& x : extra) x = random_byte();
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
        break;
      }
      case 6: {  // erase a range
        const std::size_t n = below(std::min<std::size_t>(b.size() - at, 32) + 1);
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 7:
      case 8: {  // repeat a range (deep nesting, long runs of elements)
        if (b.empty()) break;
        const std::size_t from = below(b.size());
        const std::size_t n = 1 + below(std::min<std::size_t>(b.size() - from, 24));
        const std::size_t times = 1 + below(below(2) ? 8 : 2000);
        const Bytes chunk(b.begin() + static_cast<std::ptrdiff_t>(from),
                          b.begin() + static_cast<std::ptrdiff_t>(from + n));
        Bytes run;
        for (std::size_t i = 0; i < times && run.size() + b.size() < max_mutant; ++i)
          run.insert(run.end(), chunk.begin(), chunk.end());
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(from), run.begin(), run.end());
        break;
      }
      case 9: {  // splice: this prefix, another entry's suffix
        const Bytes& other = *others[below(others.size())];
        const std::size_t from = below(other.size() + 1);
        b.resize(at);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      default:  // append random bytes
        for (std::size_t n = 1 + below(8); n > 0; --n) b.push_back(random_byte());
        break;
    }
    if (b.size() > max_mutant) b.resize(max_mutant);
  }
  return b;
}

}  // namespace fuzz_support
