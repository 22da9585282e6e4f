// rank_environment, job_secret and free_port.
#include "real/launch/environment.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace dist::launch {

namespace {

// The file's first line, trailing whitespace removed; runtime_error naming the file when it
// cannot be read or holds no secret.
std::string read_secret_file(const std::string& path) {
  std::ifstream in(path);
  std::string secret;
  if (!in || !std::getline(in, secret))
    throw std::runtime_error("cannot read the secret file '" + path + "' (--secret-file)");
  while (!secret.empty() && std::isspace(static_cast<unsigned char>(secret.back())))
    secret.pop_back();
  if (secret.empty()) throw std::runtime_error("the secret file '" + path + "' is empty");
  return secret;
}

}  // namespace

EnvVars rank_environment(const Options& options, int local_rank, int port) {
  const int rank = options.node_rank * options.nproc + local_rank;
  return {
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(options.nnodes * options.nproc)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(options.nproc)},
      {"GROUP_RANK", std::to_string(options.node_rank)},
      {"MASTER_ADDR", options.master_addr},
      {"MASTER_PORT", std::to_string(port)},
  };
}

std::string job_secret(const Options& options) {
  if (options.secret_file) return read_secret_file(*options.secret_file);
  if (const char* given = std::getenv("DIST_STORE_SECRET"); given && *given) return given;
  if (options.no_secret) return "";
  if (options.nnodes > 1)  // each node's distrun would draw another
    throw UsageError("--nnodes " + std::to_string(options.nnodes) +
                     " needs the job's store secret, the same on every node: export "
                     "DIST_STORE_SECRET or give --secret-file PATH (--no-secret runs without "
                     "one, and then any client that reaches the port may join the job)");
  unsigned char random[16] = {};
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(random), sizeof random))
    throw std::runtime_error("cannot read /dev/urandom for the job's store secret");
  static constexpr char hex[] = "0123456789abcdef";
  std::string secret;
  for (const unsigned char b : random) {
    secret += hex[b >> 4];
    secret += hex[b & 15];
  }
  return secret;
}

int free_port(const std::string& addr) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(addr.c_str(), "0", &hints, &found); rc != 0)
    throw std::runtime_error("cannot resolve '" + addr + "': " + ::gai_strerror(rc));
  int port = 0;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && port == 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
      char service[16] = {};
      ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, nullptr, 0, service, sizeof service,
                    NI_NUMERICSERV);
      port = std::atoi(service);
    } else {
      why = std::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (port == 0) throw std::runtime_error("cannot bind a port on '" + addr + "': " + why);
  return port;
}

}  // namespace dist::launch
