// collect_results' argument checks and its cpu protocol: part files in a shared directory, with
// O_EXCL writes, an all-rank status exchange, and a cleanup that removes only what it created
// (each part file starts with a random token its writer reports, checked before reading/removing).
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>

#include "dist/errors.hpp"
#include "dist/objects.hpp"

namespace dist::detail {

namespace {
namespace fs = std::filesystem;

// One rank's outcome of a protocol step, exchanged so that every rank raises together.
struct Status {
  int code = -1;  // an ErrorCode, or -1 for success
  std::string message;
  std::uint64_t token = 0;  // the token of the part file this rank wrote
  bool ok() const { return code < 0; }
  template <class Archive> void serialize(Archive& ar) { ar(code, message, token); }
};

struct DirInfo {
  std::string path;
  Status status;
  template <class Archive> void serialize(Archive& ar) { ar(path, status); }
};

// The directory of one collect and the directories this rank created for it (outermost first).
struct Dir {
  fs::path path;
  std::vector<fs::path> created;
};

Status status_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return {static_cast<int>(e.code()), e.what()};
  } catch (const std::exception& e) {
    return {static_cast<int>(ErrorCode::backend), std::string("collect_results: ") + e.what()};
  }
}

[[noreturn]] void raise(const Status& s) {
  switch (static_cast<ErrorCode>(s.code)) {
    case ErrorCode::invalid_argument:
      throw InvalidArgument(s.message);
    case ErrorCode::not_initialized:
      throw NotInitialized(s.message);
    case ErrorCode::desync:
      throw DesyncError(s.message);
    case ErrorCode::deadlock:
      throw DeadlockError(s.message);
    case ErrorCode::timeout:
      throw TimeoutError(s.message);
    case ErrorCode::rank_failure:
      throw RankFailure(s.message, -1);
    case ErrorCode::aborted: throw Aborted(s.message);
    default:
      throw BackendError(s.message);
  }
}

std::string reason(int err) { return std::error_code(err, std::generic_category()).message(); }

[[noreturn]] void os_error(const std::string& what, int err) {
  throw BackendError("collect_results: " + what + ": " + reason(err), err);
}

fs::path normalized(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  return p.has_filename() || !p.has_parent_path() ? p : p.parent_path();
}

// Creates the missing directories of `path` with mode 0700; returns those it created.
std::vector<fs::path> make_dirs(const fs::path& path) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = path; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  std::vector<fs::path> created;
  for (const auto& p : missing) {
    if (::mkdir(p.c_str(), 0700) == 0) {
      created.push_back(p);
    } else if (const int err = errno; err != EEXIST || !fs::is_directory(p, ec)) {
      os_error("cannot create directory '" + p.string() + "'", err);
    }
  }
  return created;
}

// Rank 0's directory: the caller's tmpdir, or a fresh mkdtemp directory in ./.dist_test.
Dir prepare_dir(const std::optional<std::string>& tmpdir) {
  if (tmpdir) {
    if (tmpdir->empty()) throw InvalidArgument("collect_results: argument 'tmpdir' is empty");
    const fs::path path = normalized(*tmpdir);
    return {path, make_dirs(path)};
  }
  const fs::path base = fs::current_path() / ".dist_test";
  Dir dir;
  for (int attempt = 0; attempt < 8; ++attempt) {
    for (auto& p : make_dirs(base)) dir.created.push_back(p);
    std::string name = (base / "collect_XXXXXX").string();
    if (::mkdtemp(name.data())) {
      dir.path = name;
      dir.created.push_back(dir.path);
      return dir;
    }
    // ENOENT: another run removed .dist_test between the two calls; create it again.
    if (errno != ENOENT) os_error("cannot create a directory in '" + base.string() + "'", errno);
  }
  os_error("cannot create a directory in '" + base.string() + "'", ENOENT);
}

fs::path part_path(const fs::path& dir, int rank) {
  return dir / ("part_" + std::to_string(rank) + ".bin");
}

// A part file starts with a magic string and its writer's token.
constexpr char magic[8] = {'d', 'i', 's', 't', 'p', 'a', 'r', 't'};
constexpr std::size_t header_size = sizeof magic + sizeof(std::uint64_t);

std::vector<std::byte> header(std::uint64_t token) {
  std::vector<std::byte> out(header_size);
  std::memcpy(out.data(), magic, sizeof magic);
  std::memcpy(out.data() + sizeof magic, &token, sizeof token);
  return out;
}

void write_all(int fd, std::span<const std::byte> bytes, const fs::path& file, int rank) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(file.c_str());
      os_error("rank " + std::to_string(rank) + " cannot write '" + file.string() + "'", err);
    }
    done += static_cast<std::size_t>(n);
  }
}

void write_part(const fs::path& file, std::span<const std::byte> bytes, int rank,
                std::uint64_t token) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST)
    throw InvalidArgument("collect_results: rank " + std::to_string(rank) + "'s part file '" +
                          file.string() +
                          "' already exists; it is left untouched (is another "
                          "collect_results using the same tmpdir?)");
  if (fd < 0)
    os_error("rank " + std::to_string(rank) + " cannot create its part file '" + file.string() +
                 "' (the directory must be shared by all ranks)",
             errno);
  write_all(fd, header(token), file, rank);
  write_all(fd, bytes, file, rank);
  if (::close(fd) != 0) os_error("cannot close '" + file.string() + "'", errno);
}

// The whole file; nullopt when it does not exist.
std::optional<std::vector<std::byte>> read_file(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return std::nullopt;
  if (fd < 0) os_error("rank 0 cannot open '" + file.string() + "'", errno);
  struct stat st {};
  std::vector<std::byte> out;
  if (::fstat(fd, &st) == 0) out.reserve(static_cast<std::size_t>(st.st_size));
  // Read straight into `out`: a rank may be a fiber with a small stack, no room for a buffer.
  constexpr std::size_t step = std::size_t{1} << 16;
  for (;;) {
    const std::size_t had = out.size();
    out.resize(had + step);
    const ssize_t n = ::read(fd, out.data() + had, step);
    out.resize(had + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      os_error("rank 0 cannot read '" + file.string() + "'", err);
    }
    if (n == 0) break;
  }
  ::close(fd);
  return out;
}

// Whether `file` is the part file written with `token` (so this collect may remove it).
bool written_with(const fs::path& file, std::uint64_t token) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::byte head[header_size];
  const bool ok = ::read(fd, head, header_size) == static_cast<ssize_t>(header_size);
  ::close(fd);
  return ok && std::memcmp(head, header(token).data(), header_size) == 0;
}

// Rank r's payload, after checking the file is the one rank r wrote in this collect.
std::vector<std::byte> read_part(const fs::path& dir, int rank, std::uint64_t token) {
  const fs::path file = part_path(dir, rank);
  auto bytes = read_file(file);
  const auto expected = header(token);
  if (!bytes || bytes->size() < header_size ||
      !std::equal(expected.begin(), expected.end(), bytes->begin()))
    throw BackendError("collect_results: rank 0 cannot find the part file rank " +
                           std::to_string(rank) + " wrote ('" + file.string() + "' " +
                           (bytes ? "holds another file" : "does not exist") + "): '" +
                           dir.string() + "' must be a directory shared by all ranks",
                       ENOENT);
  bytes->erase(bytes->begin(), bytes->begin() + static_cast<std::ptrdiff_t>(header_size));
  return std::move(*bytes);
}

// Removes the part files the ranks of `written` wrote (checked by token), then the directories in
// `dir.created` (when empty). A directory this rank did not create stays, even when left empty.
void clean_up(const Dir& dir, const std::vector<Status>& written) {
  for (std::size_t r = 0; r < written.size(); ++r) {
    const fs::path file = part_path(dir.path, static_cast<int>(r));
    if (written[r].ok() && written_with(file, written[r].token)) ::unlink(file.c_str());
  }
  for (auto it = dir.created.rbegin(); it != dir.created.rend(); ++it) ::rmdir(it->c_str());
}

// `written` as rank `rank`'s entry of a list where no other rank wrote a file.
std::vector<Status> only(int rank, const Status& written, int size) {
  std::vector<Status> out(static_cast<std::size_t>(size), Status{0, "", 0});
  out[static_cast<std::size_t>(rank)] = written;
  return out;
}

// The first failure among `statuses`, with every failing rank's message.
Status first_failure(const std::vector<Status>& statuses) {
  Status out;
  for (const auto& s : statuses) {
    if (s.ok()) continue;
    if (out.ok()) out.code = s.code;
    out.message += (out.message.empty() ? "" : "\n") + s.message;
  }
  return out;
}

// Step 1: rank 0 creates the directory; its path (or its failure) goes to every rank.
Dir shared_dir(int rank, const std::optional<std::string>& tmpdir) {
  Dir dir;
  std::vector<DirInfo> box(1);
  if (rank == 0) try {
      dir = prepare_dir(tmpdir);
      box[0].path = dir.path.string();
    } catch (...) {
      box[0].status = status_of(std::current_exception());
    }
  broadcast_object_list(box, 0);
  if (!box[0].status.ok()) {
    if (rank != 0) box[0].status.message += " (raised on rank 0)";
    raise(box[0].status);
  }
  dir.path = box[0].path;
  return dir;
}
}  // namespace

bool check_collect_args(std::string_view device, const std::optional<std::string>& tmpdir,
                        long size) {
  if (device != "cpu" && device != "gpu")
    throw InvalidArgument("collect_results: device must be 'cpu' or 'gpu', but got '" +
                          std::string(device) + "'");
  if (device == "gpu" && tmpdir)
    throw InvalidArgument("collect_results: tmpdir must not be given when device is 'gpu' (got '" +
                          *tmpdir + "')");
  if (size < 0)
    throw InvalidArgument("collect_results: argument 'size' = " + std::to_string(size) +
                          " must be >= 0");
  return device == "gpu";
}

void collect_part_files(std::span<const std::byte> mine, const std::optional<std::string>& tmpdir,
                        const std::function<void(std::vector<std::vector<std::byte>>&)>& consume) {
  const int rank = get_rank();
  const int size = get_world_size();
  Dir dir = shared_dir(rank, tmpdir);
  // Step 2: every rank writes its part; the statuses are exchanged (a barrier that carries errors).
  Status written;
  std::random_device entropy;
  written.token = (std::uint64_t{entropy()} << 32) ^ entropy();
  try {
    if (rank != 0 && tmpdir) dir.created = make_dirs(dir.path);
    write_part(part_path(dir.path, rank), mine, rank, written.token);
  } catch (...) {
    written = status_of(std::current_exception());
  }
  // The statuses go to rank 0 only (an all_gather would cost every rank the whole world's list).
  const auto statuses = gather_object(written, 0);
  // Step 3: rank 0 reads and cleans up unless a rank failed; every rank learns the outcome.
  Status done;
  bool read_step = false;
  if (rank == 0) {
    done = first_failure(*statuses);
    read_step = done.ok();
    try {
      std::vector<std::vector<std::byte>> parts;
      for (int r = 0; read_step && r < size; ++r)
        parts.push_back(read_part(dir.path, r, (*statuses)[static_cast<std::size_t>(r)].token));
      if (read_step) consume(parts);
    } catch (...) {
      done = status_of(std::current_exception());
    }
    clean_up(dir, *statuses);
  }
  // Rank 0's outcome, and (as a token) whether the failure came from its own read step.
  std::vector<Status> outcome{done, Status{-1, "", read_step ? 1u : 0u}};
  broadcast_object_list(outcome, 0);
  if (outcome[0].ok()) return;
  if (rank != 0) {
    clean_up(dir, only(rank, written, size));  // its own file, in case rank 0 could not
    if (outcome[1].token == 1) outcome[0].message += " (raised on rank 0)";
  }
  raise(outcome[0]);
}

}  // namespace dist::detail
