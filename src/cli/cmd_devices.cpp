// qpo devices: what ibv_devinfo -v and show_gids tell - devices, ports, GID tables and the
// caps qpo checks scenarios against - as text or JSON. In the Soft-RoCE lab when this host
// has no RDMA device, like qpo run.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/lab.h"
#include "util/json_writer.h"
#include "verbs/inventory.h"

namespace qpo::cli {

namespace {

struct DevicesOptions {
  bool lab = false, no_lab = false;
  OutputOptions out;
};

std::string yes(bool b) { return b ? "yes" : "no"; }

void render_text(const std::vector<verbs::DeviceInventory>& devices) {
  if (devices.empty()) std::cout << "no RDMA devices\n";
  for (const auto& d : devices) {
    std::cout << d.name << "  guid " << d.guid << "  " << d.node_type;
    if (!d.firmware.empty()) std::cout << "  fw " << d.firmware;
    std::cout << "\n";
    if (!d.error.empty()) {
      std::cout << "  (" << d.error << ")\n";
      continue;
    }
    const auto& c = d.caps;
    std::cout << "  caps: max_qp " << c.max_qp << ", max_qp_wr " << c.max_qp_wr << ", max_sge " << c.max_sge
              << ", max_cq " << c.max_cq << ", max_cqe " << c.max_cqe << ", max_mr " << c.max_mr << ", max_pd "
              << c.max_pd << "\n"
              << "        max_qp_rd_atom " << c.max_qp_rd_atom << ", max_qp_init_rd_atom " << c.max_qp_init_rd_atom
              << ", max_srq " << c.max_srq << " (" << c.max_srq_wr << " WRs), max_mw " << c.max_mw << "\n"
              << "        atomics " << c.atomic_cap << ", xrc " << yes(c.xrc) << ", mw type 2 " << yes(c.mw_type2)
              << ", odp " << yes(c.odp) << ", completion timestamps " << yes(c.completion_timestamps) << "\n";
    for (const auto& p : d.ports) {
      std::cout << "  port " << p.num << ": " << p.state << ", " << p.link_layer << ", mtu " << p.active_mtu
                << " (max " << p.max_mtu << "), " << p.speed << ", " << p.gids.size() << " of " << p.gid_table_len
                << " GIDs set\n";
      for (const auto& g : p.gids) {
        std::cout << "    gid " << g.index << "  " << g.gid << "  " << g.type;
        if (!g.netdev.empty()) std::cout << "  " << g.netdev;
        if (!g.ip.empty()) std::cout << "  " << g.ip;
        std::cout << "\n";
      }
    }
  }
}

void render_json(const std::vector<verbs::DeviceInventory>& devices) {
  util::JsonWriter w;
  w.begin_object().key("devices").begin_array();
  for (const auto& d : devices) {
    w.begin_object().field("name", d.name).field("guid", d.guid).field("node_type", d.node_type);
    if (!d.error.empty()) {
      w.field("error", d.error).end_object();
      continue;
    }
    const auto& c = d.caps;
    w.field("firmware", d.firmware);
    w.key("caps").begin_object()
        .field("max_mr_size", c.max_mr_size).field("max_qp", c.max_qp).field("max_qp_wr", c.max_qp_wr)
        .field("max_sge", c.max_sge).field("max_cq", c.max_cq).field("max_cqe", c.max_cqe).field("max_mr", c.max_mr)
        .field("max_pd", c.max_pd).field("max_qp_rd_atom", c.max_qp_rd_atom)
        .field("max_qp_init_rd_atom", c.max_qp_init_rd_atom).field("max_srq", c.max_srq)
        .field("max_srq_wr", c.max_srq_wr).field("max_mw", c.max_mw).field("atomic_cap", c.atomic_cap)
        .field("xrc", c.xrc).field("mw_type2", c.mw_type2).field("odp", c.odp)
        .field("completion_timestamps", c.completion_timestamps)
        .end_object();
    w.key("ports").begin_array();
    for (const auto& p : d.ports) {
      w.begin_object().field("port", p.num).field("state", p.state).field("link_layer", p.link_layer)
          .field("active_mtu", p.active_mtu).field("max_mtu", p.max_mtu).field("speed", p.speed)
          .field("gid_table_len", p.gid_table_len);
      w.key("gids").begin_array();
      for (const auto& g : p.gids)
        w.begin_object().field("index", g.index).field("gid", g.gid).field("type", g.type).field("netdev", g.netdev)
            .field("ip", g.ip).end_object();
      w.end_array().end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  std::cout << w.str() << "\n";
}

}  // namespace

Action add_devices(CLI::App& app) {
  auto opts = std::make_shared<DevicesOptions>();
  auto* cmd = app.add_subcommand("devices", "List RDMA devices, ports, GID tables and device caps");
  cmd->footer(
      "What ibv_devinfo -v and show_gids tell, as text or JSON: each device (name, GUID, firmware),\n"
      "the caps qpo checks scenarios against (max QPs/CQEs/SGEs/rd_atomic, atomics, XRC, SRQ, memory\n"
      "windows, ODP, completion timestamps), and per port its state, link layer, MTU, speed and every\n"
      "GID that is set (index, RoCE v1/v2, netdev, IP). Pick a scenario's gid_index from this table.\n\n"
      "Without an RDMA device on this host, it lists the Soft-RoCE lab guest's rxe0 (use --no-lab to refuse).\n\n"
      "Example:\n  qpo devices\n  qpo devices --format json | jq '.devices[].ports[].gids'");
  cmd->add_flag("--lab", opts->lab, "List the Soft-RoCE lab guest's devices even if this host has RDMA devices");
  cmd->add_flag("--no-lab", opts->no_lab, "Never use the lab: list this host's devices (maybe none)");
  add_output_options(*cmd, opts->out);
  return [opts]() {
    if (use_lab(opts->lab, opts->no_lab, "listing devices")) return run_in_lab({"devices", "--no-lab", "--format", opts->out.format});
    auto devices = verbs::inventory();
    if (opts->out.format == "json") render_json(devices);
    else render_text(devices);
    return static_cast<int>(kOk);
  };
}

}  // namespace qpo::cli
