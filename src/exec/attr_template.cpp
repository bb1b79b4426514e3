#include "exec/attr_template.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "exec/steps.h"
#include "verbs/qp_attr_fields.h"
#include "verbs/verbs_error.h"

namespace qpo::exec {

namespace {

void store_bytes(unsigned char* dst, uint8_t size, uint32_t v) {
  if (size == 1) *dst = static_cast<uint8_t>(v);
  else if (size == 2) {
    auto w = static_cast<uint16_t>(v);
    std::memcpy(dst, &w, 2);
  } else std::memcpy(dst, &v, 4);
}

// Walks a transition's attributes into an AttrTemplate. Each field is written through put(),
// which either stores the value now or records where the peer's value will go.
class TemplateBuilder {
 public:
  explicit TemplateBuilder(const QpState& q) : q_(q) {}

  AttrTemplate build(const scenario::Transition& t) {
    out_.attr.qp_state = static_cast<ibv_qp_state>(t.to);
    auto& attr = out_.attr;
    for (const auto& a : t.attrs) {
      const std::string& f = a.field;
      if (const auto* field = verbs::qp_attr_field(f)) put_field(*field, a);
      else if (f == "ah_attr") fill_ah(attr.ah_attr, a);
      else if (f == "alt_ah_attr") fill_ah(attr.alt_ah_attr, a);
      else if (f == "cap") {
        for (const auto& c : a.children) {
          if (c.field == "max_send_wr") attr.cap.max_send_wr = static_cast<uint32_t>(c.number);
          else if (c.field == "max_recv_wr") attr.cap.max_recv_wr = static_cast<uint32_t>(c.number);
          else if (c.field == "max_send_sge") attr.cap.max_send_sge = static_cast<uint32_t>(c.number);
          else if (c.field == "max_recv_sge") attr.cap.max_recv_sge = static_cast<uint32_t>(c.number);
          else if (c.field == "max_inline_data") attr.cap.max_inline_data = static_cast<uint32_t>(c.number);
        }
      }
    }
    return out_;
  }

 private:
  // A scalar member of ibv_qp_attr (verbs/qp_attr_fields.h), by offset and size.
  void put_field(const verbs::QpAttrField& field, const scenario::Attr& a) { put_at(field.offset, field.size, a); }

  // A member of out_.attr (an ah_attr's, here): where it is, then as put_field.
  template <typename T>
  void put(T& dst, const scenario::Attr& a) {
    put_at(offset_of(dst), sizeof(T), a);
  }
  template <typename T>
  uint16_t offset_of(const T& dst) const {
    return static_cast<uint16_t>(reinterpret_cast<const unsigned char*>(&dst) -
                                 reinterpret_cast<const unsigned char*>(&out_.attr));
  }

  // Stores a value known now, or records where the peer's value will go.
  void put_at(uint16_t offset, uint8_t size, const scenario::Attr& a) {
    using scenario::Symbol;
    auto* dst = reinterpret_cast<unsigned char*>(&out_.attr) + offset;
    if (a.symbol == Symbol::None) return store_bytes(dst, size, static_cast<uint32_t>(a.number));
    if (a.symbol == Symbol::Device) return store_bytes(dst, size, q_.device->ctx().port());
    const std::string& f = a.field;
    if (f == "dest_qp_num") return patch_at(offset, size, PeerValue::Qpn, "dest_qp_num");
    if (f == "rq_psn") return patch_at(offset, size, PeerValue::SqPsn, "rq_psn");
    if (f == "dlid") return patch_at(offset, size, PeerValue::Lid, "dlid");
    if (f == "sq_psn") return store_bytes(dst, size, q_.sq_psn);
    if (f == "sgid_index") return store_bytes(dst, size, static_cast<uint32_t>(q_.device->gid_index));
    if (f == "path_mtu") {  // this port's MTU now; the smaller of both once the peer is known
      store_bytes(dst, size, static_cast<uint32_t>(q_.device->ctx().port_attr().active_mtu));
      return patch_at(offset, size, PeerValue::PathMtu, "path_mtu");
    }
    throw std::runtime_error("no run-time value for " + f + " = " + scenario::symbol_name(a.symbol));
  }

  template <typename T>
  void patch(T& dst, PeerValue what, const char* field) {
    patch_at(offset_of(dst), sizeof(T), what, field);
  }
  void patch_at(uint16_t offset, uint8_t size, PeerValue what, const char* field) {
    if (out_.patch_count == out_.patches.size()) throw std::runtime_error(std::string("too many peer values (") + field + ")");
    out_.patches[out_.patch_count++] = {what, size, offset, field};
  }

  void fill_ah(ibv_ah_attr& ah, const scenario::Attr& a) {
    ah = {};
    ah.port_num = q_.device->ctx().port();
    if (a.symbol == scenario::Symbol::Peer) {  // the whole address vector from the peer
      ah.is_global = 1;
      ah.grh.sgid_index = static_cast<uint8_t>(q_.device->gid_index);
      ah.grh.hop_limit = 1;
      patch(ah.dlid, PeerValue::Lid, "ah_attr");
      patch(ah.grh.dgid, PeerValue::Gid, "ah_attr");
      return;
    }
    for (const auto& c : a.children) {
      if (c.field == "dlid") put(ah.dlid, c);
      else if (c.field == "sl") put(ah.sl, c);
      else if (c.field == "src_path_bits") put(ah.src_path_bits, c);
      else if (c.field == "static_rate") put(ah.static_rate, c);
      else if (c.field == "is_global") put(ah.is_global, c);
      else if (c.field == "port_num") put(ah.port_num, c);
      else if (c.field == "grh") {
        for (const auto& g : c.children) {
          if (g.field == "dgid") {
            if (g.symbol == scenario::Symbol::Peer) patch(ah.grh.dgid, PeerValue::Gid, "dgid");
            else verbs::parse_gid(g.text, ah.grh.dgid);
          } else if (g.field == "sgid_index") put(ah.grh.sgid_index, g);
          else if (g.field == "hop_limit") put(ah.grh.hop_limit, g);
          else if (g.field == "traffic_class") put(ah.grh.traffic_class, g);
          else if (g.field == "flow_label") put(ah.grh.flow_label, g);
        }
      }
    }
  }

  const QpState& q_;
  AttrTemplate out_;
};

}  // namespace

AttrTemplate compile_attrs(const QpState& q, const scenario::Transition& t) { return TemplateBuilder(q).build(t); }

void AttrTemplate::resolve(const QpState& q, const RemoteQp* peer, ibv_qp_attr& out) const {
  out = attr;
  auto* base = reinterpret_cast<unsigned char*>(&out);
  for (uint8_t i = 0; i < patch_count; ++i) {
    const PeerPatch& p = patches[i];
    unsigned char* dst = base + p.offset;
    if (p.value == PeerValue::PathMtu) {
      if (peer) out.path_mtu = std::min(out.path_mtu, static_cast<ibv_mtu>(peer->active_mtu));
      continue;
    }
    if (!peer) throw std::runtime_error(std::string(p.field) + " is 'peer' but QP '" + q.spec->name + "' has no published peer");
    switch (p.value) {
      case PeerValue::Qpn: store_bytes(dst, p.size, peer->qpn); break;
      case PeerValue::SqPsn: store_bytes(dst, p.size, peer->sq_psn); break;
      case PeerValue::Lid: store_bytes(dst, p.size, peer->lid); break;
      case PeerValue::Gid: std::memcpy(dst, peer->gid.data(), 16); break;
      case PeerValue::PathMtu: break;
    }
  }
}

}  // namespace qpo::exec
