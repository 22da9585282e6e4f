// Prefixing a child's output stream with its rank, one whole line at a time, so that lines of
// different ranks never mix within a line.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace dist::launch {

class LinePrefixer {
 public:
  // `sink` receives each finished line, prefix and '\n' included, in one call.
  LinePrefixer(std::string prefix, std::function<void(std::string_view)> sink,
               std::size_t max_line = 64 * 1024)
      : prefix_(std::move(prefix)), sink_(std::move(sink)), max_line_(max_line) {}

  // Adds bytes read from the stream; emits every line they complete. A line longer than
  // max_line is emitted in pieces of max_line bytes, each with the prefix.
  void feed(std::string_view bytes);

  // End of the stream: emits an unterminated last line, with a '\n' added.
  void finish();

 private:
  void emit(std::string_view line);

  std::string prefix_;
  std::function<void(std::string_view)> sink_;
  std::size_t max_line_;
  std::string pending_;
};

// The prefix distrun puts before rank r's lines: "[r] ".
std::string rank_prefix(int rank);

}  // namespace dist::launch
