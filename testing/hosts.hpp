// Hosts as a test fixture: Linux network namespaces joined by a bridge in a namespace of their
// own (nothing is added to the machine's own network, nothing is routed outside), addresses in
// 198.18.0.0/24 (RFC 2544's benchmarking range), each host with its own /etc/hosts and, for the
// commands run on it, its own hostname. Faults: a host cut off (its port on the bridge down), a
// partition between hosts and random loss (iptables), delay (a user-space NFQUEUE queue), every
// process of a host killed. Needs root
// and iproute2; everything made is removed by the destructor.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace test_support {

// What each host's /etc/hosts says.
enum class HostsFile {
  resolving,       // every host's name maps to its address
  debian_default,  // as Debian installs it: the host's own name maps to 127.0.1.1
  unresolvable,    // localhost only: the host's own name does not resolve
};

class Hosts {
 public:
  // Why this machine cannot make hosts ("" when it can): not root, no `ip`, no namespaces.
  static std::string unavailable();

  explicit Hosts(int count, HostsFile file = HostsFile::resolving);
  ~Hosts();
  Hosts(const Hosts&) = delete;
  Hosts& operator=(const Hosts&) = delete;

  int count() const { return count_; }
  std::string address(int host) const;  // "198.18.0.<host + 1>"
  std::string name(int host) const;     // "host<host>"
  // `command` run on `host`: in its namespace, with its hostname.
  std::vector<std::string> on(int host, const std::vector<std::string>& command) const;

  // An rsh agent for mpirun (--mca plm_rsh_agent) run on one of the hosts: "<agent> hostN cmd"
  // runs cmd on host N (a script in /tmp, removed with the hosts).
  std::string rsh_agent() const;

  // The host's link to the others goes down (its processes live on, unreachable), or comes back.
  void cut_off(int host);
  void reconnect(int host);
  // Packets between host `a` and host `b` are dropped both ways (iptables), or pass again.
  void partition(int a, int b);
  void heal(int a, int b);
  // Every packet `host` receives is dropped with this probability (0 removes the rule).
  void lose(int host, double probability);
  // Every packet `host` sends waits `delay` in a user-space queue (`delayer`: the path of the
  // hosts_delay program, run in the host's namespace until the host is removed).
  void delay(int host, std::chrono::milliseconds delay, const std::string& delayer);
  // SIGKILL to every process in the host's namespace (a host that died).
  void kill_all(int host);

 private:
  std::string ns(int host) const;
  std::string switch_ns() const;
  std::string port(int host) const;  // the host's veth end on the bridge
  void remove();

  int count_ = 0;
  std::string tag_;  // unique per fixture: namespaces of parallel tests never collide
  std::vector<double> loss_;
};

}  // namespace test_support
