// Loading of a QP's `cm:` (an rdma_cm connection): role, peer, port, address, private data,
// a passive side's reject, an active side's expected CM event. What the CM sets instead of
// `states:`, and how the two ends agree, is checked by check/cm.cpp.
#include <arpa/inet.h>

#include "scenario/loader_internal.h"
#include "util/cm_event_names.h"
#include "util/strings.h"

namespace qpo::scenario::detail {

namespace {

const std::vector<std::string>& cm_keys() {
  static const std::vector<std::string> k{"role", "peer", "port", "address", "private_data", "reject", "expect", "exchange_only"};
  return k;
}
const std::vector<std::string>& cm_expect_keys() {
  static const std::vector<std::string> k{"cm_event", "reason", "private_data", "within"};
  return k;
}

bool ip_literal(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

void load_expect(YamlReader& r, const yaml::Node& n, const std::string& path, CmSpec& cm) {
  cm.expect_loc = r.loc(n);
  for (auto& [key, value] : r.entries(n, path, &cm_expect_keys(), "an expected CM outcome")) {
    std::string p = join_path(path, key);
    if (key == "cm_event") {
      auto e = r.string(value, p);
      if (!e) continue;
      std::string name = *e;
      if (util::to_upper(name).rfind("RDMA_CM_EVENT_", 0) == 0) name = name.substr(14);
      std::string upper = util::to_upper(name);
      const std::vector<std::string> known = cm_expectable_events();
      bool ok = false;
      for (const auto& k : known)
        if (upper == util::to_upper(k)) {
          cm.expect_event = k;
          ok = true;
        }
      if (!ok) {
        auto& d = r.sink().error("Q125", r.loc(value), p, "'" + *e + "' is not a CM event a connection can end with");
        d.rule = "rdma_cm: a connection attempt ends with ESTABLISHED or one of these";
        d.hint = "one of: " + util::join(known, ", ");
      }
    } else if (key == "reason") {
      cm.expect_reason = r.string(value, p);
    } else if (key == "private_data") {
      cm.expect_private_data = r.string(value, p);
    } else if (key == "within") {
      if (auto us = duration_us(r, value, p)) cm.within_ms = (*us + 999) / 1000;
    }
  }
  if (cm.expect_event.empty() && n.IsMap() && !n["cm_event"]) {
    auto& d = r.sink().error("Q104", cm.expect_loc, path, "an expected CM outcome needs 'cm_event'");
    d.hint = "e.g. {cm_event: REJECTED, reason: consumer defined, private_data: go away}";
  }
  if ((cm.expect_reason || cm.expect_private_data) && !cm.expect_event.empty() && cm.expect_event != "REJECTED") {
    auto& d = r.sink().error("Q125", cm.expect_loc, path, "only a REJECTED event carries a reason and private data");
    d.hint = "drop reason:/private_data:, or expect cm_event: REJECTED";
  }
}

}  // namespace

const std::vector<std::string>& cm_expectable_events() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> names;
    for (const auto& e : util::cm_expectable_events()) names.push_back(e.name);
    names.push_back("timeout");  // no event within the wait
    return names;
  }();
  return k;
}

void load_cm(YamlReader& r, const yaml::Node& n, const std::string& path, Qp& q) {
  auto& cm = q.cm;
  cm.given = true;
  cm.loc = r.loc(n);
  if (!r.is_map(n, path, "a map {role: active|passive, peer: QP, port: N, ...}")) return;
  bool role_given = false;
  for (auto& [key, value] : r.entries(n, path, &cm_keys(), "an rdma_cm connection")) {
    std::string p = join_path(path, key);
    if (key == "role") {
      cm.role_loc = r.loc(value);
      if (auto s = r.string(value, p)) {
        role_given = true;
        if (*s == "active") cm.active = true;
        else if (*s == "passive") cm.active = false;
        else {
          auto& d = r.sink().error("Q125", cm.role_loc, p, "unknown role '" + *s + "'");
          d.hint = "active (resolves the peer's address and connects) or passive (listens and accepts)";
        }
      }
    } else if (key == "peer") {
      cm.peer = r.ref(value, p);
    } else if (key == "port") {
      cm.port_loc = r.loc(value);
      if (auto v = r.uint(value, p, 65535)) {
        if (*v == 0) r.sink().error("Q401", cm.port_loc, p, "port 0 is not a port rdma_cm can listen on or connect to");
        else cm.port = static_cast<uint32_t>(*v);
      }
    } else if (key == "address") {
      cm.address_loc = r.loc(value);
      if (auto s = r.string(value, p)) {
        if (!ip_literal(*s)) {
          auto& d = r.sink().error("Q125", cm.address_loc, p, "'" + *s + "' is not an IPv4 or IPv6 address");
          d.hint = "write the address rdma_cm resolves, e.g. 10.0.1.2 or fd00:1::2";
        } else {
          cm.address = *s;
        }
      }
    } else if (key == "private_data") {
      if (auto s = r.string(value, p)) cm.private_data = *s;
    } else if (key == "reject") {
      cm.reject_loc = r.loc(value);
      cm.reject = r.string(value, p);
    } else if (key == "expect") {
      load_expect(r, value, p, cm);
    } else if (key == "exchange_only") {
      cm.exchange_only_loc = r.loc(value);
      if (auto b = r.boolean(value, p)) cm.exchange_only = *b;
    }
  }
  if (!role_given) {
    auto& d = r.sink().error("Q104", cm.loc, path, "an rdma_cm connection needs 'role'");
    d.hint = "role: active (connects) or role: passive (listens)";
  }
}

}  // namespace qpo::scenario::detail
