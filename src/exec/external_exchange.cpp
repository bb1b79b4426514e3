#include "exec/external_exchange.h"

#include <infiniband/verbs.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "exec/directory_names.h"
#include "exec/steps.h"
#include "interop/pingpong_message.h"
#include "report/step_line.h"
#include "util/input_file.h"
#include "util/json_reader.h"
#include "util/json_writer.h"
#include "util/output_file.h"
#include "util/strings.h"
#include "verbs/device.h"

namespace qpo::exec {

namespace {

using interop::PingpongAddress;

constexpr uint32_t kPingpongQkey = 0x11111111;  // ud_pingpong.c: fixed, both ways

interop::Deadline deadline_in(int timeout_ms) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
}

// What the QP published in the hosts' exchange: the values the tool needs from it.
PingpongAddress own_address(const RunState& st, plan::QpId qp) {
  PingpongAddress a;
  if (auto it = st.dir.qps.find(qp); it != st.dir.qps.end()) {
    a.lid = it->second.lid;
    a.qpn = it->second.qpn;
    a.psn = it->second.sq_psn;
    a.gid = it->second.gid;
  }
  return a;
}

uint8_t mtu_enum(uint32_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return IBV_MTU_1024;
  }
}

// The directory's key of the tool's buffer.
MrKey external_key(const RunState& st, const plan::ExternalPeer& e) {
  return {MrKey::Kind::External, static_cast<uint32_t>(e.peer_id - st.plan->qp_count())};
}

// The tool's values as the directory holds a peer's: what `peer` resolves to at RTR.
void record_peer(RunState& st, const plan::ExternalPeer& e, const PingpongAddress& a) {
  RemoteQp r;
  r.host = "external " + e.name;
  r.type = e.ud ? "UD" : "RC";
  r.qkey = kPingpongQkey;  // what ibv_ud_pingpong's datagrams must carry (unused on RC)
  r.qpn = a.qpn;
  r.sq_psn = a.psn;
  r.lid = a.lid;
  r.gid = a.gid;
  r.active_mtu = mtu_enum(e.mtu);
  st.dir.qps[e.peer_id] = r;
}

report::StepResult line(const RunState& st, const plan::Step& step, double micros) {
  auto r = report::step_line(st.host, "exchange", step.verb.str(), step.object, report::StepStatus::Ok, "");
  r.plan_step = step.index;
  r.micros = micros;
  return r;
}

bool failed(report::RunReport& log, report::StepResult r, const plan::ExternalPeer& e, const std::string& why) {
  r.status = report::StepStatus::Failed;
  r.message += why;  // after what the step said already (the connections it refused)
  log.add(std::move(r));
  log.fail("external peer '" + e.name + "' (QP " + e.qp + "): " + why);
  return false;
}

// exchange values: the QP's own values as JSON, the keys the peer's are read with.
std::string own_values_json(const RunState& st, const plan::ExternalPeer& e) {
  util::JsonWriter j(/*pretty=*/false);  // one line: what a setup script reads from stdout
  j.begin_object();
  if (auto it = st.dir.qps.find(e.qp_id); it != st.dir.qps.end()) {
    const auto& q = it->second;
    ibv_gid g;
    std::copy(q.gid.begin(), q.gid.end(), g.raw);
    j.field("qp", e.qp).field("qpn", uint64_t{q.qpn}).field("psn", uint64_t{q.sq_psn}).field("lid", uint64_t{q.lid});
    j.field("gid", verbs::gid_text(g)).field("qkey", uint64_t{q.qkey}).field("mtu", uint64_t{128u << q.active_mtu});
  }
  if (auto m = st.dir.mrs.find(slots_key(e.qp_id)); m != st.dir.mrs.end()) {
    j.key("mr").begin_object();
    j.field("addr", m->second.addr).field("rkey", uint64_t{m->second.rkey}).field("length", m->second.length);
    j.end_object();
  }
  j.end_object();
  return j.str();
}

// A number of the peer's values file: a JSON number, or a string in C notation ("0x11").
std::optional<uint64_t> json_uint(const util::json::Value* v) {
  if (!v) return std::nullopt;
  std::string text = v->is(util::json::Kind::Number) ? v->text : v->is(util::json::Kind::String) ? v->text : "";
  if (text.empty() || text[0] == '-') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(text.c_str(), &end, 0);
  if (errno || !end || *end) return std::nullopt;
  return n;
}

// The peer's values from the file its setup wrote; nullopt with `why` when they are not there.
std::optional<util::PeerValues> parse_values(const std::string& text, std::string* why) {
  std::string err;
  auto doc = util::json::parse(text, &err);
  if (!doc || !doc->is(util::json::Kind::Object)) {
    *why = doc ? "not a JSON object" : err;
    return std::nullopt;
  }
  util::PeerValues g;
  auto qpn = json_uint(doc->find("qpn"));
  if (!qpn || *qpn > 0xFFFFFF) {
    *why = "no qpn (a QP number up to 0xffffff)";
    return std::nullopt;
  }
  g.qpn = static_cast<uint32_t>(*qpn);
  g.psn = static_cast<uint32_t>(json_uint(doc->find("psn")).value_or(0) & 0xFFFFFF);
  g.lid = static_cast<uint16_t>(json_uint(doc->find("lid")).value_or(0));
  g.qkey = static_cast<uint32_t>(json_uint(doc->find("qkey")).value_or(0x11111111));
  g.mtu = static_cast<uint32_t>(json_uint(doc->find("mtu")).value_or(1024));
  if (const auto* gid = doc->find("gid"); gid && gid->is(util::json::Kind::String)) g.gid = gid->text;
  if (const auto* mr = doc->find("mr"); mr && mr->is(util::json::Kind::Object)) {
    auto addr = json_uint(mr->find("addr")), rkey = json_uint(mr->find("rkey")), length = json_uint(mr->find("length"));
    if (!addr || !rkey || !length) {
      *why = "its mr needs addr, rkey and length";
      return std::nullopt;
    }
    g.has_mr = true;
    g.mr_addr = *addr;
    g.mr_rkey = static_cast<uint32_t>(*rkey);
    g.mr_length = *length;
  }
  return g;
}

bool gid_of(const std::string& text, std::array<uint8_t, 16>* out) {
  unsigned char raw[16] = {};
  if (inet_pton(AF_INET6, text.c_str(), raw) == 1) {
    std::copy(raw, raw + 16, out->begin());
    return true;
  }
  unsigned char v4[4];
  if (inet_pton(AF_INET, text.c_str(), v4) != 1) return false;
  out->fill(0);
  (*out)[10] = (*out)[11] = 0xFF;
  std::copy(v4, v4 + 4, out->begin() + 12);
  return true;
}

}  // namespace

bool ExternalExchanges::given_exchange(RunState& st, report::RunReport& log, const plan::Step&, const plan::ExternalPeer& e,
                                       interop::Deadline deadline, report::StepResult r, const StepTimer& timer) {
  std::string why;
  if (!e.own_values.empty()) {
    std::string json = own_values_json(st, e);
    if (e.own_values == "-") {
      FILE* out = values_to_stdout_ ? stdout : stderr;  // never into --format json or an agent's protocol
      std::fprintf(out, "qpo values %s: %s\n", e.qp.c_str(), json.c_str());  // one line a setup script can read
      std::fflush(out);
    } else if (!util::write_output_file(e.own_values, json + "\n", &why)) {
      return failed(log, std::move(r), e, "writing QP " + e.qp + "'s values: " + why);
    }
    r.message = "wrote QP " + e.qp + "'s values to " +
                (e.own_values != "-" ? e.own_values : values_to_stdout_ ? std::string("stdout") : std::string("stderr")) + "; ";
  }
  std::optional<util::PeerValues> v = e.values;
  if (!v) {
    // The peer's setup may write its file only after reading qpo's: wait for it to appear whole.
    for (;;) {
      auto file = util::read_input_file(e.values_file, util::InputKind{"values file", 1 << 16});
      if (file) {
        v = parse_values(file.text, &why);
        if (v) break;
        why = e.values_file + ": " + why;
      } else {
        why = file.error;
      }
      if (std::chrono::steady_clock::now() >= deadline || stop_flag().load())
        return failed(log, std::move(r), e, "no peer values: " + why);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  RemoteQp q;
  q.host = "external " + e.name;
  q.type = e.ud ? "UD" : "RC";
  q.qpn = v->qpn;
  q.sq_psn = v->psn;
  q.lid = v->lid;
  q.qkey = v->qkey;
  if (!v->gid.empty() && !gid_of(v->gid, &q.gid)) return failed(log, std::move(r), e, "'" + v->gid + "' is not a GID");
  q.active_mtu = mtu_enum(v->mtu);
  st.dir.qps[e.peer_id] = q;
  if (v->has_mr) st.dir.mrs[external_key(st, e)] = RemoteMr{"external " + e.name, v->mr_addr, v->mr_length, v->mr_rkey};
  r.micros = timer.micros();
  r.message += std::string(e.values ? "the peer's values as given: " : "the peer's values from " + e.values_file + ": ") +
               "qpn " + util::hex(v->qpn) + ", psn " + util::hex(v->psn) + (v->gid.empty() ? "" : ", gid " + v->gid) +
               (v->has_mr ? ", buffer rkey " + util::hex(v->mr_rkey) : "");
  log.add(std::move(r));
  return true;
}

namespace {
}  // namespace

void ExternalExchanges::listen(const RunState& st, const plan::HostPlan& host) {
  for (const auto& step : host.steps) {
    if (step.kind != plan::StepKind::ExternalExchange) continue;
    int index = step.extra().external;
    const auto& e = st.plan->externals.at(static_cast<size_t>(index));
    if (!e.qpo_listens()) continue;
    std::string why;
    if (e.test_over_cm) {  // -R: the tool's client connects its control QP through rdma_cm
      if (auto l = cm::PerftestControlListener::open(e.port, &why)) cm_listening_.emplace(index, std::move(l));
      else not_listening_[index] = why;
    } else if (auto l = interop::TcpListener::open(e.port, &why)) {
      listening_.emplace(index, std::move(*l));
    } else {
      not_listening_[index] = why;
    }
  }
}

bool ExternalExchanges::exchange(RunState& st, report::RunReport& log, const plan::Step& step, int timeout_ms) {
  const auto& e = st.plan->externals.at(static_cast<size_t>(step.extra().external));
  log.current_step = step.index;
  StepTimer timer;
  auto deadline = deadline_in(timeout_ms);
  std::string why;
  std::string mine = interop::format_pingpong_message(own_address(st, e.qp_id));
  auto r = line(st, step, 0);
  std::optional<interop::TcpPeer> tool;
  std::vector<std::string> refused;  // connections not from the tool's address (`from:`)
  int index = step.extra().external;
  if (e.given()) return given_exchange(st, log, step, e, deadline, std::move(r), timer);
  if (e.test_over_cm) return perftest_cm_exchange(st, log, step, e, deadline, std::move(r), timer);
  if (!e.qpo_listens()) {
    tool = interop::TcpPeer::dial(e.server, e.port, deadline, &why);
  } else if (auto l = listening_.find(index); l != listening_.end()) {
    tool = l->second.accept_one(deadline, &why, e.from, &refused);
    listening_.erase(l);
  } else {
    auto reason = not_listening_.find(index);
    why = reason != not_listening_.end() ? reason->second : "no listener on port " + std::to_string(e.port);
  }
  if (!tool) return failed(log, std::move(r), e, why);
  if (!refused.empty()) {  // said in the step's line, whatever the exchange does next
    r.message = "refused";
    for (const auto& who : refused) r.message += " " + who;
    r.message += " (not from " + e.from + "); ";
  }
  if (e.perftest())
    return perftest_exchange(st, log, step, e, std::make_unique<interop::TcpPipe>(std::move(*tool)), deadline, std::move(r), timer);
  // The client writes first; the server answers once its QP is at RTR (reply()).
  if (!e.qpo_listens() && !tool->send(mine, &why)) return failed(log, std::move(r), e, why);
  auto theirs = tool->receive(interop::kPingpongMessageBytes, deadline, &why);
  if (!theirs) return failed(log, std::move(r), e, why);
  auto address = interop::parse_pingpong_message(*theirs, &why);
  if (!address) return failed(log, std::move(r), e, tool->remote() + " sent no ibv_pingpong address: " + why);
  if (!e.qpo_listens() && !tool->send(interop::kPingpongDone, &why)) return failed(log, std::move(r), e, why);
  record_peer(st, e, *address);
  r.micros = timer.micros();
  r.message += (e.qpo_listens() ? "accepted " : "connected to ") + tool->remote() + "; the tool: " +
              interop::describe(*address);
  log.add(std::move(r));
  if (e.qpo_listens()) accepted_.emplace(index, std::move(*tool));
  return true;
}

bool ExternalExchanges::perftest_cm_exchange(RunState& st, report::RunReport& log, const plan::Step& step, const plan::ExternalPeer& e,
                                             interop::Deadline deadline, report::StepResult r, const StepTimer& timer) {
  std::string why;
  std::vector<std::string> refused;
  int index = step.extra().external;
  std::unique_ptr<cm::PerftestControl> tool;
  if (!e.qpo_listens()) {
    tool = cm::PerftestControl::dial(e.server, e.port, deadline, &why);
  } else if (auto l = cm_listening_.find(index); l != cm_listening_.end()) {
    tool = l->second->accept_one(deadline, &why, e.from, &refused);
    cm_listening_.erase(l);  // the port goes to the test QPs' listener (the CM stage), as the tool's does
  } else {
    auto reason = not_listening_.find(index);
    why = reason != not_listening_.end() ? reason->second : "no listener on port " + std::to_string(e.port);
  }
  if (!refused.empty()) {
    r.message = "rejected";
    for (const auto& who : refused) r.message += " " + who;
    r.message += " (not from " + e.from + "); ";
  }
  if (!tool) return failed(log, std::move(r), e, why);
  return perftest_exchange(st, log, step, e, std::move(tool), deadline, std::move(r), timer);
}

bool ExternalExchanges::perftest_exchange(RunState& st, report::RunReport& log, const plan::Step& step, const plan::ExternalPeer& e,
                                          std::unique_ptr<interop::PerftestPipe> tool, interop::Deadline deadline,
                                          report::StepResult r, const StepTimer& timer) {
  std::string why, remote = tool->remote();
  auto slots = st.dir.mrs.find(slots_key(e.qp_id));
  auto self = st.dir.qps.find(e.qp_id);
  if (slots == st.dir.mrs.end() || self == st.dir.qps.end())  // bring-up publishes both; a guard
    return failed(log, std::move(r), e, "QP " + e.qp + " or its slot buffer was not published");
  // qpo offers the smaller of the external's mtu and its own port's: the tool takes the
  // smaller of that and its own, and so must qpo's path_mtu.
  int offered = mtu_enum(e.mtu);
  if (self->second.active_mtu) offered = std::min<int>(offered, self->second.active_mtu);
  interop::PerftestTalk talk(std::move(tool), e.qpo_initiates());
  auto opening = talk.opening(offered, deadline, &why);
  if (!opening) return failed(log, std::move(r), e, why);
  bool serves_buffer = e.qpo_listens() && !e.latency && (e.op == util::Op::Write || e.op == util::Op::Read);
  // perftest's client moves its target across the cycle buffer when a message fits twice in it.
  if (serves_buffer && e.size <= opening->cycle_buffer / 2 && opening->cycle_buffer > slots->second.length)
    return failed(log, std::move(r), e,
                  "the tool aims its " + std::string(e.op == util::Op::Read ? "READs" : "WRITEs") + " over its cycle buffer of " +
                      std::to_string(opening->cycle_buffer) + " bytes (its page size), more than qpo.slots." + e.qp + "'s " +
                      std::to_string(slots->second.length) + " bytes: give a size above half its cycle buffer");
  interop::PerftestKeys mine;
  auto own = own_address(st, e.qp_id);
  mine.lid = own.lid;
  mine.qpn = own.qpn;
  mine.psn = own.psn;
  mine.gid = own.gid;
  mine.out_reads = static_cast<uint16_t>(e.out_reads);
  mine.vaddr = slots->second.addr;
  mine.rkey = slots->second.rkey;
  std::optional<interop::PerftestKeys> theirs;
  // -R as server: the tool's test QP connects as soon as qpo answers this sync, and its client
  // does not survive a refusal: qpo answers once its listener is up (answer_sync).
  bool hold = e.test_over_cm && e.qpo_listens();
  for (int i = 0; i < e.keys_in_exchange() && !hold; ++i)  // write_lat: a sync, then the keys (the same values)
    if (!(theirs = talk.keys(mine, deadline, &why))) return failed(log, std::move(r), e, why);
  if (hold && !talk.read_keys(deadline, &why)) return failed(log, std::move(r), e, why);
  if (e.test_over_cm) {
    // -R: that was the sync before the CM connects the test QPs; the tool's keys are zeros
    // until then, its QP and buffer come in the hand-shakes after (the workload's start).
    r.micros = timer.micros();
    r.message += (e.qpo_listens() ? "accepted " : "connected to ") + remote + "; " + e.tool() + " " + opening->version +
                 " over its rdma_cm control connection; " +
                 (hold ? "its sync read, qpo answers once it listens for the test QP on port "
                       : "synced before the test QPs connect on port ") + std::to_string(e.port);
    log.add(std::move(r));
    perftest_.emplace(step.extra().external, Perftest{std::move(talk), mine, hold});
    return true;
  }
  // qpo's READs at the tool: no more at once than the tool's QP accepts (its out_reads).
  if (e.qpo_initiates() && e.op == util::Op::Read && !e.latency && e.max_rd_atomic > theirs->out_reads)
    return failed(log, std::move(r), e,
                  "the tool accepts " + std::to_string(theirs->out_reads) + " RDMA READs at once (its out_reads), QP " +
                      e.qp + "'s max_rd_atomic is " + std::to_string(e.max_rd_atomic) + ": give max_rd_atomic: " +
                      std::to_string(theirs->out_reads) + " or run the tool with -o " + std::to_string(e.max_rd_atomic));
  // Both sides take the smaller MTU (check_mtu); the tool's own unless it sent none it knows.
  int mtu = std::min(offered, opening->mtu.value_or(offered));
  RemoteQp q;
  q.host = "external " + e.name;
  q.type = "RC";
  q.qpn = theirs->qpn;
  q.sq_psn = theirs->psn;
  q.lid = theirs->lid;
  q.gid = theirs->gid;
  q.active_mtu = static_cast<uint8_t>(mtu);
  st.dir.qps[e.peer_id] = q;
  // The tool's buffer, where qpo's client writes or reads: `size` bytes from its vaddr (the
  // tool's own -s is what it holds; the check's note asks for the same size).
  st.dir.mrs[external_key(st, e)] = RemoteMr{"external " + e.name, theirs->vaddr, e.size, theirs->rkey};
  r.micros = timer.micros();
  r.message += (e.qpo_listens() ? "accepted " : "connected to ") + remote + "; " + e.tool() + " " + opening->version +
              ", MTU " + std::to_string(128 << mtu) + "; the tool: " + interop::describe(*theirs);
  log.add(std::move(r));
  perftest_.emplace(step.extra().external, Perftest{std::move(talk), mine});
  return true;
}

bool ExternalExchanges::answer_sync(int index, interop::Deadline deadline, std::string* why) {
  auto it = perftest_.find(index);
  if (it == perftest_.end()) {
    *why = "no perftest conversation with the tool to answer";
    return false;
  }
  if (!it->second.sync_held) return true;
  it->second.sync_held = false;
  return it->second.talk.answer_keys(it->second.mine, deadline, why);
}

std::optional<ExternalExchanges::Perftest> ExternalExchanges::take_perftest(int index) {
  auto it = perftest_.find(index);
  if (it == perftest_.end()) return std::nullopt;
  Perftest p = std::move(it->second);
  perftest_.erase(it);
  return p;
}

bool ExternalExchanges::reply(RunState& st, report::RunReport& log, const plan::Step& step, int timeout_ms) {
  const auto& e = st.plan->externals.at(static_cast<size_t>(step.extra().external));
  log.current_step = step.index;
  StepTimer timer;
  auto r = line(st, step, 0);
  if (e.perftest()) {
    auto it = perftest_.find(step.extra().external);
    std::string why;
    if (it == perftest_.end()) return failed(log, std::move(r), e, "no connection with the tool");
    auto deadline = deadline_in(timeout_ms);  // one for the step, as declared_waits counts it
    for (int i = 0; i < 2; ++i)
      if (!it->second.talk.keys(it->second.mine, deadline, &why)) return failed(log, std::move(r), e, why);
    r.micros = timer.micros();
    r.message = "keys twice each way: both sides connected";
    log.add(std::move(r));
    return true;
  }
  auto it = accepted_.find(step.extra().external);
  std::string why;
  if (it == accepted_.end()) return failed(log, std::move(r), e, "no connection from the tool to answer");
  auto own = own_address(st, e.qp_id);
  if (!it->second.send(interop::format_pingpong_message(own), &why)) return failed(log, std::move(r), e, why);
  auto done = it->second.receive(interop::kPingpongDone.size(), deadline_in(timeout_ms), &why);
  if (!done) return failed(log, std::move(r), e, why);
  r.micros = timer.micros();
  r.message = "sent " + interop::describe(own) + "; the tool said done";
  log.add(std::move(r));
  accepted_.erase(it);  // the tool closes its end now; so does qpo
  return true;
}

}  // namespace qpo::exec
