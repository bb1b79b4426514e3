#include "scenario/model.h"

namespace qpo::scenario {

const char* symbol_name(Symbol s) {
  switch (s) {
    case Symbol::None: return "";
    case Symbol::Peer: return "peer";
    case Symbol::Auto: return "auto";
    case Symbol::Random: return "random";
    case Symbol::Device: return "device";
  }
  return "";
}

const Attr* Attr::child(std::string_view name) const {
  for (const auto& c : children)
    if (c.field == name) return &c;
  return nullptr;
}

const Attr* Transition::attr(std::string_view field) const {
  for (const auto& a : attrs)
    if (a.field == field) return &a;
  return nullptr;
}

std::vector<Ref> Workload::initiators() const {
  std::vector<Ref> out{qp};
  out.insert(out.end(), more_qps.begin(), more_qps.end());
  return out;
}

const ScriptArg* Workload::arg(std::string_view key) const {
  for (const auto& a : args)
    if (a.key == key) return &a;
  return nullptr;
}

const Device* Scenario::device_of_qp(const Qp& q) const {
  const Pd* p = pd(q.pd.name);
  return p ? device(p->device.name) : nullptr;
}

const char* cm_port_space(const Qp& q) {
  if (q.qp_type == spec::QpType::UD) return "RDMA_PS_UDP";
  return q.qp_type == spec::QpType::UC && q.cm.brings_up() ? "RDMA_PS_IB" : "RDMA_PS_TCP";
}

std::string Scenario::host_of_device(std::string_view device_name) const {
  const Device* d = device(device_name);
  return d ? d->host.name : std::string();
}

std::vector<std::string> Scenario::active_hosts() const {
  std::vector<std::string> out;
  for (const auto& h : hosts)
    for (const auto& d : devices)
      if (d.host.name == h.name) {
        out.push_back(h.name);
        break;
      }
  return out;
}

std::string Scenario::host_of_qp(const Qp& q) const {
  const Device* d = device_of_qp(q);
  return d ? d->host.name : std::string();
}

}  // namespace qpo::scenario
