#include "probe/runner.h"

#include <sys/utsname.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <memory>
#include <optional>
#include <thread>

#include "verbs/device.h"
#include "verbs/qp_attr_fields.h"
#include "verbs/qp_control.h"
#include "verbs/resources.h"
#include "verbs/verbs_error.h"

namespace qpo::probe {

namespace {

using spec::QpState;
const spec::RuleTable& rules() { return spec::RuleTable::builtin(); }

struct Bench {
  explicit Bench(const Options& o) : ctx(o.device, o.port, "probe") {}
  verbs::Context ctx;
  verbs::Pd pd{"probe pd", ctx.get()};
  verbs::Cq cq{"probe cq", ctx.get(), 64, nullptr};
  std::unique_ptr<verbs::Xrcd> xrcd;  // only when the device has XRC
  int gid_index = ctx.auto_gid_index();
};

// Valid values for every attribute, so that only the mask (or the one value a case sets)
// decides the answer: the rule tables' numeric defaults (timeout 14, qkey 0x11111111, ...),
// and for the run-time ones (`device`, `peer`, `auto`) this device's port, the QP itself as
// its peer, IBV_MTU_1024 and the GID perftest would pick.
ibv_qp_attr valid_attrs(const Bench& b, ibv_qp* qp, QpState cur, QpState next) {
  ibv_qp_attr a{};
  for (const auto& f : verbs::kQpAttrFields) {
    const auto* rule = rules().value_rule(f.name);
    if (!rule || rule->default_text.empty() || !std::isdigit(static_cast<unsigned char>(rule->default_text[0])))
      continue;
    verbs::store(a, f, static_cast<uint32_t>(std::stoull(rule->default_text, nullptr, 0)));
  }
  a.qp_state = static_cast<ibv_qp_state>(next);
  a.cur_qp_state = static_cast<ibv_qp_state>(cur);
  a.port_num = a.alt_port_num = b.ctx.port();
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = qp->qp_num;
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = b.ctx.port();
  a.ah_attr.grh.dgid = b.ctx.gid(b.gid_index);
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(b.gid_index);
  a.ah_attr.grh.hop_limit = 1;
  a.alt_ah_attr = a.ah_attr;
  a.alt_timeout = a.timeout;
  return a;
}

std::unique_ptr<verbs::Qp> create_qp(Bench& b, int type) {
  ibv_qp_init_attr init{};
  init.qp_type = static_cast<ibv_qp_type>(rules().types()[static_cast<size_t>(type)].ibv);
  if (init.qp_type != IBV_QPT_XRC_RECV) init.send_cq = init.recv_cq = b.cq.get();
  init.cap = {4, init.qp_type == IBV_QPT_XRC_SEND ? 0u : 4u, 1, init.qp_type == IBV_QPT_XRC_SEND ? 0u : 1u, 0};
  return std::make_unique<verbs::Qp>("probe qp", b.ctx.get(), b.pd.get(), b.xrcd ? b.xrcd->get() : nullptr, init);
}

// RTS->SQD returns before the send queue has drained; a transition out of SQD while it drains
// is refused. Waiting for sq_draining to clear makes the next case's answer not depend on timing.
void wait_drained(ibv_qp* qp) {
  for (int i = 0; i < 2000; ++i) {
    ibv_qp_attr a{};
    if (verbs::query_qp(qp, a, IBV_QP_STATE) != 0 || !a.sq_draining) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A fresh QP driven to `target` along the bring-up path with minimal valid masks.
std::unique_ptr<verbs::Qp> qp_in_state(Bench& b, int type, QpState target) {
  auto qp = create_qp(b, type);
  std::vector<QpState> path;
  if (target == QpState::ERR) path = {QpState::INIT, QpState::ERR};
  else
    for (QpState s : {QpState::INIT, QpState::RTR, QpState::RTS, QpState::SQD}) {
      if (static_cast<int>(target) < static_cast<int>(s)) break;
      path.push_back(s);
    }
  QpState cur = QpState::RESET;
  for (QpState s : path) {
    spec::Mask m = rules().required(type, cur, s) | 1u;
    auto a = valid_attrs(b, qp->get(), cur, s);
    if (int e = verbs::modify_qp(qp->get(), a, static_cast<int>(m)))
      throw verbs::VerbsError("ibv_modify_qp", "probe QP", e,
                              std::string("walking to ") + spec::state_name(target) + ": " + spec::state_name(cur) +
                                  "->" + spec::state_name(s) + " with " + rules().mask_names(m, "|"));
    if (s == QpState::SQD) wait_drained(qp->get());
    cur = s;
  }
  return qp;
}

std::optional<uint32_t> query_field(ibv_qp* qp, const verbs::QpAttrField& f) {
  ibv_qp_attr a{};
  if (verbs::query_qp(qp, a, f.mask) != 0) return std::nullopt;
  return verbs::load(a, f);
}

std::string run_case(Bench& b, const Case& c) {
  auto qp = qp_in_state(b, c.type, c.cur);
  auto a = valid_attrs(b, qp->get(), c.cur, c.next);
  const verbs::QpAttrField* field = nullptr;
  if (c.key.kind == spec::ProbeCaseKey::Kind::Value) {
    field = verbs::qp_attr_field(c.key.attr);
    verbs::store(a, *field, static_cast<uint32_t>(c.key.value));
  }
  int e = verbs::modify_qp(qp->get(), a, static_cast<int>(c.mask));
  if (e != 0) return verbs::errno_name(e);
  if (!field || !field->read_back) return "ok";
  auto after = query_field(qp->get(), *field);
  if (!after) return "ok, not readable";
  // Another value read back means the device truncated, rounded or ignored the one written.
  if (*after == c.key.value) return "ok";
  return "ok, reads back " + std::to_string(*after);
}

std::string kernel_release() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// Why this device cannot create a QP of `type`, or "" when it can.
std::string cannot_create(Bench& b, int type) {
  const auto& info = rules().types()[static_cast<size_t>(type)];
  bool xrc = spec::is_xrc(info.kind());
  if (xrc && !(b.ctx.device_attr().device_cap_flags & IBV_DEVICE_XRC))
    return "unsupported by device: it does not report IBV_DEVICE_XRC";
  try {
    if (xrc && !b.xrcd) b.xrcd = std::make_unique<verbs::Xrcd>("probe xrcd", b.ctx.get());
    create_qp(b, type);
  } catch (const verbs::VerbsError& e) {
    std::string failed = e.verb() + " failed with " + verbs::errno_name(e.error());
    if (e.error() == EPERM) return "not permitted here: " + failed + " (RAW_PACKET QPs need CAP_NET_RAW)";
    return "unsupported by device: " + failed;
  }
  return "";
}

}  // namespace

size_t Report::agreed() const {
  size_t n = 0;
  for (const auto& r : results) n += r.agreed();
  return n;
}

Report run_probe(const Options& options) {
  auto start = std::chrono::steady_clock::now();
  Bench b(options);
  Report report;
  report.device = b.ctx.device_name();
  report.provider = b.ctx.provider();
  report.kernel = kernel_release();
  report.date = today();
  DeviceFacts facts{report.provider,
                    {{"max_qp_rd_atom", static_cast<uint64_t>(b.ctx.device_attr().max_qp_rd_atom)},
                     {"max_qp_init_rd_atom", static_cast<uint64_t>(b.ctx.device_attr().max_qp_init_rd_atom)},
                     {"phys_port_cnt", static_cast<uint64_t>(b.ctx.device_attr().phys_port_cnt)}}};
  for (int type = 0; type < static_cast<int>(rules().types().size()); ++type) {
    const auto& info = rules().types()[static_cast<size_t>(type)];
    if (!info.user) continue;  // SMI, GSI: not creatable from user space
    if (auto why = cannot_create(b, type); !why.empty()) {
      report.not_probed[info.name] = why;
      if (options.progress) options.progress(info.name + ": not probed: " + why);
      continue;
    }
    auto cases = cases_for_type(rules(), type, facts);
    for (size_t i = 0; i < cases.size(); ++i) {
      if (options.progress && i % 250 == 0)
        options.progress(info.name + ": " + std::to_string(i) + " of " + std::to_string(cases.size()) + " cases");
      std::string answer;
      try {
        answer = run_case(b, cases[i]);
      } catch (const verbs::VerbsError& e) {
        // The device refused the walk to the case's state: the case itself never ran.
        answer = std::string("cannot reach ") + spec::state_name(cases[i].cur) + " (" + verbs::errno_name(e.error()) + ")";
      }
      report.results.push_back({cases[i], answer});
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace qpo::probe
