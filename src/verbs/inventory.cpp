#include "verbs/inventory.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "verbs/device.h"

namespace qpo::verbs {

namespace {

const char* port_state_name(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    default: return "NOP";
  }
}

int mtu_bytes(ibv_mtu m) { return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0; }

// IBTA PortInfo: active_width 1/2/4/8/16 = 1X/4X/8X/12X/2X; active_speed per lane.
std::string speed_text(uint8_t width, uint32_t speed) {
  const char* w = width == 1 ? "1X" : width == 2 ? "4X" : width == 4 ? "8X" : width == 8 ? "12X" : width == 16 ? "2X" : "?X";
  const char* s = speed == 1 ? "2.5 Gb/s" : speed == 2 ? "5 Gb/s" : speed == 4 || speed == 8 ? "10 Gb/s"
                : speed == 16 ? "14 Gb/s" : speed == 32 ? "25 Gb/s" : speed == 64 ? "50 Gb/s" : speed == 128 ? "100 Gb/s"
                : "? Gb/s";
  return std::string(w) + " " + s;
}

std::string ip_of(const ibv_gid& g) {
  static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char buf[INET6_ADDRSTRLEN] = {0};
  if (std::memcmp(g.raw, v4_mapped, sizeof v4_mapped) == 0) return inet_ntop(AF_INET, g.raw + 12, buf, sizeof buf) ? buf : "";
  return inet_ntop(AF_INET6, g.raw, buf, sizeof buf) ? buf : "";
}

PortInventory query_port(ibv_context* ctx, int num) {
  PortInventory p;
  p.num = num;
  ibv_port_attr pa{};
  if (ibv_query_port(ctx, static_cast<uint8_t>(num), &pa) != 0) {
    p.state = std::string("(ibv_query_port: ") + std::strerror(errno) + ")";
    return p;
  }
  p.state = port_state_name(pa.state);
  p.active_mtu = mtu_bytes(pa.active_mtu);
  p.max_mtu = mtu_bytes(pa.max_mtu);
  bool ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
  p.link_layer = ethernet ? "Ethernet" : "InfiniBand";
  p.speed = speed_text(pa.active_width, pa.active_speed);
  p.gid_table_len = pa.gid_tbl_len;
  for (int i = 0; i < pa.gid_tbl_len; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(ctx, static_cast<uint32_t>(num), static_cast<uint32_t>(i), &e, 0) != 0) continue;
    GidEntry g;
    g.index = i;
    g.gid = gid_text(e.gid);
    g.type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB";
    char ifname[IF_NAMESIZE] = {0};
    if (e.ndev_ifindex && if_indextoname(e.ndev_ifindex, ifname)) g.netdev = ifname;
    if (ethernet) g.ip = ip_of(e.gid);
    p.gids.push_back(std::move(g));
  }
  return p;
}

DeviceCaps caps_of(ibv_context* ctx, const ibv_device_attr& a) {
  DeviceCaps c;
  c.max_mr_size = a.max_mr_size;
  c.max_qp = a.max_qp;
  c.max_qp_wr = a.max_qp_wr;
  c.max_sge = a.max_sge;
  c.max_cq = a.max_cq;
  c.max_cqe = a.max_cqe;
  c.max_mr = a.max_mr;
  c.max_pd = a.max_pd;
  c.max_qp_rd_atom = a.max_qp_rd_atom;
  c.max_qp_init_rd_atom = a.max_qp_init_rd_atom;
  c.max_srq = a.max_srq;
  c.max_srq_wr = a.max_srq_wr;
  c.max_mw = a.max_mw;
  c.atomic_cap = a.atomic_cap == IBV_ATOMIC_HCA ? "HCA" : a.atomic_cap == IBV_ATOMIC_GLOB ? "GLOB" : "NONE";
  c.xrc = a.device_cap_flags & IBV_DEVICE_XRC;
  c.mw_type2 = a.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
  ibv_device_attr_ex ex{};
  if (ibv_query_device_ex(ctx, nullptr, &ex) == 0) {
    c.odp = ex.odp_caps.general_caps & IBV_ODP_SUPPORT;
    c.completion_timestamps = ex.completion_timestamp_mask != 0;
  }
  return c;
}

}  // namespace

std::vector<DeviceInventory> inventory() {
  std::vector<DeviceInventory> out;
  int count = 0;
  std::unique_ptr<ibv_device*, decltype(&ibv_free_device_list)> list(ibv_get_device_list(&count), ibv_free_device_list);
  for (int i = 0; list && i < count; ++i) {
    ibv_device* dev = list.get()[i];
    DeviceInventory d;
    d.name = ibv_get_device_name(dev);
    d.guid = guid_text(dev);
    d.node_type = ibv_node_type_str(dev->node_type);
    std::unique_ptr<ibv_context, decltype(&ibv_close_device)> ctx(ibv_open_device(dev), ibv_close_device);
    if (!ctx) {
      d.error = std::string("ibv_open_device: ") + std::strerror(errno);
    } else if (ibv_device_attr a{}; ibv_query_device(ctx.get(), &a) != 0) {
      d.error = std::string("ibv_query_device: ") + std::strerror(errno);
    } else {
      d.firmware = a.fw_ver;
      d.caps = caps_of(ctx.get(), a);
      for (int port = 1; port <= a.phys_port_cnt; ++port) d.ports.push_back(query_port(ctx.get(), port));
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace qpo::verbs
