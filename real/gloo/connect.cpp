// Device creation, the Store adapter and the group rendezvous (arrival check, connectFullMesh, a
// closing barrier so no rank leaves while others still read the store, peer address registration).
#include "real/gloo/connect.hpp"

#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>

#include "core/store/join.hpp"
#include "dist/errors.hpp"
#include "real/gloo/bind_address.hpp"
#include "real/gloo/peer_names.hpp"

namespace dist::real {

namespace {

// gloo's Store interface over ours: deadlines come from the group's timeout.
class StoreAdapter final : public ::gloo::rendezvous::Store {
 public:
  StoreAdapter(core::Store& store, std::chrono::milliseconds timeout)
      : store_(store), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(key, data);
  }
  std::vector<char> get(const std::string& key) override { return store_.get(key, timeout_); }
  void wait(const std::vector<std::string>& keys) override { store_.wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    store_.wait(keys, timeout);
  }

 private:
  core::Store& store_;
  std::chrono::milliseconds timeout_;
};

// Exposes the (protected) decoding of a peer's published address list.
class MeshContext final : public ::gloo::rendezvous::Context {
 public:
  using ::gloo::rendezvous::Context::Context;
  std::vector<char> address_for_me(std::vector<char>& all, int peer) {
    return extractAddress(all, peer);
  }
};

}  // namespace

std::shared_ptr<::gloo::transport::Device> make_gloo_device(const std::string& rendezvous_host) {
  const BindChoice choice = choose_bind_address(rendezvous_host);
  ::gloo::transport::tcp::attr attr;
  attr.iface = choice.iface;
  attr.hostname = choice.address;
  try {
    return ::gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    throw BackendError("gloo: cannot listen on " + choice.why + ": " + e.what() +
                       " (set GLOO_SOCKET_IFNAME to the network interface to use)");
  }
}

std::shared_ptr<::gloo::Context> connect_group(const GlooGroupSpec& spec, ErrorMapper& errors) {
  core::PrefixStore store(spec.prefix, spec.store);
  core::wait_for_members(store, spec.global_ranks, spec.rank, spec.timeout, "gloo",
                         errors.group_text(),
                         "every rank must call init_process_group / new_group");
  const int size = static_cast<int>(spec.global_ranks.size());
  auto context = std::make_shared<MeshContext>(spec.rank, size);
  context->setTimeout(spec.timeout);
  StoreAdapter adapter(store, spec.timeout);
  auto device = spec.device;
  context->connectFullMesh(adapter, device);
  ::gloo::BarrierOptions barrier(context);  // every pair is connected after this
  barrier.setTimeout(spec.timeout);
  ::gloo::barrier(barrier);
  // Gloo names a peer by the listening address it published (when we connected to it) or by the
  // local end of its connection to us (when it connected): register both.
  std::vector<sockaddr_storage> listeners(static_cast<std::size_t>(size));
  for (int peer = 0; peer < size; ++peer) {
    if (peer == spec.rank) continue;
    auto all = store.get(std::to_string(peer), spec.timeout);
    const ::gloo::transport::tcp::Address address(context->address_for_me(all, peer));
    errors.add_peer(address.str(), spec.global_ranks[static_cast<std::size_t>(peer)]);
    listeners[static_cast<std::size_t>(peer)] = address.getSockaddr();
  }
  register_connected_peers(store, spec.rank, spec.global_ranks, listeners, spec.timeout, errors);
  return context;
}

}  // namespace dist::real
