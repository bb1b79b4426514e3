// `mcast_groups:`: multicast groups of UD QPs. The GID is parsed here (Q103 not an address,
// Q140 not a multicast one), the MLID bounded (Q141), `join:` read (Q142 neither verbs nor
// rdma_cm, Q143 an rdma_cm group's qkey not the CM's); members are checked by check/multicast.
#include <arpa/inet.h>

#include <cstring>

#include "scenario/keys.h"
#include "scenario/loader_internal.h"
#include "util/strings.h"

namespace qpo::scenario::detail {

namespace {

constexpr uint32_t kRdmaUdpQkey = 0x01234567;  // librdmacm's RDMA_UDP_QKEY (rdma_cma.h), without its header

// 239.1.1.1 -> ::ffff:239.1.1.1; ff0e::1234 as it is. False when `text` is no address.
bool parse_group_gid(const std::string& text, McastGroup& g) {
  unsigned char v4[4];
  if (inet_pton(AF_INET, text.c_str(), v4) == 1) {
    std::memset(g.gid, 0, sizeof g.gid);
    g.gid[10] = g.gid[11] = 0xff;
    std::memcpy(g.gid + 12, v4, 4);
    g.ipv4 = true;
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), g.gid) != 1) return false;
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  g.ipv4 = std::memcmp(g.gid, mapped, sizeof mapped) == 0;
  return true;
}

// IPv6 ff00::/8, or IPv4 224.0.0.0/4 (inside an IPv4-mapped GID).
bool is_multicast(const McastGroup& g) { return g.ipv4 ? (g.gid[12] & 0xf0) == 0xe0 : g.gid[0] == 0xff; }

std::vector<Ref> member_refs(YamlReader& r, const yaml::Node& n, const std::string& path) {
  std::vector<Ref> out;
  if (!n.IsSequence()) {
    r.wrong_type(n, path, "a list of UD QPs ([qa, qb] or a counted group)");
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i)
    if (Ref x = r.ref(n[i], path + "[" + std::to_string(i) + "]")) out.push_back(x);
  return out;
}

}  // namespace

void load_mcast_groups(YamlReader& r, const yaml::Node& n, Scenario& s) {
  if (!n.IsMap()) {
    if (!n.IsNull()) r.wrong_type(n, "mcast_groups", "a map of name: {gid:, qkey:, members: [...]}");
    return;
  }
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) {
      r.wrong_type(kv.first, "mcast_groups", "a name");
      continue;
    }
    std::string name = kv.first.Scalar();
    std::string path = join_path("mcast_groups", name);
    SourceLoc loc = r.loc(kv.first);
    if (!check_name(r, name, loc, path)) continue;
    if (const auto* first = s.mcast_group(name)) {
      auto& d = r.sink().error("Q105", loc, path, "duplicate name '" + name + "'");
      d.related.push_back({first->loc, "first defined here"});
      continue;
    }
    McastGroup g;
    g.name = name;
    g.loc = g.gid_loc = g.qkey_loc = g.mlid_loc = g.members_loc = loc;
    bool have_gid = false, have_members = false, have_qkey = false;
    if (!kv.second.IsNull())
      for (auto& [key, value] : r.entries(kv.second, path, &keys::mcast_group(), "a multicast group")) {
        std::string p = join_path(path, key);
        if (key == "gid") {
          g.gid_loc = r.loc(value);
          auto text = r.string(value, p);
          if (!text) continue;
          g.gid_text = *text;
          if (!parse_group_gid(*text, g)) {
            auto& d = r.sink().error("Q103", g.gid_loc, p, "'" + *text + "' is not a GID or an IP address");
            d.hint = "write an IPv6 multicast address (ff0e::1234) or an IPv4 one (239.1.1.1)";
            continue;
          }
          have_gid = true;
          if (!is_multicast(g)) {
            auto& d = r.sink().error("Q140", g.gid_loc, p, "'" + *text + "' is not a multicast address");
            d.rule = "a multicast GID starts with 0xff (IPv6 ff00::/8); RoCEv2 maps IPv4 224.0.0.0/4 to ::ffff:a.b.c.d";
            d.hint = "use e.g. ff0e::1234 or 239.1.1.1";
          }
        } else if (key == "qkey") {
          g.qkey_loc = r.loc(value);
          have_qkey = true;
          if (auto x = r.uint(value, p, 0xffffffffull)) g.qkey = static_cast<uint32_t>(*x);
        } else if (key == "mlid") {
          g.mlid_loc = r.loc(value);
          if (auto x = r.uint(value, p, 0xffff)) {
            if (*x < 0xc000 || *x == 0xffff) {
              auto& d = r.sink().error("Q141", g.mlid_loc, p, "mlid " + util::hex(*x) + " is not a multicast LID");
              d.rule = "multicast LIDs are 0xc000..0xfffe (0xffff is the permissive LID)";
              d.hint = "leave it out (0xc000; RoCE ignores it) or use the LID the subnet manager assigned the group";
            } else {
              g.mlid = static_cast<uint32_t>(*x);
            }
          }
        } else if (key == "join") {
          g.join_loc = r.loc(value);
          auto how = r.string(value, p);
          if (how && *how == "rdma_cm") {
            g.cm_join = true;
          } else if (how && *how != "verbs") {
            auto& d = r.sink().error("Q142", g.join_loc, p, "'" + *how + "' is not a way to join a multicast group");
            d.rule = "verbs (ibv_attach_mcast, and the IP join on RoCE) or rdma_cm (rdma_join_multicast)";
            d.hint = "write 'join: verbs' or 'join: rdma_cm'";
          }
        } else if (key == "members") {
          g.members_loc = r.loc(value);
          have_members = true;
          g.members = member_refs(r, value, p);
        }
      }
    if (!have_gid && g.gid_text.empty()) {
      auto& d = r.sink().error("Q104", loc, path, "multicast group '" + name + "' needs 'gid'");
      d.hint = "add 'gid: 239.1.1.1' (or an IPv6 multicast address such as ff0e::1234)";
    }
    if (g.cm_join) {  // the CM's groups have the CM's qkey (cma.c: RDMA_UDP_QKEY)
      if (!have_qkey) {
        g.qkey = kRdmaUdpQkey;
      } else if (g.qkey != kRdmaUdpQkey) {
        auto& d = r.sink().error("Q143", g.qkey_loc, join_path(path, "qkey"),
                                 "multicast group '" + name + "' joins through rdma_cm, but its qkey is " + util::hex(g.qkey));
        d.rule = "rdma_join_multicast's groups use the CM's qkey RDMA_UDP_QKEY (0x01234567): the MULTICAST_JOIN event carries it";
        d.related.push_back({g.join_loc, "join: rdma_cm"});
        d.hint = "leave 'qkey' out (it is 0x01234567), and give the members qkey 0x01234567";
        g.qkey = kRdmaUdpQkey;  // what the run would use: the members are checked against it
      }
    }
    if (!have_members) {
      auto& d = r.sink().error("Q104", loc, path, "multicast group '" + name + "' needs 'members'");
      d.hint = "add 'members: [<UD QP>, ...]': the QPs attached to the group (ibv_attach_mcast)";
    }
    s.mcast_groups.push_back(std::move(g));
  }
}

void finish_mcast_groups(YamlReader& r, Scenario& s) {
  for (auto& g : s.mcast_groups)
    g.members = expand_refs(r, s, g.members, Group::Kind::Qp, "mcast_groups." + g.name + ".members");
}

}  // namespace qpo::scenario::detail
