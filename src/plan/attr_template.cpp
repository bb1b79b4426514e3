#include "plan/attr_template.h"

#include "verbs/device.h"

namespace qpo::plan {

namespace {

// Walks a transition's attributes into an AttrTemplate. Each field is written through put(),
// which either stores the value now or records where the run's value will go.
class Lowering {
 public:
  AttrTemplate build(const scenario::Transition& t) {
    auto& attr = out_.attr;
    attr.qp_state = static_cast<ibv_qp_state>(t.to);
    try {
      for (const auto& a : t.attrs) {
        const std::string& f = a.field;
        if (const auto* field = verbs::qp_attr_field(f)) put_at(field->offset, field->size, a);
        else if (f == "ah_attr") fill_ah(attr.ah_attr, a);
        else if (f == "alt_ah_attr") fill_ah(attr.alt_ah_attr, a);
        else if (f == "cap") fill_cap(attr.cap, a);
      }
    } catch (const std::runtime_error& e) {
      out_.error = e.what();
    }
    return std::move(out_);
  }

 private:
  template <typename T>
  uint16_t offset_of(const T& dst) const {
    return static_cast<uint16_t>(reinterpret_cast<const unsigned char*>(&dst) -
                                 reinterpret_cast<const unsigned char*>(&out_.attr));
  }
  template <typename T>
  void put(T& dst, const scenario::Attr& a) {
    put_at(offset_of(dst), sizeof(T), a);
  }

  // Stores a value known now, or records where the run's value will go.
  void put_at(uint16_t offset, uint8_t size, const scenario::Attr& a) {
    using scenario::Symbol;
    if (a.symbol == Symbol::None) return verbs::store_at(out_.attr, offset, size, static_cast<uint32_t>(a.number));
    if (a.symbol == Symbol::Device) return patch_at(offset, size, RunValue::Port, "port_num");
    const std::string& f = a.field;
    if (f == "dest_qp_num") return patch_at(offset, size, RunValue::PeerQpn, "dest_qp_num");
    if (f == "rq_psn") return patch_at(offset, size, RunValue::PeerSqPsn, "rq_psn");
    if (f == "dlid") return patch_at(offset, size, RunValue::PeerLid, "dlid");
    if (f == "sq_psn") return patch_at(offset, size, RunValue::OwnSqPsn, "sq_psn");
    if (f == "sgid_index") return patch_at(offset, size, RunValue::GidIndex, "sgid_index");
    if (f == "path_mtu") {  // this port's MTU; the smaller of both once the peer is known
      patch_at(offset, size, RunValue::PortMtu, "path_mtu");
      return patch_at(offset, size, RunValue::PeerPathMtu, "path_mtu");
    }
    throw std::runtime_error("no run-time value for " + f + " = " + scenario::symbol_name(a.symbol));
  }

  template <typename T>
  void patch(T& dst, RunValue what, const char* field) {
    patch_at(offset_of(dst), sizeof(T), what, field);
  }
  void patch_at(uint16_t offset, uint8_t size, RunValue what, const char* field) {
    if (out_.patch_count == out_.patches.size())
      throw std::runtime_error(std::string("too many run-time values (") + field + ")");
    out_.patches[out_.patch_count++] = {what, size, offset, field};
  }

  void fill_cap(ibv_qp_cap& cap, const scenario::Attr& a) {
    for (const auto& c : a.children) {
      auto n = static_cast<uint32_t>(c.number);
      if (c.field == "max_send_wr") cap.max_send_wr = n;
      else if (c.field == "max_recv_wr") cap.max_recv_wr = n;
      else if (c.field == "max_send_sge") cap.max_send_sge = n;
      else if (c.field == "max_recv_sge") cap.max_recv_sge = n;
      else if (c.field == "max_inline_data") cap.max_inline_data = n;
    }
  }

  void fill_ah(ibv_ah_attr& ah, const scenario::Attr& a) {
    ah = {};
    bool port_given = false;
    for (const auto& c : a.children) port_given |= c.field == "port_num";
    if (!port_given) patch(ah.port_num, RunValue::Port, "port_num");  // this QP's port
    if (a.symbol == scenario::Symbol::Peer) {        // the whole address vector from the peer
      ah.is_global = 1;
      ah.grh.hop_limit = 1;
      patch(ah.grh.sgid_index, RunValue::GidIndex, "sgid_index");
      patch(ah.dlid, RunValue::PeerLid, "ah_attr");
      patch(ah.grh.dgid, RunValue::PeerGid, "ah_attr");
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
            if (g.symbol == scenario::Symbol::Peer) patch(ah.grh.dgid, RunValue::PeerGid, "dgid");
            else verbs::parse_gid(g.text, ah.grh.dgid);
          } else if (g.field == "sgid_index") put(ah.grh.sgid_index, g);
          else if (g.field == "hop_limit") put(ah.grh.hop_limit, g);
          else if (g.field == "traffic_class") put(ah.grh.traffic_class, g);
          else if (g.field == "flow_label") put(ah.grh.flow_label, g);
        }
      }
    }
  }

  AttrTemplate out_;
};

}  // namespace

AttrTemplate lower_attrs(const scenario::Transition& t) { return Lowering().build(t); }

}  // namespace qpo::plan
