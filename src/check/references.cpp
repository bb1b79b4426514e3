// Every reference names an existing object of the right kind, on a consistent device/host.
#include <functional>
#include <type_traits>

#include "check/validate.h"
#include "util/async_event_names.h"
#include "util/strings.h"

namespace qpo::check {

namespace {

using scenario::Ref;
using scenario::Scenario;

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& v) {
  std::vector<std::string> out;
  for (const auto& o : v) out.push_back(o.name);
  return out;
}

// Which section holds `name`, for "qa names a cq, not a pd" messages.
std::string kind_of(const Scenario& s, const std::string& name) {
  if (s.host(name)) return "a host";
  if (s.device(name)) return "a device";
  if (s.pd(name)) return "a pd";
  if (s.mr(name)) return "an mr";
  if (s.cq(name)) return "a cq";
  if (s.srq(name)) return "an srq";
  if (s.xrcd(name)) return "an xrcd";
  if (s.qp(name)) return "a qp";
  if (s.mw(name)) return "a memory window";
  return "";
}

class RefChecker {
 public:
  RefChecker(const Scenario& s, diag::DiagSink& sink) : s_(s), sink_(sink) {}

  // True when `ref` names an object in `section` (or is absent and optional).
  // An indexed lookup per section, so resolving 10,000s of references stays linear.
  bool exists(const std::vector<scenario::Host>&, const std::string& n) { return s_.host(n); }
  bool exists(const std::vector<scenario::Device>&, const std::string& n) { return s_.device(n); }
  bool exists(const std::vector<scenario::Pd>&, const std::string& n) { return s_.pd(n); }
  bool exists(const std::vector<scenario::Mr>&, const std::string& n) { return s_.mr(n); }
  bool exists(const std::vector<scenario::Cq>&, const std::string& n) { return s_.cq(n); }
  bool exists(const std::vector<scenario::Srq>&, const std::string& n) { return s_.srq(n); }
  bool exists(const std::vector<scenario::Xrcd>&, const std::string& n) { return s_.xrcd(n); }
  bool exists(const std::vector<scenario::Qp>&, const std::string& n) { return s_.qp(n); }
  bool exists(const std::vector<scenario::Workload>&, const std::string& n) { return s_.workload(n); }
  bool exists(const std::vector<scenario::Mw>&, const std::string& n) { return s_.mw(n); }

  // Where the loader expands groups and slices (`expanded`: a workload's qp:, a timeline
  // step's qps and workloads) it reported the names with '[' it could not expand; anywhere
  // else a '[' is never expanded, and is reported here (`send_cq: "zz["` was passed over).
  template <typename T>
  bool resolve(const Ref& ref, const std::vector<T>& section, const char* section_name, const std::string& path,
               bool expanded = false) {
    if (!ref) return true;
    if (exists(section, ref.name)) return true;
    bool bracket = ref.name.find('[') != std::string::npos;
    if (bracket ? expanded : reported_by_loader(section, ref.name)) return false;
    std::string kind = kind_of(s_, ref.name);
    std::string msg = "'" + ref.name + "' is not defined in " + section_name;
    if (!kind.empty()) msg += " (it is " + kind + ")";
    auto& d = sink_.error("Q201", ref.loc, path, msg);
    d.rule = "references must name an object of the right kind";
    if (bracket) {
      d.hint = "object names have no '['; a slice NAME[FROM:TO] of a counted group is taken only by a workload's qp: "
               "and timeline steps";
      return false;
    }
    // Suggestions cost a comparison per name: only for sections of human size, and only the
    // first dangling references (a generated file with 10^5 of them must still answer fast).
    std::string guess = section.size() <= 2000 && ++suggestions_ <= 50 ? util::did_you_mean(ref.name, names_of(section)) : "";
    if (!guess.empty()) d.hint = "did you mean '" + guess + "'?";
    else if (section.empty()) d.hint = std::string("add a '") + section_name + ":' section";
    else if (section.size() <= 20) d.hint = std::string("defined in ") + section_name + ": " + util::join(names_of(section), ", ");
    else d.hint = std::string("see the ") + std::to_string(section.size()) + " names under " + section_name + ":";
    return false;
  }

  // Where the loader does not expand groups (an event's `on:`, a window's `mr:`/`bind_qp:`),
  // a group or a slice is not "reported by the loader": say that one object belongs here.
  template <typename T>
  bool resolve_one(const Ref& ref, const std::vector<T>& section, const char* section_name, const std::string& path) {
    if (!ref || exists(section, ref.name)) return true;
    std::string base = ref.name.substr(0, ref.name.find('['));
    const scenario::Group* g = nullptr;
    if constexpr (std::is_same_v<T, scenario::Qp>) g = s_.group(base, scenario::Group::Kind::Qp);
    if constexpr (std::is_same_v<T, scenario::Mr>) g = s_.group(base, scenario::Group::Kind::Mr);
    if (!g && ref.name.find('[') == std::string::npos) return resolve(ref, section, section_name, path);
    auto& d = sink_.error("Q201", ref.loc, path,
                          "'" + ref.name + "' names " + (g ? "a counted group" : "a slice") + "; one object of " +
                              section_name + " belongs here");
    d.rule = "only workloads and timeline steps take groups and slices";
    if (g) d.hint = "name one member: " + g->member(g->first) + " .. " + g->member(g->first + g->count - 1);
    return false;
  }

  // A counted group's own name left where one object belongs: the loader expanded the names
  // it could and reported the others (Q212, Q213, Q502).
  template <typename T>
  bool reported_by_loader(const std::vector<T>&, const std::string& n) {
    if constexpr (std::is_same_v<T, scenario::Qp>) return s_.group(n, scenario::Group::Kind::Qp) != nullptr;
    if constexpr (std::is_same_v<T, scenario::Mr>) return s_.group(n, scenario::Group::Kind::Mr) != nullptr;
    if constexpr (std::is_same_v<T, scenario::Workload>) return s_.group(n, scenario::Group::Kind::Workload) != nullptr;
    return false;
  }

  void same_device(const Ref& ref, const std::string& ref_device, const std::string& want_device,
                   const std::string& path, const std::string& what) {
    if (ref_device.empty() || want_device.empty() || ref_device == want_device) return;
    auto& d = sink_.error("Q202", ref.loc, path,
                          what + " '" + ref.name + "' is on device '" + ref_device + "', but this object is on '" +
                              want_device + "'");
    d.rule = "verbs objects can only be combined within one device context";
  }

  std::string device_of_pd(const std::string& pd) {
    const auto* p = s_.pd(pd);
    return p ? p->device.name : "";
  }

  void run() {
    for (const auto& d : s_.devices) {
      std::string p = "devices." + d.name;
      if (!d.host) {
        auto& diag = sink_.error("Q104", d.loc, p, "device '" + d.name + "' needs 'host' when there are several hosts");
        diag.hint = "add 'host: <name from hosts:>'";
      }
      resolve(d.host, s_.hosts, "hosts", p + ".host");
    }
    for (const auto& x : s_.pds) resolve(x.device, s_.devices, "devices", "pds." + x.name + ".device");
    for (const auto& x : s_.cqs) resolve(x.device, s_.devices, "devices", "cqs." + x.name + ".device");
    for (const auto& x : s_.xrcds) resolve(x.device, s_.devices, "devices", "xrcds." + x.name + ".device");
    for (const auto& x : s_.mrs) resolve(x.pd, s_.pds, "pds (or devices)", "mrs." + x.name + ".pd");
    for (const auto& x : s_.srqs) resolve(x.pd, s_.pds, "pds (or devices)", "srqs." + x.name + ".pd");
    for (const auto& q : s_.qps) qp(q);
    for (const auto& w : s_.workloads) workload(w);
    for (const auto& f : s_.faults) resolve(f.device, s_.devices, "devices", "faults." + f.name + ".device");
    for (const auto& step : s_.timeline) {
      for (size_t i = 0; i < step.workloads.size(); ++i)
        resolve(step.workloads[i], s_.workloads, "workloads", step.path + ".workload", true);
      for (const auto& q : step.qps) resolve(q, s_.qps, "qps", step.path + ".qp", true);
      if (step.kind == scenario::TimelineStep::Kind::Event) event_object(step);
      if (step.kind == scenario::TimelineStep::Kind::SrqLimit) resolve(step.on, s_.srqs, "srqs", step.path + ".srq");
      if (step.kind == scenario::TimelineStep::Kind::Link) resolve(step.on, s_.devices, "devices", step.path + ".on");
      for (const auto& w : step.mws)
        resolve(w, s_.mws, "mws", step.path + (step.kind == scenario::TimelineStep::Kind::BindMw ? ".bind" : ".invalidate"));
    }
    for (const auto& w : s_.mws) {
      std::string p = "mws." + w.name;
      resolve(w.pd, s_.pds, "pds (or devices)", p + ".pd");
      resolve_one(w.mr, s_.mrs, "mrs", p + ".mr");
      resolve_one(w.bind_qp, s_.qps, "qps", p + ".bind_qp");
    }
  }

 private:
  void qp(const scenario::Qp& q) {
    std::string p = "qps." + q.name;
    resolve(q.pd, s_.pds, "pds (or devices)", p + ".pd");
    bool send_ok = resolve(q.send_cq, s_.cqs, "cqs", p + ".send_cq");
    bool recv_ok = resolve(q.recv_cq, s_.cqs, "cqs", p + ".recv_cq");
    resolve(q.srq, s_.srqs, "srqs", p + ".srq");
    resolve(q.xrcd, s_.xrcds, "xrcds", p + ".xrcd");
    if (!past_peer_count(q) && !s_.external(q.connect.name)) resolve(q.connect, s_.qps, "qps (or externals)", p + ".connect");
    std::string dev = device_of_pd(q.pd.name);
    if (send_ok && q.send_cq)
      if (const auto* c = s_.cq(q.send_cq.name)) same_device(q.send_cq, c->device.name, dev, p + ".send_cq", "cq");
    if (recv_ok && q.recv_cq)
      if (const auto* c = s_.cq(q.recv_cq.name)) same_device(q.recv_cq, c->device.name, dev, p + ".recv_cq", "cq");
    if (q.srq)
      if (const auto* sr = s_.srq(q.srq.name)) same_device(q.srq, device_of_pd(sr->pd.name), dev, p + ".srq", "srq");
    if (q.xrcd)
      if (const auto* x = s_.xrcd(q.xrcd.name)) same_device(q.xrcd, x->device.name, dev, p + ".xrcd", "xrcd");
    if (q.connect && q.connect.name == q.name) {
      auto& d = sink_.error("Q502", q.connect.loc, p + ".connect", "QP '" + q.name + "' connects to itself");
      d.hint = "a loopback pair needs two QPs; connect each to the other";
    }
    if (q.type < 0) return;
    const std::string& type = q.type_name;  // for messages
    using spec::QpType;
    // ibv_create_qp(3): what each type needs at creation.
    bool needs_send_cq = q.qp_type != QpType::XRC_RECV;
    bool needs_recv_cq = !spec::is_xrc(q.qp_type);
    if (needs_send_cq) missing(q, q.send_cq, "send_cq", "a " + type + " QP needs a send CQ");
    if (needs_recv_cq) missing(q, q.recv_cq, "recv_cq", "a " + type + " QP needs a receive CQ");
    if (q.qp_type == QpType::XRC_RECV) missing(q, q.xrcd, "xrcd", "an XRC_RECV QP belongs to an XRC domain");
    if (q.qp_type != QpType::XRC_RECV && q.xrcd) {
      auto& d = sink_.error("Q203", q.xrcd.loc, p + ".xrcd", "only XRC_RECV QPs take 'xrcd'");
      d.hint = "XRC_SEND QPs name the remote SRQ per work request instead";
    }
    if (q.srq && (q.qp_type == QpType::XRC_SEND || q.qp_type == QpType::RAW_PACKET)) {
      sink_.error("Q203", q.srq.loc, p + ".srq", type + " QPs do not receive through an SRQ");
    }
  }

  // A member of a counted group connected to a counted group of another size names a peer
  // member that does not exist: the loader reported the pair once (Q502, "'cli' has count 4
  // but its peer 'srv' has count 16"); a Q201 per member would bury it.
  bool past_peer_count(const scenario::Qp& q) const {
    size_t own_dot = q.name.rfind('.'), peer_dot = q.connect.name.rfind('.');
    if (own_dot == std::string::npos || peer_dot == std::string::npos) return false;
    const auto* own = s_.group(q.name.substr(0, own_dot), scenario::Group::Kind::Qp);
    const auto* peer = s_.group(q.connect.name.substr(0, peer_dot), scenario::Group::Kind::Qp);
    return own && peer && own->count != peer->count && !s_.qp(q.connect.name);
  }

  // What an event step's `on` names must be what the event is about (ibv_get_async_event(3)):
  // QP events on QPs, SRQ events on SRQs, CQ_ERR on CQs, port and device events on devices.
  void event_object(const scenario::TimelineStep& step) {
    const auto* info = util::parse_async_event(step.event);
    if (!info || !step.on) return;
    std::string p = step.path + ".on";
    bool port = info->object == util::EventObject::Port || info->object == util::EventObject::Device;
    switch (info->object) {
      case util::EventObject::Qp: if (s_.qp(step.on.name)) return; break;
      case util::EventObject::Srq: if (s_.srq(step.on.name)) return; break;
      case util::EventObject::Cq: if (s_.cq(step.on.name)) return; break;
      default: if (s_.device(step.on.name)) return; break;
    }
    std::string kind = kind_of(s_, step.on.name);
    std::string want = port                                    ? "a device (the event is about its port)"
                       : info->object == util::EventObject::Srq ? "an SRQ"
                                                                : std::string("a ") + util::event_object_name(info->object);
    if (kind.empty()) {
      switch (info->object) {
        case util::EventObject::Qp: resolve_one(step.on, s_.qps, "qps", p); break;
        case util::EventObject::Srq: resolve(step.on, s_.srqs, "srqs", p); break;
        case util::EventObject::Cq: resolve(step.on, s_.cqs, "cqs", p); break;
        default: resolve(step.on, s_.devices, "devices", p); break;
      }
      return;
    }
    auto& d = sink_.error("Q204", step.on.loc, p,
                          step.event + " is about " + want + ", but '" + step.on.name + "' is " + kind);
    d.rule = "an event names the object it concerns: QP events a QP, SRQ events an SRQ, IBV_EVENT_CQ_ERR a CQ, "
             "port events a device";
    if (info->object == util::EventObject::Srq && s_.qp(step.on.name) && s_.qp(step.on.name)->srq)
      d.hint = "'" + step.on.name + "' takes its receives from SRQ '" + s_.qp(step.on.name)->srq.name + "': name that";
    else if (info->object == util::EventObject::Qp && s_.srq(step.on.name))
      d.hint = "name a QP on SRQ '" + step.on.name + "'";
  }

  // A key not written at all; one written with a value that is not a name was the loader's
  // error already (Q102), and is not "missing" too.
  void missing(const scenario::Qp& q, const scenario::Ref& ref, const char* key, const std::string& why) {
    if (ref || ref.loc.given()) return;
    auto& d = sink_.error("Q203", q.loc, "qps." + q.name + "." + key, why + " ('" + key + "' is missing)");
    d.rule = "ibv_create_qp(3) init attributes per QP type";
    d.hint = std::string("add '") + key + ": <name>'";
  }

  void workload(const scenario::Workload& w) {
    std::string p = "workloads." + w.name;
    resolve(w.qp, s_.qps, "qps", p + ".qp", true);
    for (size_t i = 0; i < w.more_qps.size(); ++i)
      resolve(w.more_qps[i], s_.qps, "qps", p + ".qp[" + std::to_string(i + 1) + "]", true);
    bool local_ok = resolve(w.local_mr, s_.mrs, "mrs", p + ".local_mr");
    // remote_mr may name a memory window: its checks are check_memory_windows'.
    bool remote_ok = s_.mw(w.remote_mr.name) || resolve(w.remote_mr, s_.mrs, "mrs", p + ".remote_mr");
    // Every initiator (a script may have several) sends from local_mr: one PD for all.
    for (const auto& ref : w.initiators()) {
      const auto* q = s_.qp(ref.name);
      const auto* m = local_ok && w.local_mr ? s_.mr(w.local_mr.name) : nullptr;
      if (q && m && m->pd && q->pd && m->pd.name != q->pd.name) {
        auto& d = sink_.error("Q202", w.local_mr.loc, p + ".local_mr",
                              "local MR '" + m->name + "' is in PD '" + m->pd.name + "', QP '" + q->name + "' in PD '" +
                                  q->pd.name + "'");
        d.rule = "a work request's lkey must belong to the QP's protection domain (else IBV_WC_LOC_PROT_ERR)";
      }
    }
    const auto* q = s_.qp(w.qp.name);
    if (!q) return;
    if (remote_ok && w.remote_mr && q->connect) {
      const auto* peer = s_.qp(q->connect.name);
      const auto* m = s_.mr(w.remote_mr.name);
      if (peer && m && m->pd && peer->pd && m->pd.name != peer->pd.name) {
        auto& d = sink_.error("Q202", w.remote_mr.loc, p + ".remote_mr",
                              "remote MR '" + m->name + "' is in PD '" + m->pd.name + "', but the peer QP '" +
                                  peer->name + "' is in PD '" + peer->pd.name + "'");
        d.rule = "the rkey must belong to the responder QP's protection domain (else IBV_WC_REM_ACCESS_ERR)";
      }
    }
  }

  const Scenario& s_;
  diag::DiagSink& sink_;
  int suggestions_ = 0;
};

}  // namespace

void check_references(const scenario::Scenario& s, diag::DiagSink& sink) { RefChecker(s, sink).run(); }

}  // namespace qpo::check
