// The TcpStore frame codec: little-endian integers, length-prefixed strings, bounds checks.
#include "core/store/tcp_protocol.hpp"

#include <cstring>

namespace dist::core::tcp_store {

namespace {
template <class U>
void put_le(Bytes& out, U v) {
  for (std::size_t i = 0; i < sizeof(U); ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
template <class U>
U get_le(const char* p) {
  U v = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i)
    v = static_cast<U>(v | static_cast<U>(static_cast<unsigned char>(p[i])) << (8 * i));
  return v;
}
}  // namespace

Writer& Writer::u8(std::uint8_t v) {
  out_.push_back(static_cast<char>(v));
  return *this;
}
Writer& Writer::u32(std::uint32_t v) {
  put_le(out_, v);
  return *this;
}
Writer& Writer::u64(std::uint64_t v) {
  put_le(out_, v);
  return *this;
}
Writer& Writer::str(const std::string& s) {
  if (s.size() > UINT32_MAX)
    throw ProtocolError("a string of " + std::to_string(s.size()) + " bytes");
  u32(static_cast<std::uint32_t>(s.size()));
  out_.insert(out_.end(), s.begin(), s.end());
  return *this;
}
Writer& Writer::bytes(const Bytes& b) {
  if (b.size() > UINT32_MAX)
    throw ProtocolError("a value of " + std::to_string(b.size()) + " bytes");
  u32(static_cast<std::uint32_t>(b.size()));
  out_.insert(out_.end(), b.begin(), b.end());
  return *this;
}
Writer& Writer::strings(const std::vector<std::string>& keys) {
  u32(static_cast<std::uint32_t>(keys.size()));
  for (const auto& k : keys) str(k);
  return *this;
}

Bytes Writer::finish(std::size_t max_message) {
  const std::size_t payload = out_.size() - header_size;
  if (payload > max_message)
    throw ProtocolError("a message of " + std::to_string(payload) + " bytes exceeds the cap of " +
                        std::to_string(max_message) + " bytes");
  const auto n = static_cast<std::uint32_t>(payload);
  for (std::size_t i = 0; i < header_size; ++i) out_[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return std::move(out_);
}

const char* Reader::take(std::size_t n) {
  if (data_.size() - pos_ < n) throw ProtocolError("truncated message");
  const char* p = data_.data() + pos_;
  pos_ += n;
  return p;
}

std::uint8_t Reader::u8() { return static_cast<std::uint8_t>(*take(1)); }
std::uint32_t Reader::u32() { return get_le<std::uint32_t>(take(4)); }
std::uint64_t Reader::u64() { return get_le<std::uint64_t>(take(8)); }

std::string Reader::str() {
  const std::size_t n = u32();
  const char* p = take(n);
  return std::string(p, n);
}

Bytes Reader::bytes() {
  const std::size_t n = u32();
  const char* p = take(n);
  return Bytes(p, p + n);
}

std::vector<std::string> Reader::strings(std::size_t max_count) {
  const std::size_t n = u32();
  if (n > (data_.size() - pos_) / 4) throw ProtocolError("key count exceeds the message");
  if (n > max_count) throw TooManyKeys(n, max_count);
  std::vector<std::string> keys;
  keys.reserve(n);
  for (std::size_t i = 0; i < n; ++i) keys.push_back(str());
  return keys;
}

void Reader::done() const {
  if (pos_ != data_.size()) throw ProtocolError("trailing bytes in message");
}

std::uint32_t decode_header(const char (&header)[header_size]) {
  return get_le<std::uint32_t>(header);
}

}  // namespace dist::core::tcp_store
