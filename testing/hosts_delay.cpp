// hosts_delay: the user-space delay queue of the test hosts (this kernel has no sch_netem). Run in
// a host's namespace, it takes the packets an iptables NFQUEUE rule hands to queue --queue and
// lets each go --delay-ms after it arrived, in arrival order. Until SIGTERM/SIGKILL; a rule with
// --queue-bypass lets packets pass again once it is gone. Prints "delaying" once bound.
#include <arpa/inet.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#ifndef NF_ACCEPT
#define NF_ACCEPT 1  // <linux/netfilter.h>'s verdict, which clashes with <netinet/in.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Held {
  std::uint32_t id;
  Clock::time_point due;
};

struct State {
  std::deque<Held> held;
  std::chrono::milliseconds delay{0};
};

int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* data, void* context) {
  auto& state = *static_cast<State*>(context);
  if (const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data))
    state.held.push_back({ntohl(header->packet_id), Clock::now() + state.delay});
  return 0;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "hosts_delay: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  int queue = 0;
  State state;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--queue") queue = std::atoi(argv[i + 1]);
    else if (flag == "--delay-ms") state.delay = std::chrono::milliseconds(std::atoi(argv[i + 1]));
    else fail("unknown option " + flag + " (usage: hosts_delay --queue N --delay-ms D)");
  }
  nfq_handle* handle = nfq_open();
  if (!handle) fail("nfq_open failed (is nfnetlink_queue available?)");
  nfq_q_handle* q = nfq_create_queue(handle, static_cast<std::uint16_t>(queue), &on_packet, &state);
  if (!q) fail("cannot bind queue " + std::to_string(queue));
  if (nfq_set_mode(q, NFQNL_COPY_META, 0) < 0) fail("cannot set the copy mode");
  nfq_set_queue_maxlen(q, 65536);
  const int fd = nfq_fd(handle);
  std::printf("delaying\n");
  std::fflush(stdout);
  char buffer[65536];
  for (;;) {
    int wait_ms = 1000;
    if (!state.held.empty()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          state.held.front().due - Clock::now());
      wait_ms = static_cast<int>(std::max<long long>(0, left.count()));
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) > 0) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) nfq_handle_packet(handle, buffer, static_cast<int>(n));
    }
    const auto now = Clock::now();
    while (!state.held.empty() && state.held.front().due <= now) {
      nfq_set_verdict(q, state.held.front().id, NF_ACCEPT, 0, nullptr);
      state.held.pop_front();
    }
  }
}
