// LinePrefixer: buffers the unfinished line, emits finished ones with the prefix.
#include "real/launch/line_prefixer.hpp"

namespace dist::launch {

void LinePrefixer::emit(std::string_view line) {
  std::string out;
  out.reserve(prefix_.size() + line.size() + 1);
  out.append(prefix_).append(line).push_back('\n');
  sink_(out);
}

void LinePrefixer::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    const auto take = newline == std::string_view::npos ? bytes.size() : newline;
    pending_.append(bytes.substr(0, take));
    while (pending_.size() > max_line_) {
      emit(std::string_view(pending_).substr(0, max_line_));
      pending_.erase(0, max_line_);
    }
    if (newline == std::string_view::npos) return;
    emit(pending_);
    pending_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

void LinePrefixer::finish() {
  if (!pending_.empty()) emit(pending_);
  pending_.clear();
}

std::string rank_prefix(int rank) { return "[" + std::to_string(rank) + "] "; }

}  // namespace dist::launch
