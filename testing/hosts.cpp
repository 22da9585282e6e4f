// Hosts: namespaces, the bridge and the veth pairs made with `ip`, faults with `ip link`,
// iptables and hosts_delay, all through /bin/sh commands that must succeed (runtime_error naming
// the command).
#include "testing/hosts.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace test_support {

namespace {

void run(const std::string& command) {
  const std::string quiet = command + " >/dev/null 2>&1";
  if (std::system(quiet.c_str()) != 0) throw std::runtime_error("hosts: '" + command + "' failed");
}

bool succeeds(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string netns_dir(const std::string& ns) { return "/etc/netns/" + ns; }

}  // namespace

std::string Hosts::unavailable() {
  if (::geteuid() != 0) return "making hosts (network namespaces) needs root";
  if (!succeeds("command -v ip")) return "iproute2's `ip` is not installed";
  if (!succeeds("command -v unshare")) return "util-linux's `unshare` is not installed";
  const std::string probe = "dprobe" + std::to_string(::getpid());
  if (!succeeds("ip netns add " + probe)) return "this machine refuses `ip netns add`";
  run("ip netns del " + probe);
  return "";
}

Hosts::Hosts(int count, HostsFile file) : count_(count), loss_(static_cast<std::size_t>(count), 0) {
  static std::atomic<int> made{0};
  tag_ = "d" + std::to_string(::getpid()) + "x" + std::to_string(made++);
  try {
    run("ip netns add " + switch_ns());
    run("ip -n " + switch_ns() + " link add br0 type bridge");
    run("ip -n " + switch_ns() + " link set br0 up");
    for (int h = 0; h < count_; ++h) {
      run("ip netns add " + ns(h));
      const std::string inside = tag_ + "i" + std::to_string(h);
      run("ip link add " + inside + " type veth peer name " + port(h));
      run("ip link set " + inside + " netns " + ns(h));
      run("ip link set " + port(h) + " netns " + switch_ns());
      run("ip -n " + ns(h) + " link set " + inside + " name eth0");
      run("ip -n " + ns(h) + " addr add " + address(h) + "/24 dev eth0");
      run("ip -n " + ns(h) + " link set eth0 up");
      run("ip -n " + ns(h) + " link set lo up");
      run("ip -n " + switch_ns() + " link set " + port(h) + " master br0");
      run("ip -n " + switch_ns() + " link set " + port(h) + " up");
      std::filesystem::create_directories(netns_dir(ns(h)));
      std::ofstream hosts(netns_dir(ns(h)) + "/hosts");
      hosts << "127.0.0.1\tlocalhost\n";
      if (file == HostsFile::debian_default) hosts << "127.0.1.1\t" << name(h) << "\n";
      if (file == HostsFile::resolving)
        for (int other = 0; other < count_; ++other)
          hosts << address(other) << "\t" << name(other) << "\n";
    }
  } catch (...) {
    remove();
    throw;
  }
}

Hosts::~Hosts() { remove(); }

void Hosts::remove() {
  for (int h = 0; h < count_; ++h) {
    kill_all(h);
    succeeds("ip netns del " + ns(h));
    std::error_code ignored;
    std::filesystem::remove_all(netns_dir(ns(h)), ignored);
  }
  succeeds("ip netns del " + switch_ns());
  std::error_code ignored;
  std::filesystem::remove("/tmp/" + tag_ + "-rsh", ignored);
}

std::string Hosts::ns(int host) const { return tag_ + "h" + std::to_string(host); }
std::string Hosts::switch_ns() const { return tag_ + "s"; }
std::string Hosts::port(int host) const { return tag_ + "p" + std::to_string(host); }
std::string Hosts::address(int host) const { return "198.18.0." + std::to_string(host + 1); }
std::string Hosts::name(int host) const { return "host" + std::to_string(host); }

std::vector<std::string> Hosts::on(int host, const std::vector<std::string>& command) const {
  std::vector<std::string> out{
      "ip",      "netns", "exec", ns(host), "unshare",
      "--uts",   "--",    "sh",   "-c",     "hostname \"$0\" && exec \"$@\"",
      name(host)};
  out.insert(out.end(), command.begin(), command.end());
  return out;
}

std::string Hosts::rsh_agent() const {
  const std::string path = "/tmp/" + tag_ + "-rsh";
  if (!std::filesystem::exists(path)) {
    std::ofstream script(path);
    script << "#!/bin/sh\n# mpirun's rsh agent on the test hosts: $1 is hostN, the rest a command\n"
           << "host=$1; shift\n"
           << "exec ip netns exec " << tag_ << "h\"${host#host}\" unshare --uts -- sh -c "
           << "'hostname \"$0\" && exec sh -c \"$1\"' \"$host\" \"$*\"\n";
    script.close();
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  return path;
}

void Hosts::cut_off(int host) { run("ip -n " + switch_ns() + " link set " + port(host) + " down"); }
void Hosts::reconnect(int host) { run("ip -n " + switch_ns() + " link set " + port(host) + " up"); }

void Hosts::partition(int a, int b) {
  for (const auto& [here, there] : {std::pair{a, b}, std::pair{b, a}}) {
    run("ip netns exec " + ns(here) + " iptables -A INPUT -s " + address(there) + " -j DROP");
    run("ip netns exec " + ns(here) + " iptables -A OUTPUT -d " + address(there) + " -j DROP");
  }
}

void Hosts::heal(int a, int b) {
  for (const auto& [here, there] : {std::pair{a, b}, std::pair{b, a}}) {
    run("ip netns exec " + ns(here) + " iptables -D INPUT -s " + address(there) + " -j DROP");
    run("ip netns exec " + ns(here) + " iptables -D OUTPUT -d " + address(there) + " -j DROP");
  }
}

void Hosts::lose(int host, double probability) {
  const auto rule = [&](double p) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", p);
    return " INPUT -i eth0 -m statistic --mode random --probability " + std::string(text) +
           " -j DROP";
  };
  double& current = loss_[static_cast<std::size_t>(host)];
  if (current > 0) run("ip netns exec " + ns(host) + " iptables -D" + rule(current));
  current = probability;
  if (probability > 0) run("ip netns exec " + ns(host) + " iptables -A" + rule(probability));
}

void Hosts::delay(int host, std::chrono::milliseconds delay, const std::string& delayer) {
  const std::string queue = std::to_string(host);
  run("ip netns exec " + ns(host) + " " + delayer + " --queue " + queue + " --delay-ms " +
      std::to_string(delay.count()) + " </dev/null >/dev/null 2>&1 &");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // bound before packets queue
  run("ip netns exec " + ns(host) + " iptables -A OUTPUT -o eth0 -j NFQUEUE --queue-num " + queue +
      " --queue-bypass");
}

void Hosts::kill_all(int host) { succeeds("ip netns pids " + ns(host) + " | xargs -r kill -9"); }

}  // namespace test_support
