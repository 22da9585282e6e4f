// The examples' `--launcher sim|pytorch|slurm|mpi` and `--backend gloo|nccl|mpi` options: sim (the
// default) runs the example on a simulated cluster in this process; the others make this process
// one rank of a real world through dist::init_dist, as under distrun, torchrun, srun or mpirun.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <dist/dist.hpp>
#include <dist/init.hpp>

namespace examples {

struct LaunchOption {
  std::string launcher = "sim";
  dist::Backend backend = dist::Backend::gloo;
  bool real() const { return launcher != "sim"; }
};

// Parses the options (also from $DIST_LAUNCHER when --launcher is absent); exits with status 2
// and a usage line on anything else.
inline LaunchOption parse_launch_option(int argc, char** argv, const char* program) {
  LaunchOption option;
  if (const char* env = std::getenv("DIST_LAUNCHER"); env && *env) option.launcher = env;
  auto usage = [&] {
    std::fprintf(stderr, "usage: %s [--launcher sim|pytorch|slurm|mpi] [--backend gloo|nccl|mpi]\n",
                 program);
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    const std::string value = argv[++i];
    if (arg == "--launcher") option.launcher = value;
    else if (arg == "--backend" && value == "gloo") option.backend = dist::Backend::gloo;
    else if (arg == "--backend" && value == "nccl") option.backend = dist::Backend::nccl;
    else if (arg == "--backend" && value == "mpi") option.backend = dist::Backend::mpi;
    else usage();
  }
  if (option.launcher != "sim" && option.launcher != "pytorch" && option.launcher != "slurm" &&
      option.launcher != "mpi")
    usage();
  return option;
}

}  // namespace examples
