#include "exec/cm_steps.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <thread>
#include <utility>

#include "cm/cm.h"
#include "cm/exchange_data.h"
#include "cm/flow.h"
#include "cm/peer_check.h"
#include "exec/cm_resources.h"
#include "exec/directory_names.h"
#include "exec/failure_note.h"
#include "exec/endpoints.h"
#include "exec/host_session.h"
#include "exec/steps.h"
#include "spec/rules.h"
#include "util/strings.h"
#include "verbs/qp_type.h"

namespace qpo::exec {

// An rdma_cm id of this host: its end's (Plan::cm_ends) own, or that end's listener.
struct CmIdKey {
  int end = -1;
  bool listener = false;
  auto operator<=>(const CmIdKey&) const = default;
};

struct CmHost {
  ChannelResource* channel = nullptr;
  std::map<CmIdKey, IdResource*> ids;
  std::deque<cm::Event> pending;           // events read while waiting for another id's
  Directory held;  // exchange_only QPs' own entries, kept from the agents' exchange (hold_cm_exchange)
};

namespace {

using plan::StepKind;

// exchange_only's private data (cm/exchange_data.h): little-endian fields, fixed layout.
class Bytes {
 public:
  template <typename T>
  void put(T v) {
    for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * i)));
  }
  std::vector<unsigned char> out;
};

class ExchangeReader {
 public:
  explicit ExchangeReader(const std::vector<unsigned char>& in) : in_(in) {}
  template <typename T>
  T get() {
    if (at_ + sizeof(T) > in_.size()) throw std::runtime_error("the peer's exchange is " + std::to_string(in_.size()) + " bytes, too short");
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(in_[at_ + i]) << (8 * i);
    at_ += sizeof(T);
    return static_cast<T>(v);
  }

 private:
  const std::vector<unsigned char>& in_;
  size_t at_ = 0;
};

void put_mr(Bytes& b, const RemoteMr* m) {
  b.put<uint64_t>(m ? m->addr : 0);
  b.put<uint64_t>(m ? m->length : 0);
  b.put<uint32_t>(m ? m->rkey : 0);
}

RemoteMr get_mr(ExchangeReader& r, const std::string& host) {
  RemoteMr m;
  m.host = host;
  m.addr = r.get<uint64_t>();
  m.length = r.get<uint64_t>();
  m.rkey = r.get<uint32_t>();
  return m;
}

// e's side of the exchange from `held` (its own QP, slots and carried MRs).

std::vector<unsigned char> encode_exchange(const plan::CmEnd& e, const Directory& held) {
  auto it = held.qps.find(e.qp_id);
  if (it == held.qps.end()) throw std::runtime_error("QP '" + e.qp + "' has no values to exchange (not created?)");
  const RemoteQp& v = it->second;
  Bytes b;
  b.put<uint32_t>(v.qpn);
  b.put<uint32_t>(v.sq_psn);
  b.put<uint16_t>(v.lid);
  for (uint8_t g : v.gid) b.put<uint8_t>(g);
  b.put<uint8_t>(v.active_mtu);
  b.put<uint8_t>(v.port);
  b.put<uint32_t>(v.slots_count);
  b.put<uint32_t>(v.slot_size);
  auto slots = held.mrs.find(slots_key(e.qp_id));
  put_mr(b, slots == held.mrs.end() ? nullptr : &slots->second);
  for (size_t i = 0; i < e.carried_keys.size(); ++i) {
    auto m = held.mrs.find(e.carried_keys[i]);
    if (m == held.mrs.end()) throw std::runtime_error("MR '" + e.carried_mrs.at(i) + "' has no values to exchange");
    put_mr(b, &m->second);
  }
  return std::move(b.out);
}

// e's peer's side into `dir`, as the agents' exchange would have put it; returns a summary.
std::string decode_exchange(const plan::CmEnd& e, const std::vector<unsigned char>& data, Directory& dir) {
  ExchangeReader r(data);
  RemoteQp v;
  v.host = e.peer_host;
  v.type = e.peer_type;
  v.qpn = r.get<uint32_t>();
  v.sq_psn = r.get<uint32_t>();
  v.lid = r.get<uint16_t>();
  for (auto& g : v.gid) g = r.get<uint8_t>();
  v.active_mtu = r.get<uint8_t>();
  v.port = r.get<uint8_t>();
  v.slots_count = r.get<uint32_t>();
  v.slot_size = r.get<uint32_t>();
  std::string out = "qp_num " + std::to_string(v.qpn) + ", sq_psn " + util::hex(v.sq_psn);
  RemoteMr slots = get_mr(r, v.host);
  if (slots.length) dir.mrs.insert_or_assign(slots_key(e.peer_id), slots);
  for (size_t i = 0; i < e.peer_carried_keys.size(); ++i) {
    RemoteMr m = get_mr(r, v.host);
    out += ", MR " + e.peer_carried_mrs.at(i) + " rkey " + util::hex(m.rkey);
    dir.mrs.insert_or_assign(e.peer_carried_keys[i], m);
  }
  dir.qps.insert_or_assign(e.peer_id, v);
  return out;
}

// The CM's errors are thrown as VerbsError (a call refused) or cm::Unexpected (another event,
// or none in time); both fail the step with their text.
class CmRunner {
 public:
  CmRunner(RunState& st, report::RunReport& log, const plan::Plan& plan, const RunOptions& o, const plan::Step& step)
      : st_(st), log_(log), plan_(plan), o_(o), step_(step), end_(plan.cm_end_of(step)) {}

  bool run() {
    if (step_.kind == StepKind::CmChannel) return channel();
    if (!st_.cm || !st_.cm->channel) {
      log_.fail("internal error: rdma_cm step " + std::to_string(step_.index) + " before the event channel");
      return false;
    }
    if (!end_) {
      log_.fail("internal error: rdma_cm step " + std::to_string(step_.index) + " has no connection end in the plan");
      return false;
    }
    switch (step_.kind) {
      case StepKind::CmCreateId: return line([&] { create_id(); });
      case StepKind::CmListen: return line([&] { listen(); });
      case StepKind::CmResolveAddr: return awaited([&] { resolve_addr(); });
      case StepKind::CmResolveRoute: return awaited([&] { resolve_route(); });
      case StepKind::CmModify: return line([&] { modify(); });
      case StepKind::PostRecv: return line([&] { post_receives(); });
      case StepKind::CmConnect: return awaited([&] { connect(); });
      case StepKind::CmWaitRequest: return line([&] { wait_request(); });
      case StepKind::CmAccept: return line([&] { accept(); });
      case StepKind::CmReject: return line([&] { reject(); });
      case StepKind::CmEstablish: return line([&] { establish(); });
      case StepKind::CmDisconnect: return line([&] { disconnect(); });
      default: break;
    }
    log_.fail("internal error: plan step " + std::to_string(step_.index) + " is not an rdma_cm step");
    return false;
  }

 private:
  const plan::CmEnd& end() const { return *end_; }
  QpState& qp() { return st_.qps.at(step_.id); }
  CmHost& host() { return *st_.cm; }
  // This step's id (its end's own, or its listener), or its end's listener.
  CmIdKey key() const { return {step_.extra().cm_end, step_.extra().cm_listener}; }
  CmIdKey listener_key() const { return {step_.extra().cm_end, true}; }
  rdma_cm_id* id(CmIdKey k) {
    auto it = host().ids.find(k);
    if (it == host().ids.end() || !it->second->get())
      throw std::runtime_error("no rdma_cm id for " + end().qp + (k.listener ? "'s listener" : ""));
    return it->second->get();
  }
  int timeout_ms() const { return o_.phase_timeout_ms > 0 ? o_.phase_timeout_ms : 120000; }

  template <typename Fn>
  bool line(Fn fn) {
    auto& r = run_step(log_, st_.host, phase(), step_.verb, step_.object, detail_, [&] { fn(); });
    if (r.status != report::StepStatus::Failed && !message_.empty()) r.message = message_;
    if (expected_) r.status = report::StepStatus::ExpectedFailure;
    return r.status != report::StepStatus::Failed;
  }

  // A step that waits for an event the scenario may expect not to come: the expected one
  // passes the step (the QP stays where the failure left it), anything else fails it.
  template <typename Fn>
  bool awaited(Fn fn) {
    if (step_.expect.empty()) return line(fn);
    return line([&] {
      try {
        fn();
      } catch (const cm::Unexpected& u) {
        judge(u);
        return;
      }
      throw std::runtime_error("the connection was made, but " + step_.expect + " was expected");
    });
  }

  void judge(const cm::Unexpected& u) {
    const auto& cm = end();
    if (cm.expect_timeout) {
      if (u.got() || u.error() != ETIMEDOUT) throw std::runtime_error(std::string(u.what()) + "; expected no event (timeout)");
      message_ = "no event within " + std::to_string(wait_ms()) + " ms (expected)";
      expected_ = true;
      return;
    }
    if (!u.got() || static_cast<int>(u.got()->type) != cm.expect_event) throw std::runtime_error(std::string(u.what()) + "; expected " + step_.expect);
    const auto& e = *u.got();
    std::string why;
    if (cm.expect_reason && e.type == RDMA_CM_EVENT_REJECTED && cm::reject_reason(e.status) != *cm.expect_reason)
      why = "reason '" + cm::reject_reason(e.status) + "', not '" + *cm.expect_reason + "'";
    std::string data = cm::private_text(e.private_data);
    if (cm.expect_private_data && data != *cm.expect_private_data)
      why += (why.empty() ? "" : "; ") + std::string("private data '") + data + "', not '" + *cm.expect_private_data + "'";
    if (!why.empty()) throw std::runtime_error(cm::describe(e) + " came, but with " + why);
    message_ = cm::describe(e) + " (expected)";
    expected_ = true;
  }

  std::string phase() const { return step_.kind == StepKind::CmDisconnect ? "transitions" : "bring-up"; }
  int wait_ms() const {
    return !step_.expect.empty() && end_ && end_->within_ms ? static_cast<int>(end_->within_ms) : timeout_ms();
  }

  // The next event about `for_id` (a CONNECT_REQUEST: about the listener), within the wait;
  // events about other ids of this host wait in `pending`. A stop (SIGINT, the controller)
  // ends the wait early.
  cm::Event await(rdma_cm_id* for_id, rdma_cm_event_type want, int ms = 0) {
    auto concerns = [&](const cm::Event& e) { return e.id == for_id || (e.listen_id && e.listen_id == for_id); };
    auto& h = host();
    for (auto it = h.pending.begin(); it != h.pending.end(); ++it)
      if (concerns(*it)) {
        cm::Event e = *it;
        h.pending.erase(it);
        return checked(e, want);
      }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms > 0 ? ms : wait_ms());
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) throw cm::Unexpected(step_.object, cm::event_name(want), std::nullopt, ETIMEDOUT);
      if (stop_flag() || (st_.channel && st_.channel->stop_request() && st_.channel->stop_request()->requested))
        throw std::runtime_error(stopped_while_waiting(cm::event_name(want)));
      int err = 0;
      auto e = cm::next_event(h.channel->channel(), static_cast<int>(std::min<long long>(left, 200)), &err);
      if (!e) {
        if (err == ETIMEDOUT) continue;
        throw cm::Unexpected(step_.object, cm::event_name(want), std::nullopt, err);
      }
      if (concerns(*e)) return checked(*e, want);
      h.pending.push_back(*e);
    }
  }
  cm::Event checked(const cm::Event& e, rdma_cm_event_type want) {
    if (e.type != want) throw cm::Unexpected(step_.object, cm::event_name(want), e, 0);
    message_ = cm::describe(e);
    return e;
  }

  bool channel() {
    // Hosts of one process (--local) share this machine's device: rdma_cm cannot connect it to itself.
    if (o_.hosts_here > 1) {
      for (const auto& e : plan_.cm_ends) {
        // A peerless active side's link_host is the other host: its address is on the link
        // between them, which --local does not have.
        const std::string &a = e.host, &b = e.link_host;
        if (a == b) continue;
        std::string why = !e.peer.empty() ? "which rdma_cm cannot connect to itself"
                                          : "where QP '" + e.qp + "' resolving " + e.address + " finds no link between the hosts";
        log_.verdict = report::Verdict::Unsupported;
        log_.reason = "unsupported by device (" + provider_of(st_) + "): rdma_cm between hosts " + a + " and " + b +
                            " needs a device per host; --local runs both on this machine's one device, " + why +
                            " (run without --local: in the lab each host gets its own guest)";
        report::StepResult r;
        r.host = st_.host;
        r.phase = "bring-up";
        r.verb = step_.verb;
        r.object = step_.object;
        r.status = report::StepStatus::Skipped;
        r.message = log_.reason;
        log_.add(std::move(r));
        return false;
      }
    }
    return line([&] {
      if (!st_.cm) st_.cm = std::make_shared<CmHost>();
      st_.cm->channel = st_.own<ChannelResource>(step_.object);
    });
  }

  void create_id() {
    const auto& e = end();
    bool listener = step_.extra().cm_listener;
    if (e.type == spec::QpType::UC && !e.exchange_only) return create_uc_id(e, listener);
    rdma_port_space ps = e.type == spec::QpType::UD ? RDMA_PS_UDP : RDMA_PS_TCP;
    cm::Id made(host().channel->channel(), ps, step_.object);
    host().ids[key()] = st_.own<IdResource>(step_.object, std::move(made));
  }

  // A UC id (cm.h Id::endpoint): the listener bound to its address and port, the active side
  // to the wildcard of the address it resolves (any port), as rdma_resolve_addr would bind it.
  void create_uc_id(const plan::CmEnd& cm, bool listener) {
    std::string ip = listener ? (cm.address.empty() ? "::" : cm.address) : cm::wildcard_of(cm.address);
    sockaddr_storage bind;
    if (!cm::make_sockaddr(ip, static_cast<uint16_t>(listener ? cm.port : 0), &bind))
      throw std::runtime_error("'" + ip + "' is not an IP address");
    auto made = cm::Id::endpoint(host().channel->channel(), RDMA_PS_IB, IBV_QPT_UC, bind, step_.object);
    host().ids[key()] = st_.own<IdResource>(step_.object, std::move(made));
    uint32_t port = listener ? cm.port : 0;
    message_ = "an RDMA_PS_IB id of type UC, bound to " + (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" +
               std::to_string(port);
  }

  void listen() {
    const auto& cm = end();
    sockaddr_storage any;
    cm::make_sockaddr(cm.address.empty() ? "::" : cm.address, static_cast<uint16_t>(cm.port), &any);
    // A UC listener is bound already (rdma_create_ep).
    if ((cm.type != spec::QpType::UC || cm.exchange_only) && rdma_bind_addr(id(key()), reinterpret_cast<sockaddr*>(&any)) != 0)
      throw verbs::VerbsError("rdma_bind_addr", step_.object, errno);
    if (rdma_listen(id(key()), 1) != 0) throw verbs::VerbsError("rdma_listen", step_.object, errno);
    message_ = "listening on port " + std::to_string(cm.port);
  }

  void resolve_addr() {
    auto [cm_ms, ms] = resolve_times(RDMA_CM_EVENT_ADDR_ERROR);
    resolve_addr_on(id(key()), cm_ms, ms);
  }
  void resolve_addr_on(rdma_cm_id* cm_id, int cm_ms, int ms) {
    const auto& cm = end();
    sockaddr_storage dst;
    if (!cm::make_sockaddr(cm.address, static_cast<uint16_t>(cm.port), &dst))
      throw std::runtime_error("'" + cm.address + "' is not an IP address");
    if (rdma_resolve_addr(cm_id, nullptr, reinterpret_cast<sockaddr*>(&dst), cm_ms) != 0)
      throw verbs::VerbsError("rdma_resolve_addr", step_.object, errno);
    await(cm_id, RDMA_CM_EVENT_ADDR_RESOLVED, ms);
  }

  // The CM's timeout for a resolution and qpo's wait for its answer. The CM answers by its own
  // timeout (RESOLVED or the error event): for an expected ADDR_ERROR/ROUTE_ERROR the CM gets
  // `within` and qpo waits up to the phase timeout, so the event does not race qpo's own wait
  // (both were `within`: the event came a few ms after qpo had given up).
  std::pair<int, int> resolve_times(rdma_cm_event_type error_event) const {
    int cm_ms = std::min(wait_ms(), 60000);
    return {cm_ms, end().expect_event == error_event ? std::max(timeout_ms(), wait_ms()) : wait_ms()};
  }

  void resolve_route() {
    auto [cm_ms, ms] = resolve_times(RDMA_CM_EVENT_ROUTE_ERROR);
    resolve_route_on(id(key()), cm_ms, ms);
  }
  void resolve_route_on(rdma_cm_id* cm_id, int cm_ms, int ms) {
    if (rdma_resolve_route(cm_id, cm_ms) != 0)
      throw verbs::VerbsError("rdma_resolve_route", step_.object, errno);
    await(cm_id, RDMA_CM_EVENT_ROUTE_RESOLVED, ms);
    // The CM's device must be the QP's: its attributes (port, GID index) are that device's.
    std::string theirs = cm_id->verbs ? ibv_get_device_name(cm_id->verbs->device) : "?";
    std::string ours = qp().device ? qp().device->ctx().device_name() : "?";
    if (theirs != ours)
      throw std::runtime_error("rdma_cm resolved " + end().address + " to device " + theirs + ", but QP '" +
                               step_.object + "' is on " + ours);
    message_ += " on " + theirs;
  }

  void modify() {
    auto& q = qp();
    ibv_qp_attr applied{};
    int mask = cm::modify_by_cm(id(key()), q.qp->get(), verbs::to_ibv(step_.target), step_.object, &applied);
    q.state = step_.target;
    if (end().type == spec::QpType::UD && (mask & IBV_QP_QKEY)) q.qkey = applied.qkey;
    detail_ = step_.from_state + "->" + step_.to_state + " (rdma_init_qp_attr)";
    message_ = "attr_mask=" + util::hex(static_cast<uint64_t>(mask)) + " (" +
               spec::RuleTable::builtin().mask_names(static_cast<spec::Mask>(mask)) + ")";
  }

  void post_receives() {
    post_bringup_receives(qp(), step_.count);
    message_ = std::to_string(step_.count) + " receives";
  }

  rdma_conn_param conn_param(const std::string& data, bool ud) {
    rdma_conn_param p{};
    data_ = data;
    if (end().exchange_only) {
      exchange_ = encode_exchange(end(), host().held);
      p.private_data = exchange_.data();
      p.private_data_len = static_cast<uint8_t>(exchange_.size());
    } else if (!data_.empty()) {
      p.private_data = data_.c_str();
      p.private_data_len = static_cast<uint8_t>(data_.size() + 1);
    }
    // UC has no reads, atomics or retries: all four stay 0 (with responder_resources the CM's
    // INIT would grant remote read and atomic access too).
    if (!ud && end().type == spec::QpType::RC) {
      p.responder_resources = 1;
      p.initiator_depth = 1;
      p.retry_count = 7;
      p.rnr_retry_count = 7;
    }
    p.qp_num = qp().qp->get()->qp_num;
    return p;
  }

  // An external tool may start listening after qpo connects: its host's CM answers REJECTED
  // with reason 8 (invalid service ID: no listener on the port) until it does. qpo tries again
  // on a fresh id (a rejected id cannot connect again) every 200 ms until the phase timeout.
  // A UD tool's host answers the SIDR request with UNREACHABLE, status 1 (IB_SIDR_UNSUPPORTED).
  static constexpr int kNoListener = 8;     // IB_CM_REJ_INVALID_SERVICE_ID
  static constexpr int kNoUdListener = 1;   // IB_SIDR_UNSUPPORTED
  cm::Event connect_external(rdma_conn_param& p, bool ud) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms());
    auto left = [&] {
      return static_cast<int>(std::max<long long>(
          1, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count()));
    };
    for (int tries = 1;; ++tries) {
      if (rdma_connect(id(key()), &p) != 0) throw verbs::VerbsError("rdma_connect", step_.object, errno);
      try {
        auto e = await(id(key()), ud ? RDMA_CM_EVENT_ESTABLISHED : RDMA_CM_EVENT_CONNECT_RESPONSE, left());
        retried_ = tries - 1;
        return e;
      } catch (const cm::Unexpected& u) {
        const auto& got = u.got();
        bool no_listener = got && (ud ? got->type == RDMA_CM_EVENT_UNREACHABLE && got->status == kNoUdListener
                                      : got->type == RDMA_CM_EVENT_REJECTED && got->status == kNoListener);
        if (!no_listener) throw;
        if (std::chrono::steady_clock::now() + std::chrono::milliseconds(200) >= deadline)
          throw std::runtime_error(std::string(u.what()) + ": nothing listened on " + end().address + ":" +
                                   std::to_string(end().port) + " in " + std::to_string(tries) + " tries (is the tool running there?)");
      }
      for (int i = 0; i < 4 && !stop_flag(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      // The rejected id goes; nothing of it may stay among the events kept for later.
      rdma_cm_id* old = id(key());
      auto& kept = host().pending;
      kept.erase(std::remove_if(kept.begin(), kept.end(), [&](const cm::Event& e) { return e.id == old; }), kept.end());
      host().ids.at(key())->replace(cm::Id(host().channel->channel(), ud ? RDMA_PS_UDP : RDMA_PS_TCP, step_.object));
      resolve_addr_on(id(key()), std::min(left(), 60000), left());
      resolve_route_on(id(key()), std::min(left(), 60000), left());
    }
  }

  void connect() {
    const auto& s = end();
    bool ud = s.type == spec::QpType::UD;
    auto p = conn_param(s.private_data, ud);
    if (s.external && step_.expect.empty()) {
      auto e = connect_external(p, ud);
      message_ += " (peer QP " + std::to_string(e.qp_num) + (ud ? ", qkey " + util::hex(e.qkey) : std::string()) +
                  ", external '" + s.peer + "')";
      if (retried_)
        message_ += "; tried again after " + std::to_string(retried_) + (ud ? " UNREACHABLE" : " REJECTED") +
                    " while nothing listened";
      if (ud) external_ud_peer(e);
      return;
    }
    if (rdma_connect(id(key()), &p) != 0) throw verbs::VerbsError("rdma_connect", step_.object, errno);
    auto e = await(id(key()), ud ? RDMA_CM_EVENT_ESTABLISHED : RDMA_CM_EVENT_CONNECT_RESPONSE);
    if (s.exchange_only) return take_exchange(e);
    message_ += " (peer QP " + std::to_string(e.qp_num) + (ud ? ", qkey " + util::hex(e.qkey) : std::string()) + ")";
    if (!ud || s.connect.empty()) return;
    // UD: what the CM says about the peer is what the sends use (the directory had the QPN
    // already; the qkey is the CM's, RDMA_UDP_QKEY).
    auto it = st_.dir.qps.find(s.connect_id);
    if (it == st_.dir.qps.end()) throw std::runtime_error("peer '" + s.connect + "' is not in the directory");
    if (it->second.qpn != e.qp_num)
      throw std::runtime_error("rdma_cm names peer QP " + std::to_string(e.qp_num) + ", but '" + s.connect +
                               "' published " + std::to_string(it->second.qpn));
    it->second.qkey = e.qkey;
  }

  // A UD tool (udaddy): how to reach it goes into the directory under the external's name, as a
  // peer's published values would (exec's endpoint makes its address handle from them). Active:
  // the SIDR reply's QP number, qkey and address. Passive: the address the request came from and
  // the CM's qkey (the tool's QP has it too); its QP number comes in its first message.
  void external_ud_peer(const cm::Event& e) {
    RemoteQp v;
    v.host = "external " + end().peer;
    v.type = "UD";
    if (e.type == RDMA_CM_EVENT_ESTABLISHED) {
      v.qpn = e.qp_num;
      v.qkey = e.qkey;
      v.lid = e.ah_attr.dlid;
      std::memcpy(v.gid.data(), e.ah_attr.grh.dgid.raw, 16);
    } else {
      v.qkey = RDMA_UDP_QKEY;
      if (!cm::peer_gid(e.id, v.gid.data()))
        throw std::runtime_error("the request from " + cm::peer_address(e.id) + " has no IP address to answer at");
      static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      if (std::memcmp(v.gid.data(), kMapped, sizeof kMapped) != 0)  // Q561 refuses what the scenario can say
        throw std::runtime_error("the request came from IPv6 address " + cm::peer_address(e.id) +
                                 ": qpo answers UD tools over IPv4 only, for now (its GID is the device's IPv4-mapped one)");
    }
    st_.dir.qps.insert_or_assign(end().peer_id, v);
  }

  // The peer's connect request. A request from anyone else (a stray rdma_cm client, another
  // QP) is answered with rdma_reject and named in the step's line, and the wait goes on until
  // the same deadline (cm/peer_check.h says what identifies the peer).
  void wait_request() {
    const auto peer = expected_peer();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms());
    if (end().perftest_sync >= 0) {  // perftest -R: the tool connects its test QP once it has qpo's keys
      std::string why;
      if (!st_.externals || !st_.externals->answer_sync(end().perftest_sync, deadline, &why))
        throw std::runtime_error("answering the tool's sync: " + (why.empty() ? std::string("no exchange with the tool") : why));
    }
    std::vector<std::string> strangers;
    auto rejected = [&] {
      std::string out = "rejected " + std::to_string(strangers.size()) + " connect request" +
                        (strangers.size() > 1 ? "s" : "") + " not from " + peer.name + ": ";
      for (size_t i = 0; i < strangers.size(); ++i) out += (i ? "; " : "") + strangers[i];
      return out;
    };
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      std::optional<cm::Event> got;
      try {
        got = await(id(listener_key()), RDMA_CM_EVENT_CONNECT_REQUEST, static_cast<int>(std::max<long long>(left, 1)));
      } catch (const std::exception& x) {
        if (strangers.empty()) throw;
        throw std::runtime_error(std::string(x.what()) + " (" + rejected() + ")");
      }
      std::string why =
          cm::not_the_peer(peer, cm::ConnectRequest{got->qp_num, got->ud, got->private_data, cm::peer_address(got->id)});
      if (why.empty()) {
        host().ids[key()] = st_.own<IdResource>(step_.object, cm::Id(got->id, step_.object));
        if (end().exchange_only) take_exchange(*got);
        if (end().external) message_ += " from " + cm::peer_address(got->id) + " (external '" + end().peer + "')";
        if (end().external && end().type == spec::QpType::UD) external_ud_peer(*got);
        if (!strangers.empty()) message_ += "; " + rejected();
        return;
      }
      strangers.push_back(reject_stranger(*got, peer.name, why));
    }
  }

  // What identifies this listener's peer: its published QP number, the private data its
  // scenario gives it, or the size of its exchange.
  cm::ExpectedPeer expected_peer() const {
    const auto& cm = end();
    cm::ExpectedPeer p;
    p.name = cm.peer;
    if (cm.peer.empty()) return p;
    if (cm.external) {  // a tool: only its address can say who it is
      if (!cm.peer_from.empty()) p.address = cm.peer_from;
      return p;
    }
    if (cm.exchange_only) {
      p.exchange_bytes = cm.peer_exchange_bytes;
      return p;
    }
    if (auto it = st_.dir.qps.find(cm.peer_id); it != st_.dir.qps.end()) p.qpn = it->second.qpn;
    if (!cm.peer_private_data.empty()) p.private_data = cm.peer_private_data;
    return p;
  }

  // rdma_reject with private data saying whom the listener waits for, then the request's id
  // goes. Returns the stranger's description for the step's line (a failed reject too: the
  // destroyed id ends the request either way).
  std::string reject_stranger(const cm::Event& e, const std::string& peer, const std::string& why) {
    cm::Id stray(e.id, step_.object + " (a stranger's request)");
    std::string who = "from " + cm::peer_address(e.id) + " (" + why + ")";
    std::string text = cm::stranger_reject_text(peer, step_.object);
    if (rdma_reject(stray.get(), text.c_str(), static_cast<uint8_t>(text.size() + 1)) != 0)
      return who + ", rdma_reject failed: " + verbs::errno_name(errno);
    return who;
  }

  // exchange_only: the peer's values from the event's private data into the directory, and
  // this QP's own (held from the agents) back beside them: the RTR's 'peer' reads them there.
  void take_exchange(const cm::Event& e) {
    const auto& s = end();
    if (s.peer.empty()) throw std::runtime_error("QP '" + s.qp + "' has no peer to take an exchange from");
    std::string got = decode_exchange(s, e.private_data, st_.dir);
    auto own = host().held.qps.find(s.qp_id);
    if (own != host().held.qps.end()) st_.dir.qps.insert_or_assign(own->first, own->second);
    message_ = e.name() + " (" + s.peer + "'s exchange: " + got + ")";
  }

  void accept() {
    const auto& s = end();
    bool ud = s.type == spec::QpType::UD;
    auto p = conn_param(s.private_data, ud);
    if (rdma_accept(id(key()), &p) != 0) throw verbs::VerbsError("rdma_accept", step_.object, errno);
    if (!ud) await(id(key()), RDMA_CM_EVENT_ESTABLISHED);
  }

  void reject() {
    if (!end().reject) throw std::runtime_error("internal error: a reject step for a QP that does not reject");
    const auto& r = *end().reject;
    if (rdma_reject(id(key()), r.c_str(), static_cast<uint8_t>(r.size() + 1)) != 0)
      throw verbs::VerbsError("rdma_reject", step_.object, errno);
    message_ = "private data '" + r + "'";
  }

  void establish() {
    if (rdma_establish(id(key())) != 0) throw verbs::VerbsError("rdma_establish", step_.object, errno);
  }

  // Active (and any side of an external tool's connection): DREQ, then the DREP's
  // DISCONNECTED. Passive: the DREQ's DISCONNECTED, then rdma_disconnect answers it (the DREP;
  // without it the active side waits out the CM's timeout).
  void disconnect() {
    bool active = end().disconnects_first();
    if (active && rdma_disconnect(id(key())) != 0) throw verbs::VerbsError("rdma_disconnect", step_.object, errno);
    await(id(key()), RDMA_CM_EVENT_DISCONNECTED);
    if (!active && rdma_disconnect(id(key())) != 0) throw verbs::VerbsError("rdma_disconnect", step_.object, errno);
  }

  RunState& st_;
  report::RunReport& log_;
  const plan::Plan& plan_;
  const RunOptions& o_;
  const plan::Step& step_;
  const plan::CmEnd* end_;  // null only for the channel step
  std::string detail_, message_, data_;
  std::vector<unsigned char> exchange_;
  bool expected_ = false;
  int retried_ = 0;  // connect_external: connects rejected while the tool was not listening yet
};

}  // namespace

void hold_cm_exchange(RunState& st, const plan::Plan& plan, Directory& mine) {
  for (const auto& e : plan.cm_ends) {
    if (!e.exchange_only || e.host != st.host) continue;
    auto it = mine.qps.find(e.qp_id);
    if (it == mine.qps.end()) continue;  // not created
    if (!st.cm) st.cm = std::make_shared<CmHost>();
    auto& held = st.cm->held;
    held.qps.insert_or_assign(e.qp_id, std::move(it->second));
    mine.qps.erase(it);
    if (auto m = mine.mrs.find(slots_key(e.qp_id)); m != mine.mrs.end()) {
      held.mrs.insert_or_assign(m->first, std::move(m->second));
      mine.mrs.erase(m);
    }
    for (const auto& key : e.carried_keys) {
      auto m = mine.mrs.find(key);
      if (m == mine.mrs.end()) continue;
      held.mrs.insert_or_assign(m->first, m->second);
      // It stays in the agents' exchange too when a workload of another QP aims at it.
      const auto& kept = e.carried_and_published_keys;
      if (std::find(kept.begin(), kept.end(), key) == kept.end()) mine.mrs.erase(m);
    }
  }
}

bool is_cm_step(const plan::Step& step) {
  switch (step.kind) {
    case StepKind::CmChannel:
    case StepKind::CmCreateId:
    case StepKind::CmListen:
    case StepKind::CmResolveAddr:
    case StepKind::CmResolveRoute:
    case StepKind::CmModify:
    case StepKind::CmConnect:
    case StepKind::CmWaitRequest:
    case StepKind::CmAccept:
    case StepKind::CmReject:
    case StepKind::CmEstablish:
    case StepKind::CmDisconnect: return true;
    case StepKind::PostRecv: return step.stage >= 0;
    default: return false;
  }
}

bool run_cm_step(RunState& st, report::RunReport& log, const plan::Plan& plan, const RunOptions& o, const plan::Step& step) {
  return CmRunner(st, log, plan, o, step).run();
}

}  // namespace qpo::exec
