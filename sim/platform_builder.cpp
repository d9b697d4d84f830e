#include "sim/platform_builder.hpp"

#include <xbt/log.h>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <stdexcept>
#include <string>

#include "core/fabric_layout.hpp"

namespace symmesh::sim {
namespace {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;

// One direction of a physical link: its SimGrid link and its latency (the zone adds the
// latencies of the links it routes through, as SimGrid's own zones do).
struct OneWay {
  StandardLinkImpl* link = nullptr;
  double latency_s = 0;
};

struct Duplex {
  OneWay up, down;
};

// Every GPU of the cluster in one zone whose routes are computed from the ranks' indices
// when a comm asks for them (nothing is stored per pair of GPUs).
class ClusterZone final : public NetZoneImpl {
 public:
  ClusterZone(const ClusterSpec& cluster)
      : NetZoneImpl("cluster"), c_(cluster), fabric_(c_), nvl_(c_.num_gpus()) {
    if (c_.nodes > 1) {
      nic_.resize(static_cast<size_t>(c_.nodes) * fabric_.nics_per_node());
      leaf_.resize(fabric_.leaf_count());
    }
  }

  // Hosts, then links: all made through the zone's S4U face.
  std::vector<sg4::Host*> populate() {
    sg4::NetZone* zone = get_iface();
    std::vector<sg4::Host*> hosts;
    hosts.reserve(c_.num_gpus());
    for (int r = 0; r < c_.num_gpus(); ++r) {
      const std::string name = "gpu" + std::to_string(r);
      hosts.push_back(zone->create_host(name, kHostFlopsPerS)->seal());
      rank_of_id_.resize(std::max(rank_of_id_.size(), hosts.back()->get_netpoint()->id() + 1), -1);
      rank_of_id_[hosts.back()->get_netpoint()->id()] = r;
      nvl_[r] =
          duplex(name + "_nvl", c_.intra_node.bandwidth_bytes_per_s, c_.intra_node.latency_s / 2);
    }
    for (size_t slot = 0; slot < nic_.size(); ++slot) {
      const int node = static_cast<int>(slot) / fabric_.nics_per_node();
      const int x = static_cast<int>(slot) % fabric_.nics_per_node();
      nic_[slot] = duplex("node" + std::to_string(node) + "_nic" + std::to_string(x),
                          c_.inter_node.bandwidth_bytes_per_s, c_.inter_node.latency_s / 2);
    }
    for (size_t leaf = 0; leaf < leaf_.size(); ++leaf)
      leaf_[leaf] = duplex("leaf" + std::to_string(leaf) + "_spine",
                           fabric_.uplink_bytes_per_s(static_cast<int>(leaf)),
                           c_.inter_node.spine_latency_s / 2);
    return hosts;
  }

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into,
                       double* latency) override {
    const int a = rank_of(src), b = rank_of(dst);
    if (a == b) return;  // a self-put is a local copy (sim/stream_ops.cpp): never asked
    if (c_.node_of(a) == c_.node_of(b)) {
      add(nvl_[a].up, into, latency);
      add(nvl_[b].down, into, latency);
      return;
    }
    add(nic_[fabric_.nic_slot(a)].up, into, latency);
    if (fabric_.crosses_spine(a, b)) {
      add(leaf_[fabric_.leaf_of(a)].up, into, latency);
      add(leaf_[fabric_.leaf_of(b)].down, into, latency);
    }
    add(nic_[fabric_.nic_slot(b)].down, into, latency);
  }

 private:
  Duplex duplex(const std::string& name, double bandwidth, double latency_s) {
    auto one_way = [&](const std::string& suffix) {
      sg4::Link* link = get_iface()
                            ->create_link(name + suffix, bandwidth)
                            ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                            ->set_latency(latency_s)
                            ->seal();
      return OneWay{link->get_impl(), latency_s};
    };
    return {one_way("_up"), one_way("_down")};
  }

  int rank_of(const NetPoint* point) const {
    const size_t id = point->id();
    if (id >= rank_of_id_.size() || rank_of_id_[id] < 0)
      throw std::logic_error("platform: no GPU for netpoint " + point->get_name());
    return rank_of_id_[id];
  }

  static void add(const OneWay& hop, Route* into, double* latency) {
    into->link_list_.push_back(hop.link);
    if (latency) *latency += hop.latency_s;
  }

  const ClusterSpec c_;  // a copy: the zone outlives the caller's spec
  const FabricLayout fabric_;
  std::vector<Duplex> nvl_;   // per rank
  std::vector<Duplex> nic_;   // per node × NIC
  std::vector<Duplex> leaf_;  // per leaf: its uplink to the spine and downlink from it
  std::vector<int> rank_of_id_;
};

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
  // Owned by SimGrid's engine once made (it deletes the root zone).
  auto* zone = new ClusterZone(cluster);
  std::vector<sg4::Host*> hosts = zone->populate();
  zone->get_iface()->seal();
  return hosts;
}

}  // namespace symmesh::sim
