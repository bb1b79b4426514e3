// The timeline's own rules: workloads that run together (`workloads: [a, b]`, or the default
// order's waves) must not write the same bytes, or neither's data check means anything; a
// read over what an earlier write left reads it back or says it refills it; a link step
// belongs to a one-host scenario.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "check/validate.h"
#include "util/ops.h"

namespace qpo::check {

namespace {

struct Written {
  const scenario::Workload* w;
  std::string mr;
  uint64_t begin, end;  // [begin, end)
};

// The bytes an op workload writes: the remote MR for writes and atomics, the local MR for reads.
std::optional<Written> written_by(const scenario::Workload& w) {
  const auto* info = w.builtin_op();
  if (!info) return std::nullopt;
  bool atomic = info->atomic;
  if (info->op == util::Op::Read && w.local_mr) return Written{&w, w.local_mr.name, w.offset, w.offset + w.size};
  if (info->remote && info->op != util::Op::Read && w.remote_mr)
    return Written{&w, w.remote_mr.name, w.offset, w.offset + (atomic ? 8 : w.size)};
  return std::nullopt;
}

// Two op workloads sending from one QP at once would each take the other's completions
// (one send queue, one stream per workload): the run cannot tell them apart.
void same_sender(const scenario::Scenario& s, const scenario::TimelineStep& step, diag::DiagSink& sink) {
  std::map<std::string, const scenario::Workload*> by_qp;
  for (const auto& ref : step.workloads) {
    const auto* w = s.workload(ref.name);
    if (!w || !w->script.empty() || !w->qp) continue;
    auto [it, fresh] = by_qp.emplace(w->qp.name, w);
    if (fresh) continue;
    auto& d = sink.error("Q513", step.loc.line ? step.loc : w->loc, step.path,
                         "workloads '" + it->second->name + "' and '" + w->name + "' run together from QP '" +
                             w->qp.name + "'");
    d.rule = "one op workload at a time per sending QP: their completions share one send queue";
    d.hint = "run them one after the other (two timeline steps), or send from two QPs";
  }
}

// Writes that overlap, found by a sweep per MR in order of their first byte (a group of
// 10,000 workloads must not cost 10^8 comparisons): each write against the one reaching
// furthest before it. The members of one group workload writing one MR get one warning.
void overlapping_writes(const scenario::TimelineStep& step, std::vector<Written>& writes, diag::DiagSink& sink) {
  std::stable_sort(writes.begin(), writes.end(), [](const Written& a, const Written& b) {
    return a.mr != b.mr ? a.mr < b.mr : a.begin < b.begin;
  });
  std::set<std::pair<std::string, std::string>> groups_told;  // (group, MR)
  const Written* reach = nullptr;  // of the writes so far into this MR, the one that ends last
  for (const auto& b : writes) {
    if (reach && reach->mr != b.mr) reach = nullptr;
    if (reach && b.begin < reach->end) {
      const auto& a = *reach;
      const std::string& group = a.w->group;
      bool same_group = !group.empty() && group == b.w->group;
      if (!same_group || groups_told.emplace(group, b.mr).second) {
        std::string bytes = std::to_string(b.begin) + ".." + std::to_string(std::min(a.end, b.end) - 1);
        std::string who = same_group ? "the workloads of group '" + group + "' (one per QP, e.g. '" + a.w->name +
                                           "' and '" + b.w->name + "')"
                                     : "workloads '" + a.w->name + "' and '" + b.w->name + "'";
        auto& d = sink.warning("Q512", step.loc.given() ? step.loc : b.w->loc, step.path,
                               who + " run together and both write bytes " + bytes + " of MR '" + a.mr + "'");
        d.rule = "concurrent writers of the same bytes leave them in an undefined order; neither data check holds";
        d.hint = same_group ? "give each QP its own MR: count: or per_qp: on the MR (MR I goes with QP I)"
                            : "give one an offset: past the other's bytes, or run them one after the other";
      }
    }
    if (!reach || b.end > reach->end) reach = &b;
  }
}

// A link step in a multi-host scenario: the hosts meet after every stage over the network, and
// on every lab or cluster link that carries the control connection, `link: down` on any host
// cuts it until a later stage's `link: up`, which it never reaches (and Linux drops a downed
// netdev's IPv6 addresses, the lab's control addresses among them).
void link_across_hosts(const scenario::Scenario& s, const scenario::TimelineStep& step, diag::DiagSink& sink) {
  std::set<std::string> hosts;
  for (const auto& d : s.devices) hosts.insert(d.host.name);
  if (hosts.size() < 2) return;
  auto& d = sink.error("Q514", step.loc, step.path,
                       "a link step in a scenario with " + std::to_string(hosts.size()) +
                           " hosts would cut the hosts' control connection");
  d.rule = "the hosts meet after every timeline stage over the network: with the link down, nobody reaches the meeting";
  d.hint = "fault the RoCE packets instead (faults: {cut: {device: ..., loss: 100%}}, which spares the control "
           "connection), or flap a link in a one-host scenario";
}

// What the plan knows the MRs hold along the timeline, as the planner follows it
// (plan/timeline_planner.cpp, data_of): a read of exactly the bytes an earlier write left at
// one offset reads them back; any other read has its remote MR filled with the read's own
// pattern first, which overwrites whatever a write left in those bytes (Q516 says so).
class ReadBacks {
 public:
  explicit ReadBacks(diag::DiagSink& sink) : sink_(sink) {}

  void step(const scenario::Scenario& s, const scenario::TimelineStep& step) {
    std::vector<std::pair<const scenario::Workload*, const util::OpInfo*>> ws;
    for (const auto& ref : step.workloads)
      if (const auto* w = s.workload(ref.name))
        if (const auto* op = w->builtin_op()) ws.push_back({w, op});
    // Decided for the whole step before any of its workloads counts (as the planner does).
    std::vector<bool> reads_back(ws.size(), false);
    for (size_t i = 0; i < ws.size(); ++i) {
      const auto& [w, op] = ws[i];
      if (op->op != util::Op::Read || !w->remote_mr) continue;
      const Content* c = known(w->remote_mr.name, w->offset);
      reads_back[i] = c && c->length >= w->size;
      if (!reads_back[i]) refilled(step, *w);
    }
    for (size_t i = 0; i < ws.size(); ++i) {
      const auto& [w, op] = ws[i];
      uint64_t begin = w->offset, end = w->offset + (op->atomic ? 8 : w->size);
      bool error = w->expect_status && *w->expect_status != "IBV_WC_SUCCESS";
      if (error || op->atomic) {
        if (w->remote_mr) forget(w->remote_mr.name, begin, end);
      } else if (op->op == util::Op::Write || op->op == util::Op::WriteImm) {
        forget(w->remote_mr.name, begin, end);
        contents_[w->remote_mr.name][begin] = {w, begin, w->size};
      } else if (op->op == util::Op::Read) {
        if (!reads_back[i] && w->remote_mr) contents_[w->remote_mr.name][begin] = {nullptr, begin, w->size};
        if (w->local_mr) {
          forget(w->local_mr.name, begin, end);
          contents_[w->local_mr.name][begin] = {nullptr, begin, w->size};
        }
      }
    }
  }

 private:
  struct Content {
    const scenario::Workload* writer;  // the write that left these bytes; null: a read's pattern
    uint64_t offset, length;
  };

  const Content* known(const std::string& mr, uint64_t offset) const {
    auto in = contents_.find(mr);
    if (in == contents_.end()) return nullptr;
    auto c = in->second.find(offset);
    return c == in->second.end() ? nullptr : &c->second;
  }

  void forget(const std::string& mr, uint64_t begin, uint64_t end) {
    auto in = contents_.find(mr);
    if (in == contents_.end()) return;
    for (auto it = in->second.begin(); it != in->second.end();)
      it = it->second.offset < end && begin < it->second.offset + it->second.length ? in->second.erase(it) : std::next(it);
  }

  // A read that is not a read-back, over bytes a write left: the refill overwrites them.
  void refilled(const scenario::TimelineStep& step, const scenario::Workload& r) {
    auto in = contents_.find(r.remote_mr.name);
    if (in == contents_.end()) return;
    uint64_t begin = r.offset, end = r.offset + r.size;
    for (const auto& [offset, c] : in->second) {
      if (!c.writer || !(c.offset < end && begin < c.offset + c.length)) continue;
      std::string wrote = std::to_string(c.offset) + ".." + std::to_string(c.offset + c.length - 1);
      std::string reads = std::to_string(begin) + ".." + std::to_string(end - 1);
      auto& d = sink_.warning("Q516", r.loc, "workloads." + r.name,
                              "workload '" + r.name + "' reads bytes " + reads + " of '" + r.remote_mr.name + "', where '" +
                                  c.writer->name + "' wrote bytes " + wrote + ": not a read-back of them, so the MR is "
                                  "refilled with the read's pattern first and what '" + c.writer->name + "' wrote is overwritten");
      d.rule = "a read reads back a write only from the write's offset and for at most its size; any other read's "
               "bytes are filled with a known pattern before it runs";
      d.hint = "read from offset " + std::to_string(c.offset) + " with size <= " + std::to_string(c.length) +
               " to check the write, or give the read an offset: past the written bytes";
      if (step.loc.given()) d.related.push_back({step.loc, "the read's timeline step"});
      d.related.push_back({c.writer->loc, "the write"});
      return;  // one warning per read
    }
  }

  diag::DiagSink& sink_;
  std::map<std::string, std::map<uint64_t, Content>> contents_;
};

}  // namespace

void check_timeline(const scenario::Scenario& s, diag::DiagSink& sink) {
  ReadBacks read_backs(sink);
  for (const auto& step : s.timeline) {
    if (step.kind == scenario::TimelineStep::Kind::Workloads) read_backs.step(s, step);
    if (step.kind == scenario::TimelineStep::Kind::Link) link_across_hosts(s, step, sink);
    if (step.kind != scenario::TimelineStep::Kind::Workloads || step.workloads.size() < 2) continue;
    same_sender(s, step, sink);
    std::vector<Written> writes;
    for (const auto& ref : step.workloads)
      if (const auto* w = s.workload(ref.name))
        if (auto x = written_by(*w)) writes.push_back(*x);
    overlapping_writes(step, writes, sink);
  }
}

}  // namespace qpo::check
