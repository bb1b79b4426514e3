#include "exec/wire_capture.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "exec/device_counters.h"
#include "exec/steps.h"
#include "report/step_line.h"
#include "verbs/qp_control.h"
#include "wire/analyze.h"
#include "wire/bth_opcodes.h"
#include "wire/listing.h"

namespace qpo::exec {

std::string capture_path(const std::string& dir, const std::string& scenario, const std::string& host, const std::string& netdev) {
  return (dir.empty() ? std::string(".") : dir) + "/" + scenario + "." + host + "." + netdev + ".pcap";
}

std::string wire_unsupported_reason(const RunState& st, const report::RunReport& log, const plan::Plan& plan) {
  auto one_device = [&](const std::string& qp, plan::QpId qp_id, const std::string& peer, plan::ObjectId peer_id) -> std::string {
    auto a = st.dir.qps.find(qp_id), b = st.dir.qps.find(peer_id);
    if (a == st.dir.qps.end() || b == st.dir.qps.end() || a->second.gid != b->second.gid) return "";
    return qp + " and " + peer + " are on one device (" + log.device +
           "): their packets never reach a netdev, where qpo captures them and packet events act (--local runs every "
           "host on this machine's one device; run without --local: in the lab each host gets its own guest)";
  };
  for (const auto& e : plan.packet_events)
    if (e.host == st.host)
      if (auto why = one_device(e.qp, e.qp_id, e.receiver, e.receiver_id); !why.empty()) return why;
  for (const auto& e : plan.wire_expects)
    if (e.host == st.host)
      if (auto why = one_device(e.qp, e.qp_id, e.peer, e.peer_id); !why.empty()) return why;
  return "";
}

void WireCaptures::start(RunState& st, report::RunReport& log, const plan::Step& step, const std::string& dir) {
  dir_ = dir;
  if (!dir_.empty()) {
    // On an agent's host the directory is this machine's: made here when missing.
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
  }
  if (dir_.empty()) {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "qpo-capture.XXXXXX").string();
    std::vector<char> tmp(pattern.begin(), pattern.end());
    tmp.push_back('\0');
    if (!mkdtemp(tmp.data())) {
      log.fail("capture: cannot make a temporary directory " + pattern + ": " + std::string(std::strerror(errno)));
      return;
    }
    dir_ = tmp.data();
    temporary_ = true;
  }
  std::set<std::string> netdevs;
  st.devices.for_each([&](plan::ObjectId, const DeviceState& d) { netdevs.insert(netdev_of(d)); });
  for (const auto& netdev : netdevs) {
    std::string path = capture_path(dir_, log.scenario, st.host, netdev);
    files_.push_back(path);
    auto& r = run_step(log, st.host, "setup", step.verb, netdev, "", [&] {
      if (netdev.empty()) throw std::runtime_error("a device's GID has no netdev (sysfs gid_attrs/ndevs)");
      live_.push_back(std::make_unique<wire::LiveCapture>(netdev, path));
    });
    r.plan_step = step.index;
    if (r.status != report::StepStatus::Ok) return;
    r.message = "udp dst port 4791 -> " + (temporary_ ? "a temporary file (give --capture DIR to keep it)" : path);
  }
}

void WireCaptures::stop(RunState& st, report::RunReport& log, const plan::Plan& plan, int end_step) {
  // Every QP the run knows by address and number, this host's and the others' (the directory).
  std::vector<wire::KnownQp> known;
  for (const auto& [id, q] : st.dir.qps) known.push_back({plan.peer_name(id), q.gid, q.qpn});
  for (auto& c : live_) {
    wire::CaptureStats s = c->stop();
    missed_[c->path()] = s.dropped;
    std::string why;
    bool named = wire::write_known_qps(c->path(), known, &why);
    auto status = s.error.empty() && named ? report::StepStatus::Ok : report::StepStatus::Failed;
    std::string message = std::to_string(s.packets) + " packets" + (temporary_ ? "" : " in " + c->path());
    if (s.dropped) message += ", " + std::to_string(s.dropped) + " missed by the kernel (its buffer was full)";
    if (!s.error.empty()) message += "; " + s.error;
    if (!named) message += "; " + why;
    if (status == report::StepStatus::Ok && s.packets == 0) {
      // Not a failure (a run may send nothing), but the usual surprise deserves its reason.
      status = report::StepStatus::Warning;
      message += " (QPs on one Soft-RoCE device exchange packets inside it, never through " + c->netdev() +
                 ": capture QPs on two hosts)";
    }
    auto line = report::step_line(st.host, "teardown", "capture stop", c->netdev(), status, message);
    line.plan_step = end_step;
    log.add(std::move(line));
    if (status == report::StepStatus::Failed) log.fail("capture on " + c->netdev() + ": " + message);
  }
  live_.clear();
  check_expectations(st, log, plan, end_step);
  record_sequences(st, log, plan);
  reads_.clear();
}

const wire::PcapRead& WireCaptures::read(const std::string& path) {
  auto it = reads_.find(path);
  if (it == reads_.end()) it = reads_.emplace(path, wire::read_pcap(path)).first;
  return it->second;
}

void WireCaptures::record_sequences(RunState& st, report::RunReport& log, const plan::Plan& plan) {
  struct Named {
    plan::QpId id = plan::kNoQp;
    std::string peer;
    plan::ObjectId peer_id = plan::kNoObject;
    std::vector<std::string> events;
  };
  std::map<std::string, Named> qps;  // local QP (by name: the report's order) -> its peer and the events on its packets
  for (const auto& e : plan.wire_expects)
    if (e.host == st.host) {
      auto& n = qps[e.qp];
      n.id = e.qp_id;
      n.peer = e.peer;
      n.peer_id = e.peer_id;
    }
  for (const auto& e : plan.packet_events)
    if (st.qps.has(e.qp_id)) {
      auto& n = qps[e.qp];
      n.id = e.qp_id;
      n.peer = e.receiver;
      n.peer_id = e.receiver_id;
      n.events.push_back(plan::describe(e));
    }
  for (const auto& [name, named] : qps) {
    const QpState* q = st.qps.find(named.id);
    if (!q || !q->device) continue;
    const std::string& peer = named.peer;
    const auto& events = named.events;
    auto self = st.dir.qps.find(named.id), other = st.dir.qps.find(named.peer_id);
    if (self == st.dir.qps.end() || other == st.dir.qps.end()) continue;
    const auto& packets = read(capture_path(dir_, log.scenario, st.host, netdev_of(*q->device))).packets;
    report::WireSequence seq{st.host, name, peer, {}, 0, events};
    auto to_peer = [&](const wire::RocePacket& p) { return p.dst == other->second.gid && p.dest_qpn == other->second.qpn; };
    auto to_self = [&](const wire::RocePacket& p) { return p.dst == self->second.gid && p.dest_qpn == self->second.qpn; };
    std::vector<wire::RocePacket> mine;
    for (const auto& p : packets)
      if (to_peer(p) || to_self(p)) mine.push_back(p);
    for (const auto& flow : wire::group_flows(mine))
      for (const auto& l : flow.packets) {
        const auto& p = *l.packet;
        const auto* o = wire::opcode_info(p.opcode);
        std::string note = l.retransmission ? "RETX " + std::to_string(l.transmission - 1) : "";
        if (p.syndrome) note += (note.empty() ? "" : ", ") + wire::syndrome_text(*p.syndrome) + " msn " + std::to_string(p.msn);
        if (p.ecn == 3) note += (note.empty() ? "" : ", ") + std::string("ECN-CE");
        seq.packets.push_back({l.t_us, to_peer(p), o ? std::string(o->name) : "opcode " + std::to_string(p.opcode), p.psn, note});
      }
    // group_flows lists flow by flow: the diagram reads in time, and keeps its first packets
    // of both directions (cut after sorting, or a long run would show requests and no ACK).
    std::stable_sort(seq.packets.begin(), seq.packets.end(), [](const auto& a, const auto& b) { return a.t_us < b.t_us; });
    seq.total = seq.packets.size();
    if (seq.packets.size() > report::WireSequence::kMaxPackets) seq.packets.resize(report::WireSequence::kMaxPackets);
    log.wire.push_back(std::move(seq));
  }
}

WireCaptures::~WireCaptures() {
  for (auto& c : live_) c->stop();  // a run that never reached its CaptureEnd: the files are still closed
  live_.clear();
  if (temporary_) {
    for (const auto& f : files_) {
      std::remove(f.c_str());
      std::remove((f + ".qps.json").c_str());
    }
    rmdir(dir_.c_str());
  }
}

namespace {

std::string us_text(double us) {
  char buf[32];
  if (us >= 1000) std::snprintf(buf, sizeof buf, "%.2f ms", us / 1000);
  else std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

// Whether the median of the measured times is within `factor` of the reference, and the
// times as text. The median, not each: under emulation one send can sit in the guest for
// milliseconds after the device's timer started (seen: a 0.66 ms gap for a 16.8 ms timeout,
// its neighbours 20 ms), and one outlier is the lab's noise, not the device's timer.
bool median_within_factor(std::vector<double> measured, double reference, double factor, std::string* text) {
  for (size_t i = 0; i < measured.size() && i < 8; ++i) *text += (i ? ", " : "") + us_text(measured[i]);
  if (measured.size() > 8) *text += ", ... (" + std::to_string(measured.size()) + ")";
  if (measured.empty()) {
    *text = "none measured";
    return false;
  }
  std::sort(measured.begin(), measured.end());
  double median = measured[measured.size() / 2];
  if (measured.size() % 2 == 0) median = (median + measured[measured.size() / 2 - 1]) / 2;
  *text += " (median " + us_text(median) + ")";
  return median >= reference / factor && median <= reference * factor;
}

}  // namespace

void WireCaptures::check_expectations(RunState& st, report::RunReport& log, const plan::Plan& plan, int end_step) {
  for (const auto& e : plan.wire_expects) {
    if (e.host != st.host) continue;
    const auto& x = e;
    const auto& info = util::wire_fact_info(x.fact);
    auto line = report::step_line(st.host, "teardown", "wire expect", e.qp, plan::describe(e), report::StepStatus::Ok, "");
    line.plan_step = end_step;
    auto fail = [&](const std::string& why) {
      line.status = report::StepStatus::Failed;
      line.message = why;
      log.fail("wire expectation of " + e.qp + ": " + plan::describe(e) + ": " + why);
    };
    if (log.verdict != report::Verdict::Pass) {  // the reason is elsewhere: not judged
      line.status = report::StepStatus::Skipped;
      line.message = "not judged: the run did not pass";
      log.add(std::move(line));
      continue;
    }
    const DeviceState* device = st.devices.find(e.device_id);
    auto self = st.dir.qps.find(e.qp_id), peer = st.dir.qps.find(e.peer_id);
    const QpState* q = st.qps.find(e.qp_id);
    if (!device || self == st.dir.qps.end() || peer == st.dir.qps.end() || !q) {
      fail("the run did not get as far as " + e.qp + " and " + e.peer + " being up");
      log.add(std::move(line));
      continue;
    }
    std::string path = capture_path(dir_, log.scenario, st.host, netdev_of(*device));
    if (uint64_t missed = missed_[path]) {  // a fact from a capture with holes is no fact
      fail("cannot be judged: the capture missed " + std::to_string(missed) + " packets (the kernel's buffer was full)");
      log.add(std::move(line));
      continue;
    }
    const wire::PcapRead& pcap = read(path);
    if (!pcap.error.empty()) {
      fail("cannot read the capture: " + pcap.error);
      log.add(std::move(line));
      continue;
    }
    wire::QpWireFacts f = wire::analyze_requester(pcap.packets, {self->second.gid, self->second.qpn},
                                                  {peer->second.gid, peer->second.qpn});
    uint64_t count = 0;
    switch (x.fact) {
      case util::WireFact::Requests: count = f.requests; break;
      case util::WireFact::Retransmissions: count = f.retransmissions; break;
      case util::WireFact::MaxTransmissions: count = f.max_transmissions; break;
      case util::WireFact::Acks: count = f.acks; break;
      case util::WireFact::Naks: count = f.naks; break;
      case util::WireFact::RnrNaks: count = f.rnr_naks; break;
      case util::WireFact::OtherNaks: count = f.other_naks; break;
      case util::WireFact::PacketsPerMessage: count = f.packets_per_message; break;
      case util::WireFact::EcnMarked: count = f.ecn_marked; break;
      case util::WireFact::Cnps: count = f.cnps; break;
      case util::WireFact::MaxReadsInFlight: count = f.max_reads_in_flight; break;
      default: break;
    }
    if (info.kind == util::WireFactKind::Count) {
      line.message = "measured " + std::to_string(count);
      if (count < x.min || count > x.max) fail("measured " + std::to_string(count) + ", expected " + x.text);
    } else if (x.fact == util::WireFact::GoBackN) {
      bool kept = f.go_back_n_violation.empty();
      std::string naks = std::to_string(f.naks) + " NAKs";
      if (!f.nak_delays_us.empty()) {
        naks += ", each ";
        for (size_t i = 0; i < f.nak_delays_us.size() && i < 4; ++i) naks += (i ? ", " : "") + us_text(f.nak_delays_us[i]);
        naks += " after the lost PSN was first sent";
      }
      line.message = kept ? "kept (" + std::to_string(f.retransmissions) + " retransmitted, " + naks + ")" : f.go_back_n_violation;
      if (kept && x.min == 1 && f.retransmissions == 0)
        fail("not exercised: nothing was retransmitted, so go-back-N had nothing to keep");
      else if (kept != (x.min == 1))
        fail(kept ? "go-back-N was kept, expected a violation" : f.go_back_n_violation);
    } else if (x.fact == util::WireFact::RetransmitTimeout) {
      ibv_qp_attr attr{};
      int err = q->qp && q->qp->get() ? verbs::query_qp(q->qp->get(), attr, IBV_QP_TIMEOUT) : ENODEV;
      double t = err ? 0 : wire::ack_timeout_us(attr.timeout);
      std::string text;
      bool ok = t > 0 && median_within_factor(f.timeout_gaps_us, t, x.factor, &text);
      line.message = "measured " + text + "; timeout " + std::to_string(attr.timeout) + ": 4.096 us x 2^" +
                     std::to_string(attr.timeout) + " = " + us_text(t);
      if (err) fail("ibv_query_qp(" + e.qp + ", IBV_QP_TIMEOUT): " + std::strerror(err));
      else if (t == 0) fail("timeout 0 (infinite): no retransmission timer to measure");
      else if (!ok) fail(line.message + ", expected within " + x.text);
    } else if (x.fact == util::WireFact::RnrDelay) {
      std::string text;
      bool ok = !f.rnr_timers.empty() && median_within_factor(f.rnr_gaps_us, wire::rnr_timer_us(f.rnr_timers[0]), x.factor, &text);
      line.message = "measured " + text + (f.rnr_timers.empty() ? "" : "; RNR NAK timer " + std::to_string(f.rnr_timers[0]) + " = " +
                                                                         us_text(wire::rnr_timer_us(f.rnr_timers[0])));
      if (!ok) fail(line.message + ", expected within " + x.text);
    }
    log.add(std::move(line));
  }
}

}  // namespace qpo::exec
