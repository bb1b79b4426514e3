#include "exec/workload_meeting.h"

#include <charconv>

#include <set>
#include <stdexcept>

#include "lua/value_codec.h"

namespace qpo::exec {

std::string encode_note(const MeetingNote& n) {
  lua::Value v = lua::Value::table();
  v["host"] = n.host;
  v["kind"] = n.kind;
  v["tag"] = n.tag;
  v["error"] = n.error;
  v["data"] = n.data;
  return lua::encode_value(v);
}

MeetingNote decode_note(const std::string& text) {
  lua::Value v = lua::decode_value(text);
  MeetingNote n;
  n.host = v.string_or("host", "");
  n.kind = v.string_or("kind", "");
  n.tag = v.string_or("tag", "");
  n.error = v.string_or("error", "");
  if (const auto* d = v.find("data")) n.data = *d;
  if (n.host.empty() || n.kind.empty()) throw std::runtime_error("a meeting note without host or kind");
  return n;
}

std::string round_failure(const std::vector<MeetingNote>& notes, const std::string& self, const std::string& workload) {
  std::string others;
  for (const auto& n : notes) {
    if (n.kind != "failed") continue;
    if (n.host == self) return n.error;  // this host's own failure is its root cause
    others += (others.empty() ? "" : "; ") + std::string("host ") + n.host +
              (n.tag.empty() ? " before its first barrier" : " after barrier '" + n.tag + "'") + ": " + n.error;
  }
  if (!others.empty()) return "another host failed: " + others;
  std::set<std::string> kinds;
  for (const auto& n : notes) kinds.insert(n.kind == "ready" ? "ready" : "running");
  if (kinds.size() > 1) return "hosts out of step in workload '" + workload + "' (some not started, some running)";
  std::set<std::string> tags;
  std::string where;
  for (const auto& n : notes)
    if (n.kind == "barrier") {
      tags.insert(n.tag);
      where += (where.empty() ? "" : ", ") + std::string("host ") + n.host + " at '" + n.tag + "'";
    }
  if (tags.size() > 1) return "hosts disagree at a barrier of workload '" + workload + "': " + where;
  return "";
}

lua::Value encode_workers(const std::vector<lua::WorkerResult>& workers) {
  lua::Value list = lua::Value::table();
  for (const auto& w : workers) {
    lua::Value v = lua::Value::table();
    v["name"] = w.name;
    v["role"] = w.role;
    v["ran"] = w.ran;
    v["ok"] = w.ok;
    v["error"] = w.error;
    v["status"] = w.status;
    v["qp"] = w.qp;
    v["result"] = w.result;
    list.push_back(std::move(v));
  }
  return list;
}

std::vector<lua::WorkerResult> decode_workers(const lua::Value& v) {
  std::vector<lua::WorkerResult> out;
  for (const auto& e : v.array()) {
    lua::WorkerResult w;
    w.name = e.string_or("name", "");
    w.role = e.string_or("role", "");
    w.ran = e.find("ran") && e.find("ran")->as_bool();
    w.ok = e.find("ok") && e.find("ok")->as_bool();
    w.error = e.string_or("error", "");
    w.status = e.string_or("status", "");
    w.qp = e.string_or("qp", "");
    if (const auto* r = e.find("result")) w.result = *r;
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<MeetingNote> WorkloadMeeting::round(MeetingNote mine) {
  if (closed_) throw std::runtime_error(failure_.empty() ? "workload '" + workload_ + "': the hosts' meeting is over" : failure_);
  mine.host = host_;
  std::vector<std::string> texts;
  auto close = [&](const std::string& why) {
    closed_ = true;
    failure_ = why;
    throw std::runtime_error(why);
  };
  if (!ch_.gather(workload_, encode_note(mine), &texts)) {
    channel_failed_ = true;
    if (auto why = ch_.failure(); !why.empty()) close("another host failed: " + why);
    close("another host failed: the hosts' meeting for workload '" + workload_ + "' broke" +
          (passed_.empty() ? std::string(" before its first barrier") : " after barrier '" + passed_ + "'") +
          " (a host lost, or out of step)");
  }
  std::vector<MeetingNote> notes;
  try {
    for (const auto& t : texts) notes.push_back(decode_note(t));
  } catch (const std::exception& e) {
    close("workload '" + workload_ + "': unreadable note from another host: " + e.what());
  }
  if (auto why = round_failure(notes, host_, workload_); !why.empty()) close(why);
  bool all_done = true;
  for (const auto& n : notes) all_done &= n.kind == "done";
  if (all_done) closed_ = true;
  return notes;
}

std::map<plan::QpId, uint32_t> WorkloadMeeting::ready(const std::map<plan::QpId, uint32_t>& mine, const std::string& error) {
  MeetingNote n;
  n.kind = error.empty() ? "ready" : "failed";
  n.error = error;
  n.data = lua::Value::table();
  for (const auto& [qp, count] : mine) n.data[std::to_string(qp)] = static_cast<int64_t>(count);  // by plan id
  std::map<plan::QpId, uint32_t> all;
  for (const auto& note : round(n))
    for (const auto& [qp, count] : note.data.fields()) {
      plan::QpId id = plan::kNoQp;
      auto [end, ec] = std::from_chars(qp.data(), qp.data() + qp.size(), id);
      if (ec != std::errc() || end != qp.data() + qp.size() || id == plan::kNoQp)
        throw std::runtime_error("host " + note.host + " sent a note naming no QP ('" + qp + "')");
      all[id] = static_cast<uint32_t>(count.as_int());
    }
  return all;
}

void WorkloadMeeting::barrier(const std::string& tag) {
  MeetingNote n;
  n.kind = "barrier";
  n.tag = tag;
  round(n);
  passed_ = tag;
}

std::vector<lua::WorkerResult> WorkloadMeeting::finish(const std::vector<lua::WorkerResult>& mine, const std::string& error) {
  MeetingNote n;
  n.tag = passed_;
  if (!error.empty()) {
    n.kind = "failed";
    n.error = error;
    round(n);  // throws: the failure is in the notes
  }
  n.kind = "done";
  n.data = encode_workers(mine);
  // A done host keeps meeting (like a finished worker dropping out of a local barrier) until
  // every host is done: the others may still pass barriers.
  for (;;) {
    auto notes = round(n);
    if (!closed_) continue;
    std::vector<lua::WorkerResult> all;
    for (const auto& note : notes)
      for (auto& w : decode_workers(note.data)) all.push_back(std::move(w));
    return all;
  }
}

void WorkloadMeeting::fail(const std::string& error) {
  if (closed_) return;
  MeetingNote n;
  n.kind = "failed";
  n.tag = passed_;
  n.error = error;
  try {
    round(n);
  } catch (const std::exception&) {
  }
}

}  // namespace qpo::exec
