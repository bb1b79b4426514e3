#include "util/roce.h"
#include "wire/listing.h"

#include <cstdio>
#include <cstring>
#include <tuple>

#include <arpa/inet.h>

#include <fstream>
#include <sstream>

#include "util/json_reader.h"
#include "util/json_writer.h"
#include "util/output_file.h"
#include "wire/bth_opcodes.h"

namespace qpo::wire {

namespace {

// (source, destination, destination QP, responses): a QP receives requests in its peer's PSN
// space and responses (to its own READs) in its own, so the two are flows apart.
using Key = std::tuple<std::array<uint8_t, 16>, std::array<uint8_t, 16>, uint32_t, bool>;

const KnownQp* find_qp(const std::vector<KnownQp>& known, const std::array<uint8_t, 16>& gid, uint32_t qpn) {
  for (const auto& k : known)
    if (k.qpn == qpn && k.gid == gid) return &k;
  return nullptr;
}

std::string qpn_text(uint32_t qpn) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", qpn);
  return buf;
}

std::string flow_name(const Flow& f, const std::vector<KnownQp>& known) {
  const KnownQp* to = find_qp(known, f.dst, f.dest_qpn);
  std::string dst = address_text(f.dst), src = address_text(f.src);
  if (to) return src + " -> " + to->name + " (QP " + qpn_text(f.dest_qpn) + " at " + dst + ")";
  return src + " -> " + dst + " QP " + qpn_text(f.dest_qpn);
}

// A flow's packets that carry data in PSN order: requests, and read responses (an ACK repeats
// the PSN it acknowledges without being resent).
bool sequenced(const RocePacket& p) {
  const OpcodeInfo* o = opcode_info(p.opcode);
  if (!o || o->role == Role::Cnp) return false;
  return o->role == Role::Request || !(o->ext & kAeth) || (p.opcode >= 0x0D && p.opcode <= 0x10);
}

}  // namespace

std::vector<Flow> group_flows(const std::vector<RocePacket>& packets, const std::vector<KnownQp>& known) {
  std::vector<Flow> flows;
  std::map<Key, size_t> index;
  struct Seen {
    bool any = false;
    uint32_t next = 0;                       // the PSN after the highest sent so far
    std::map<uint32_t, uint32_t> times;      // PSN -> transmissions so far
  };
  std::vector<Seen> seen;
  double t0 = packets.empty() ? 0 : packets.front().time;
  for (const auto& p : packets) {
    const OpcodeInfo* info = opcode_info(p.opcode);
    Key k{p.src, p.dst, p.dest_qpn, info && info->role == Role::Response};
    auto [it, fresh] = index.try_emplace(k, flows.size());
    if (fresh) {
      Flow f;
      f.src = p.src;
      f.dst = p.dst;
      f.dest_qpn = p.dest_qpn;
      f.name = flow_name(f, known);
      flows.push_back(std::move(f));
      seen.emplace_back();
    }
    Flow& f = flows[it->second];
    Seen& s = seen[it->second];
    ListedPacket l{&p, (p.time - t0) * 1e6, false, 1};
    if (sequenced(p)) {
      // Seen before on this flow: a retransmission. A PSN below the highest seen that is new
      // came late (reordered), not again.
      uint32_t n = ++s.times[p.psn];
      if (n > 1) {
        l.retransmission = true;
        l.transmission = n;
        ++f.retransmissions;
      }
      if (!s.any || psn_diff(p.psn, s.next) >= 0) {
        s.next = (p.psn + 1) & 0xffffff;
        s.any = true;
      }
    }
    f.packets.push_back(l);
  }
  return flows;
}

std::string listing_text(const std::vector<Flow>& flows) {
  std::string out;
  char line[256];
  for (const auto& f : flows) {
    out += f.name + ": " + std::to_string(f.packets.size()) + " packets, " + std::to_string(f.retransmissions) +
           " retransmitted\n";
    for (const auto& l : f.packets) {
      const RocePacket& p = *l.packet;
      const OpcodeInfo* o = opcode_info(p.opcode);
      std::string op = o ? std::string(o->name) : "opcode " + qpn_text(p.opcode);
      std::string aeth = p.syndrome ? "  " + syndrome_text(*p.syndrome) + " msn " + std::to_string(p.msn) : "";
      std::string mark = l.retransmission ? "  RETX " + std::to_string(l.transmission - 1) : "";
      std::string ecn = p.ecn == 3 ? "  ECN-CE" : "";
      std::snprintf(line, sizeof line, "  %12.3f us  %-28s psn %s  %5u B%s%s%s\n", l.t_us, op.c_str(), util::psn_hex(p.psn).c_str(),
                    p.payload, aeth.c_str(), mark.c_str(), ecn.c_str());
      out += line;
    }
  }
  return out;
}

std::string listing_json(const std::vector<Flow>& flows, const std::string& file) {
  util::JsonWriter w;
  w.begin_object().field("file", file).key("flows").begin_array();
  for (const auto& f : flows) {
    w.begin_object()
        .field("name", f.name)
        .field("src", address_text(f.src))
        .field("dst", address_text(f.dst))
        .field("dest_qpn", f.dest_qpn)
        .field("retransmissions", f.retransmissions)
        .key("packets")
        .begin_array();
    for (const auto& l : f.packets) {
      const RocePacket& p = *l.packet;
      const OpcodeInfo* o = opcode_info(p.opcode);
      w.begin_object().field("t_us", l.t_us).field("opcode", static_cast<unsigned>(p.opcode));
      w.field("name", o ? o->name : std::string_view("unknown")).field("psn", p.psn).field("payload", p.payload);
      if (p.syndrome)
        w.field("syndrome", static_cast<unsigned>(*p.syndrome)).field("aeth", syndrome_text(*p.syndrome)).field("msn", p.msn);
      if (l.retransmission) w.field("transmission", l.transmission);
      if (p.ecn == 3) w.field("ecn_ce", true);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  return w.str();
}

}  // namespace qpo::wire

namespace qpo::wire {

namespace {

std::string sidecar(const std::string& pcap_path) { return pcap_path + ".qps.json"; }

bool parse_address(const std::string& text, std::array<uint8_t, 16>* out) {
  in6_addr a6{};
  in_addr a4{};
  if (inet_pton(AF_INET6, text.c_str(), &a6) == 1) {
    std::memcpy(out->data(), &a6, 16);
    return true;
  }
  if (inet_pton(AF_INET, text.c_str(), &a4) != 1) return false;
  *out = {};
  (*out)[10] = (*out)[11] = 0xff;
  std::memcpy(&(*out)[12], &a4, 4);
  return true;
}

}  // namespace

std::vector<KnownQp> read_known_qps(const std::string& pcap_path, std::string* error) {
  std::vector<KnownQp> out;
  std::ifstream in(sidecar(pcap_path));
  if (!in) return out;
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  auto v = util::json::parse(text.str(), &why);
  const util::json::Value* qps = v ? v->find("qps") : nullptr;
  if (!qps || !qps->is(util::json::Kind::Array)) {
    *error = sidecar(pcap_path) + ": " + (v ? "no \"qps\" list" : why);
    return {};
  }
  for (const auto& q : qps->items) {
    const auto *name = q.find("name"), *qpn = q.find("qpn"), *gid = q.find("gid");
    KnownQp k;
    if (!name || !qpn || !gid || !qpn->is(util::json::Kind::Number) || !parse_address(gid->text, &k.gid)) {
      *error = sidecar(pcap_path) + " line " + std::to_string(q.line) + ": a QP needs name, qpn and gid";
      return {};
    }
    k.name = name->text;
    k.qpn = static_cast<uint32_t>(qpn->number);
    out.push_back(std::move(k));
  }
  return out;
}

bool write_known_qps(const std::string& pcap_path, const std::vector<KnownQp>& qps, std::string* error) {
  util::JsonWriter w;
  w.begin_object().key("qps").begin_array();
  for (const auto& q : qps) w.begin_object().field("name", q.name).field("qpn", q.qpn).field("gid", address_text(q.gid)).end_object();
  w.end_array().end_object();
  return util::write_output_file(sidecar(pcap_path), w.str() + "\n", error);
}

}  // namespace qpo::wire
