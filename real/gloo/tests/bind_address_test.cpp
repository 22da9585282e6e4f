// Which address a gloo rank listens on (real/gloo/bind_address.hpp): GLOO_SOCKET_IFNAME first,
// loopback for a rendezvous on this host, else the source address of the route to the rendezvous
// host; a name that does not resolve is an error naming it and the fix. (Across real hosts, with
// Debian's /etc/hosts, in real/launch/tests/hosts.)
#include "real/gloo/bind_address.hpp"

#include <gtest/gtest.h>

#include "dist/errors.hpp"
#include "testing/processes.hpp"

namespace {

using dist::real::choose_bind_address;
using test_support::ScopedEnv;

TEST(BindAddress, LoopbackForARendezvousOnThisHost) {
  ScopedEnv no_ifname("GLOO_SOCKET_IFNAME", std::nullopt);
  for (const char* host : {"", "localhost", "127.0.0.1", "127.0.1.1"}) {
    const auto c = choose_bind_address(host);
    EXPECT_EQ(c.address, "127.0.0.1") << host;
    EXPECT_TRUE(c.iface.empty());
  }
  EXPECT_EQ(choose_bind_address("::1").address, "::1");
}

TEST(BindAddress, TheInterfaceGivenWins) {
  ScopedEnv ifname("GLOO_SOCKET_IFNAME", "eth7");
  const auto c = choose_bind_address("192.0.2.1");
  EXPECT_EQ(c.iface, "eth7");
  EXPECT_TRUE(c.address.empty());
  EXPECT_EQ(c.why, "GLOO_SOCKET_IFNAME=eth7");
}

TEST(BindAddress, AnUnresolvableRendezvousHostIsNamedWithTheFix) {
  ScopedEnv no_ifname("GLOO_SOCKET_IFNAME", std::nullopt);
  try {
    choose_bind_address("no-such-host.invalid");
    FAIL() << "an unresolvable host was accepted";
  } catch (const dist::BackendError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'no-such-host.invalid' (MASTER_ADDR) does not resolve"), std::string::npos)
        << what;
    EXPECT_NE(what.find("GLOO_SOCKET_IFNAME"), std::string::npos) << what;
  }
}

TEST(BindAddress, LoopbackAddressesAreRecognised) {
  for (const char* a : {"127.0.0.1", "127.0.1.1", "::1", "::ffff:127.0.0.1"})
    EXPECT_TRUE(dist::real::is_loopback_address(a)) << a;
  for (const char* a : {"198.18.0.1", "10.0.0.1", "::2", "128.0.0.1"})
    EXPECT_FALSE(dist::real::is_loopback_address(a)) << a;
}

}  // namespace
