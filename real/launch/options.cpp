// parse_options: flags in `--name value` or `--name=value` form, numbers checked for range, the
// program after `--` (or at the first non-option), and the multi-node consistency rules.
#include "real/launch/options.hpp"

#include <charconv>
#include <cmath>

namespace dist::launch {

namespace {

long long parse_int(const std::string& flag, const std::string& text, long long min,
                    long long max) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end)
    throw UsageError(flag + " expects an integer, got '" + text + "'");
  if (value < min || value > max)
    throw UsageError(flag + " must be in " + std::to_string(min) + ".." + std::to_string(max) +
                     ", got " + text);
  return value;
}

std::chrono::milliseconds parse_seconds(const std::string& flag, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || !std::isfinite(value) || value < 0 ||
      value > 86400)
    throw UsageError(flag + " expects seconds (0..86400), got '" + text + "'");
  return std::chrono::milliseconds(static_cast<long long>(value * 1000));
}

// Applies one flag with its value to `options`; false when the flag is unknown.
bool apply(Options& options, const std::string& flag, const std::string& value) {
  if (flag == "-n" || flag == "--nproc-per-node")
    options.nproc = static_cast<int>(parse_int(flag, value, 1, 4096));
  else if (flag == "--nnodes") options.nnodes = static_cast<int>(parse_int(flag, value, 1, 65536));
  else if (flag == "--node-rank")
    options.node_rank = static_cast<int>(parse_int(flag, value, 0, 65535));
  else if (flag == "--master-port")
    options.master_port = static_cast<int>(parse_int(flag, value, 1, 65535));
  else if (flag == "--master-addr") {
    if (value.empty()) throw UsageError("--master-addr expects a host name or address");
    options.master_addr = value;
  } else if (flag == "--grace") options.grace = parse_seconds(flag, value);
  else if (flag == "--stop-delay") options.stop_delay = parse_seconds(flag, value);
  else if (flag == "--max-restarts")
    options.max_restarts = static_cast<int>(parse_int(flag, value, 0, 1000000));
  else if (flag == "--secret-file") {
    if (value.empty()) throw UsageError("--secret-file expects a path");
    options.secret_file = value;
  } else return false;
  return true;
}

void check(const Options& options) {
  if (options.nproc == 0) throw UsageError("-n N (the number of processes) is required");
  if (options.command.empty()) throw UsageError("no program given (distrun -n N -- prog args)");
  if (options.node_rank >= options.nnodes)
    throw UsageError("--node-rank must be in [0, " + std::to_string(options.nnodes) + "), got " +
                     std::to_string(options.node_rank));
  if (options.nnodes > 1 && !options.master_port)
    throw UsageError("--nnodes " + std::to_string(options.nnodes) +
                     " needs --master-port (every node must use the same one)");
  if (options.no_secret && options.secret_file)
    throw UsageError("--no-secret and --secret-file contradict each other");
  if (static_cast<long long>(options.nproc) * options.nnodes > 1'000'000)
    throw UsageError("the world (-n x --nnodes) is larger than 1000000 processes");
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  Options options;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      return options;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program starts here
    if (arg == "--no-secret") {
      options.no_secret = true;
      continue;
    }
    std::string flag = arg, value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) throw UsageError(flag + " expects a value");
      value = args[++i];
    }
    if (!apply(options, flag, value)) throw UsageError("unknown option '" + flag + "'");
  }
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  check(options);
  return options;
}

std::string usage_text() {
  return "usage: distrun -n N [options] [--] program [args...]\n"
         "Starts N processes of `program` on this node with the torchrun environment (RANK,\n"
         "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT),\n"
         "prefixes each line they print with [rank], forwards SIGINT/SIGTERM, and when one fails\n"
         "stops the others and exits with its status (128 + signal when it was killed).\n"
         "options:\n"
         "  -n, --nproc-per-node N   processes on this node (required)\n"
         "  --nnodes M               nodes in the job (default 1)\n"
         "  --node-rank K            this node's index, 0..M-1 (default 0)\n"
         "  --master-addr HOST       where rank 0 hosts the rendezvous (default 127.0.0.1)\n"
         "  --master-port P          its port (default: a free port; required with --nnodes > 1)\n"
         "  --stop-delay S           after a failure, seconds the others get to exit on their\n"
         "                           own before SIGTERM (default 0)\n"
         "  --grace S                seconds between SIGTERM and SIGKILL (default 5)\n"
         "  --max-restarts N         restart a failed rank's process, with the same rank and\n"
         "                           TORCHELASTIC_RESTART_COUNT one higher, up to N times each\n"
         "                           while the others keep running (default 0: a failure stops\n"
         "                           them all). Rank 0 hosts the job's store: its failure still\n"
         "                           stops the job\n"
         "  --secret-file PATH       the job's store secret (else DIST_STORE_SECRET; one node:\n"
         "                           drawn at random). With --nnodes > 1 every node needs the\n"
         "                           same one, given by either\n"
         "  --no-secret              run without a secret: any client reaching the port may join\n"
         "  -h, --help               this text\n";
}

}  // namespace dist::launch
