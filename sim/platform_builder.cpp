#include "sim/platform_builder.hpp"

#include <xbt/log.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>

namespace symmesh::sim {
namespace {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

// Stands in for "unlimited" on the non-blocking fabric link (bytes/s).
constexpr double kFabricBandwidth = 1e18;

sg4::Link* one_way_link(sg4::NetZone* zone, const std::string& name, double bandwidth,
                        double latency_s) {
  return zone->create_link(name, bandwidth)
      ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
      ->set_latency(latency_s)
      ->seal();
}

struct Node {
  sg4::NetZone* zone = nullptr;
  NetPoint* gateway = nullptr;
};

Node build_node(sg4::NetZone* root, const ClusterSpec& c, int n, std::vector<sg4::Host*>& hosts) {
  const std::string prefix = "node" + std::to_string(n);
  Node node;
  node.zone = sg4::create_full_zone(prefix);
  node.zone->set_parent(root);
  node.gateway = node.zone->create_router(prefix + "_gw");

  const int g_count = c.gpus_per_node;
  const double nvl_latency = c.intra_node.latency_s / 2;
  std::vector<sg4::Host*> gpus(g_count);
  std::vector<sg4::Link*> nvl_up(g_count), nvl_down(g_count);
  for (int g = 0; g < g_count; ++g) {
    const std::string name = "gpu" + std::to_string(n * g_count + g);
    gpus[g] = node.zone->create_host(name, kHostFlopsPerS)->seal();
    nvl_up[g] =
        one_way_link(node.zone, name + "_nvl_up", c.intra_node.bandwidth_bytes_per_s, nvl_latency);
    nvl_down[g] = one_way_link(node.zone, name + "_nvl_down", c.intra_node.bandwidth_bytes_per_s,
                               nvl_latency);
  }
  for (int a = 0; a < g_count; ++a)
    for (int b = 0; b < g_count; ++b)
      if (a != b)
        node.zone->add_route(gpus[a]->get_netpoint(), gpus[b]->get_netpoint(), nullptr, nullptr,
                             {sg4::LinkInRoute(nvl_up[a]), sg4::LinkInRoute(nvl_down[b])}, false);

  if (c.nodes > 1) {
    const int nics = c.inter_node.nics_per_node;
    const double nic_latency = c.inter_node.latency_s / 2;
    std::vector<sg4::Link*> nic_up(nics), nic_down(nics);
    for (int x = 0; x < nics; ++x) {
      const std::string name = prefix + "_nic" + std::to_string(x);
      nic_up[x] =
          one_way_link(node.zone, name + "_up", c.inter_node.bandwidth_bytes_per_s, nic_latency);
      nic_down[x] =
          one_way_link(node.zone, name + "_down", c.inter_node.bandwidth_bytes_per_s, nic_latency);
    }
    for (int g = 0; g < g_count; ++g) {
      const int x = static_cast<int>(static_cast<long long>(g) * nics / g_count);
      node.zone->add_route(gpus[g]->get_netpoint(), node.gateway, nullptr, nullptr,
                           {sg4::LinkInRoute(nic_up[x])}, false);
      node.zone->add_route(node.gateway, gpus[g]->get_netpoint(), nullptr, nullptr,
                           {sg4::LinkInRoute(nic_down[x])}, false);
    }
  }
  node.zone->seal();
  hosts.insert(hosts.end(), gpus.begin(), gpus.end());
  return node;
}

}  // namespace

void configure_network_model() {
  xbt_log_control_set("xbt_cfg.thres:warning");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
}

std::vector<sg4::Host*> build_platform(const ClusterSpec& cluster) {
  cluster.validate();
  auto* root = sg4::create_full_zone("cluster");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(cluster.num_gpus());
  std::vector<Node> nodes;
  nodes.reserve(cluster.nodes);
  for (int n = 0; n < cluster.nodes; ++n) nodes.push_back(build_node(root, cluster, n, hosts));

  if (cluster.nodes > 1) {
    // SimGrid forbids an empty route between zones: each node reaches the fabric through
    // its own unlimited FATPIPE port, which never limits a flow and couples only the
    // flows leaving the same node in the solver.
    std::vector<sg4::Link*> ports(cluster.nodes);
    for (int n = 0; n < cluster.nodes; ++n)
      ports[n] = root->create_link("node" + std::to_string(n) + "_fabric_port", kFabricBandwidth)
                     ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                     ->set_latency(0)
                     ->seal();
    for (int a = 0; a < cluster.nodes; ++a)
      for (int b = 0; b < cluster.nodes; ++b)
        if (a != b)
          root->add_route(nodes[a].zone->get_netpoint(), nodes[b].zone->get_netpoint(),
                          nodes[a].gateway, nodes[b].gateway, {sg4::LinkInRoute(ports[a])}, false);
  }
  root->seal();
  return hosts;
}

}  // namespace symmesh::sim
