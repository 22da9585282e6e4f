// rank_environment and job_secret.
#include "real/launch/environment.hpp"

#include <cctype>
#include <cstdlib>
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

EnvVars rank_environment(const Options& options, int local_rank, int port, int restart) {
  const int rank = options.node_rank * options.nproc + local_rank;
  return {
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(options.nnodes * options.nproc)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(options.nproc)},
      {"GROUP_RANK", std::to_string(options.node_rank)},
      {"MASTER_ADDR", options.master_addr},
      {"MASTER_PORT", std::to_string(port)},
      {"TORCHELASTIC_RESTART_COUNT", std::to_string(restart)},
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

}  // namespace dist::launch
