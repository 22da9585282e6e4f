// init_dist: launcher environment (core/init/launcher), init_process_group(env://), then the
// local group: ranks exchange (node, local rank) and every rank creates each node's group, in
// the order of the nodes' first ranks (new_group is collective over the world, as in torch).
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "core/calls/call_layer.hpp"
#include "core/context.hpp"
#include "core/init/launcher.hpp"
#include "core/init/rendezvous.hpp"
#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "real/registry.hpp"
#include "real/world.hpp"

namespace dist {

namespace {

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// The world ranks of each node, nodes in order of their first rank, each node's ranks in
// local-rank order (world order where the launcher gave no consistent local ranks).
std::vector<std::vector<int>> node_layout(const std::vector<std::tuple<std::string, int>>& all) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<int, int>>> nodes;  // node -> (local rank, rank)
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    const auto& [node, local] = all[static_cast<std::size_t>(r)];
    if (!nodes.contains(node)) order.push_back(node);
    nodes[node].emplace_back(local, r);
  }
  std::vector<std::vector<int>> layout;
  for (const auto& node : order) {
    auto members = nodes[node];
    std::vector<int> locals;
    for (const auto& [local, rank] : members) locals.push_back(local);
    std::sort(locals.begin(), locals.end());
    bool consistent = true;
    for (std::size_t i = 0; i < locals.size(); ++i)
      consistent = consistent && locals[i] == static_cast<int>(i);
    if (consistent) std::sort(members.begin(), members.end());
    std::vector<int> ranks;
    for (const auto& [local, rank] : members) ranks.push_back(rank);
    layout.push_back(std::move(ranks));
  }
  return layout;
}

void create_local_group(const core::LaunchInfo& info) {
  const std::string node = host_name() + (info.node.empty() ? "" : "/" + info.node);
  const auto all = all_gather_object(std::tuple<std::string, int>{node, info.local_rank});
  std::shared_ptr<detail::GroupState> mine;
  for (auto& ranks : node_layout(all)) {
    const bool member = std::find(ranks.begin(), ranks.end(), get_rank()) != ranks.end();
    Group group = new_group(std::move(ranks));
    if (member) mine = group.state();
  }
  core::current_context()->local = mine;
  std::vector<std::string> hosts;  // errors say where a rank is
  for (const auto& [name, local] : all) hosts.push_back(name.substr(0, name.find('/')));
  core::set_hosts(*core::current_context()->world->backend, std::move(hosts));
  // The user's first collective is #1 in errors, whatever init_dist called before it.
  core::restart_numbering(*core::current_context()->world->backend);
}

}  // namespace

void init_dist(std::string_view launcher, Backend backend, const InitOptions& options) {
  const core::LaunchInfo info = core::prepare_launcher_env(launcher, options.port);
  // As MMEngine: nccl makes GPU local_rank % count current (mpi: initialises MPI).
  real::check_can_join(backend, "init_dist");
  real::backend_entry(backend, "init_dist").prepare(info.local_rank);
  real::join_world(backend, core::open_tcp_rendezvous(info.address, options.timeout, "env://"),
                   options.timeout);
  try {
    // A replacement joins by dist::reconfigure: the node layout is the world's collective.
    if (core::current_context()->epoch < 0)
      core::restart_numbering(*core::current_context()->world->backend);
    else create_local_group(info);
  } catch (...) {
    destroy_dist();
    throw;
  }
}

}  // namespace dist
