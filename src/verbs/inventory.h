#pragma once
// What `ibv_devinfo -v` and `show_gids` tell, as data: every device, its ports and GID
// tables, and the device caps qpo checks scenarios against. Read-only: each device is opened,
// queried and closed again.
#include <cstdint>
#include <string>
#include <vector>

namespace qpo::verbs {

struct GidEntry {
  int index = 0;
  std::string gid;      // fe80::...
  std::string type;     // "RoCE v2", "RoCE v1", "IB"
  std::string netdev;   // the GID's netdev (RoCE), "" when none
  std::string ip;       // the IPv4 of an IPv4-mapped GID, else the GID as an IPv6 address ("" for IB)
};

struct PortInventory {
  int num = 0;
  std::string state;       // ACTIVE, DOWN, ...
  int active_mtu = 0, max_mtu = 0;  // bytes
  std::string link_layer;  // Ethernet, InfiniBand
  std::string speed;       // "4X 25 Gb/s" (width and per-lane rate, as the port reports them)
  int gid_table_len = 0;
  std::vector<GidEntry> gids;  // entries that are set (not all-zero)
};

struct DeviceCaps {
  uint64_t max_mr_size = 0;
  int max_qp = 0, max_qp_wr = 0, max_sge = 0, max_cq = 0, max_cqe = 0, max_mr = 0, max_pd = 0;
  int max_qp_rd_atom = 0, max_qp_init_rd_atom = 0, max_srq = 0, max_srq_wr = 0, max_mw = 0;
  std::string atomic_cap;  // NONE, HCA, GLOB
  bool xrc = false, mw_type2 = false, odp = false, completion_timestamps = false;
};

struct DeviceInventory {
  std::string name, guid, node_type, firmware;
  DeviceCaps caps;
  std::vector<PortInventory> ports;
  std::string error;  // set when the device could not be opened or queried
};

std::vector<DeviceInventory> inventory();

}  // namespace qpo::verbs
