// LocalSlurm: a temporary folder holding slurm.conf, the daemons' state, logs and munge's socket;
// the daemons are started in the background (they daemonise) and stopped through their pid files.
#include "testing/local_slurm.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "testing/ports.hpp"

namespace test_support {

namespace {

bool succeeds(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string tail_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() > 1500 ? text.substr(text.size() - 1500) : text;
}

void kill_from(const std::string& pid_file) {
  std::ifstream in(pid_file);
  pid_t pid = 0;
  if (in >> pid && pid > 0) ::kill(pid, SIGTERM);
}

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

std::string LocalSlurm::unavailable() {
  if (::geteuid() != 0) return "a local Slurm needs root";
  for (const char* program : {"munged", "slurmctld", "slurmd", "srun", "sinfo"})
    if (!succeeds(std::string("command -v ") + program))
      return std::string(program) + " is not installed (Debian's slurm-wlm and munge)";
  if (!std::filesystem::exists("/etc/munge/munge.key")) return "/etc/munge/munge.key is missing";
  return "";
}

LocalSlurm::LocalSlurm() {
  char pattern[] = "/tmp/dist-slurm-XXXXXX";
  if (!::mkdtemp(pattern)) throw std::runtime_error("LocalSlurm: cannot make a temporary folder");
  dir_ = pattern;
  for (const char* sub : {"/state", "/spool", "/munge"})
    std::filesystem::create_directories(dir_ + sub);
  std::filesystem::permissions(dir_ + "/munge", std::filesystem::perms::owner_all);
  const std::string host = host_name();
  {
    std::ofstream conf(dir_ + "/slurm.conf");
    conf << "ClusterName=dist\nSlurmctldHost=" << host << "(127.0.0.1)\nSlurmUser=root\n"
         << "SlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
         << "AuthInfo=socket=" << dir_ << "/munge/sock\n"
         << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
         << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_
         << "/slurmd.pid\nSlurmctldPort=" << free_port() << "\nSlurmdPort=" << free_port()
         << "\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
         << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nReturnToService=2\n"
         << "MpiDefault=none\nJobCompType=jobcomp/none\n"
         << "AccountingStorageType=accounting_storage/none\n"
         << "NodeName=" << host
         << " NodeAddr=127.0.0.1 CPUs=" << std::thread::hardware_concurrency()
         << " State=UNKNOWN\nPartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
         << "OverSubscribe=YES\n";
  }
  const auto start = [&](const std::string& command, const std::string& log) {
    if (!succeeds(command)) {
      const std::string why = "LocalSlurm: '" + command + "' failed:\n" + tail_of(log);
      stop();
      throw std::runtime_error(why);
    }
  };
  const std::string m = dir_ + "/munge/";
  start("munged --force --socket=" + m + "sock --pid-file=" + m +
            "pid --key-file=/etc/munge/munge.key"
            " --log-file=" +
            m + "log --seed-file=" + m + "seed",
        m + "log");
  start("slurmctld -f " + dir_ + "/slurm.conf -L " + dir_ + "/slurmctld.log",
        dir_ + "/slurmctld.log");
  start("slurmd -f " + dir_ + "/slurm.conf -L " + dir_ + "/slurmd.log", dir_ + "/slurmd.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!succeeds("SLURM_CONF=" + dir_ + "/slurm.conf sinfo -h -t idle -o %n | grep -q ."))
    if (std::chrono::steady_clock::now() > deadline) {
      const std::string why = "LocalSlurm: the node did not become idle within 30 s:\n" +
                              tail_of(dir_ + "/slurmctld.log") + tail_of(dir_ + "/slurmd.log");
      stop();
      throw std::runtime_error(why);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

LocalSlurm::~LocalSlurm() { stop(); }

void LocalSlurm::stop() {
  kill_from(dir_ + "/slurmd.pid");
  kill_from(dir_ + "/slurmctld.pid");
  kill_from(dir_ + "/munge/pid");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // before their files go
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::vector<std::pair<std::string, std::string>> LocalSlurm::env() const {
  return {{"SLURM_CONF", dir_ + "/slurm.conf"}};
}

}  // namespace test_support
