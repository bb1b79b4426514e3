#include "cluster/controller.h"

#include <poll.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string_view>
#include <thread>

#include "cluster/codec.h"
#include "cluster/launch.h"
#include "cluster/wire.h"
#include "exec/host_session.h"
#include "util/json_writer.h"

namespace qpo::cluster {

namespace {

std::atomic<bool> g_abort{false};
using Clock = std::chrono::steady_clock;

struct Agent {
  std::string host, address;
  Connection conn;
  bool done = false;          // sent its report (or failed for good)
  bool failed = false;        // died, went silent, or refused
  std::string failure;        // why, with the phase
  int failed_as = 0;          // 1 for the first agent to fail, 2 for the next, ...
  std::string phase = "start";
  report::RunReport report;
  std::optional<YAML::Node> pending;  // the exchange/barrier request it is waiting on
};

int g_failures = 0;  // agents failed so far in this run, for their order

// The control plane's traffic in this run, per message type and direction (messages, bytes
// with their 4-byte frame), and the wall time between its rounds: `qpo run --verbose` shows
// both (issue 20: the messages stay bounded, one exchange per host whatever the QP count).
struct Tally {
  size_t messages = 0, bytes = 0;
};
std::map<std::string, Tally> g_sent, g_received;

void count(std::map<std::string, Tally>& m, const std::string& type, size_t bytes) {
  auto& t = m[type.empty() ? "?" : type];
  ++t.messages;
  t.bytes += bytes + 4;
}

// "type" of a message this controller wrote ({"type":"run",...}, util::JsonWriter compact).
std::string type_of_json(const std::string& json) {
  constexpr std::string_view key = "\"type\":\"";
  auto p = json.find(key);
  if (p == std::string::npos) return "";
  p += key.size();
  return json.substr(p, json.find('"', p) - p);
}

std::string megabytes(size_t bytes) {
  char b[32];
  if (bytes < 10000) std::snprintf(b, sizeof b, "%zu B", bytes);
  else std::snprintf(b, sizeof b, "%.1f kB", static_cast<double>(bytes) / 1e3);
  return b;
}

std::string tally_text(const std::map<std::string, Tally>& m) {
  std::string out;
  size_t n = 0, bytes = 0;
  for (const auto& [type, t] : m) {
    n += t.messages;
    bytes += t.bytes;
    out += (out.empty() ? "" : ", ") + std::to_string(t.messages) + " " + type + " (" + megabytes(t.bytes) + ")";
  }
  return std::to_string(n) + " messages, " + megabytes(bytes) + ": " + out;
}

std::string msg_type(const YAML::Node& n) { return field<std::string>(n, "type"); }

bool send(Agent& a, const std::string& json) {
  std::string err;
  count(g_sent, type_of_json(json), json.size());
  if (write_message(a.conn.write_fd, json, &err)) return true;
  a.failed = true;
  a.done = true;
  a.failed_as = ++g_failures;
  a.failure = "host " + a.host + " (" + a.conn.description + "): lost during " + a.phase + ": " + err;
  return false;
}

void fail(Agent& a, const std::string& why) {
  if (a.failed) return;
  a.failed = true;
  a.done = true;
  a.failed_as = ++g_failures;
  a.failure = "host " + a.host + " (" + a.conn.description + "): " + why;
  std::string how = reap(a.conn.pid, false);
  if (!how.empty()) a.failure += " (agent " + how + ")";
}

}  // namespace

void request_abort() { g_abort = true; }

report::RunReport run_with_agents(const std::string& text, const scenario::Scenario& s, const ControllerOptions& o) {
  std::vector<Agent> agents;
  g_sent.clear();
  g_received.clear();
  auto started = Clock::now(), mark = started;
  std::vector<std::pair<std::string, double>> rounds;  // what the hosts waited at, wall seconds since the last one
  auto lap = [&](const std::string& what) {
    auto now = Clock::now();
    rounds.emplace_back(what, std::chrono::duration<double>(now - mark).count());
    mark = now;
  };
  for (const auto& name : exec::active_hosts(s)) {
    Agent a;
    a.host = name;
    a.address = o.all_local ? "localhost" : s.host(name)->address;
    agents.push_back(std::move(a));
  }
  LaunchOptions lo{o.self_path, o.agent_command};
  // Start and greet every agent; a host that cannot be reached fails the run before anything is created.
  for (auto& a : agents) {
    std::string err;
    a.phase = "launch";
    // --local puts every host here as a child process; else a host's launcher: starts it.
    lo.launcher = o.all_local ? "" : s.host(a.host)->launcher;
    lo.host = a.host;
    if (!launch_agent(a.address, lo, &a.conn, &err)) {
      fail(a, err);
      continue;
    }
    util::JsonWriter w(false);
    w.begin_object().field("type", "hello").field("version", kProtocolVersion);
    if (!o.token.empty()) w.field("token", o.token);
    w.end_object();
    a.phase = "hello";
    if (!send(a, w.str())) continue;
    auto reply = read_message(a.conn.read_fd, 30000, &err);
    if (!reply) {
      fail(a, "no hello from the agent: " + err);
      continue;
    }
    auto n = parse_message(*reply, &err);
    if (n) count(g_received, field_or<std::string>(*n, "type", ""), reply->size());
    try {
      if (!n || msg_type(*n) != "hello") {
        fail(a, n && msg_type(*n) == "error" ? field_or<std::string>(*n, "message", "") : "agent did not say hello");
        continue;
      }
      if (field_or<int>(*n, "version", 0) != kProtocolVersion) {
        fail(a, "agent speaks protocol version " + std::to_string(field_or<int>(*n, "version", 0)) + ", this controller " +
                    std::to_string(kProtocolVersion) + "; install the same qpo release on every host");
        continue;
      }
    } catch (const ProtocolError& e) {
      fail(a, std::string("malformed hello: ") + e.what());
      continue;
    }
  }
  bool any_failed = false;
  for (auto& a : agents) any_failed |= a.failed;
  lap("launch + hello");
  if (!any_failed)
    for (auto& a : agents) {
      util::JsonWriter w(false);
      w.begin_object().field("type", "run").field("host", a.host).field("file", s.file).field("scenario", text);
      w.field("timeout_ms", o.run.timeout_ms).field("smoke", o.run.smoke);
      w.key("overrides").begin_array();
      for (const auto& ov : o.overrides) w.value(ov);
      w.end_array().end_object();
      a.phase = "setup";
      send(a, w.str());
    }

  std::map<std::string, std::map<std::string, int64_t>> signal_totals;  // workload -> name -> total
  // One message from an agent. A field of the wrong kind throws ProtocolError (codec.h).
  auto handle = [&](Agent& a, const YAML::Node& n) {
    std::string type = msg_type(n);
    if (type == "signals") {
      // A script workload's w:signal() counters: add, answer with every host's totals
      // at once (no round: the other hosts may be busy or waiting at a meeting).
      auto& totals = signal_totals[field<std::string>(n, "name")];
      for (const auto& kv : n["add"]) {
        if (!kv.first.IsScalar()) throw ProtocolError("a signal name is not a string");
        totals[kv.first.Scalar()] += field<int64_t>(n["add"], kv.first.Scalar().c_str());
      }
      util::JsonWriter w(false);
      w.begin_object().field("type", "signals_result").key("totals").begin_object();
      for (const auto& [name, total] : totals) w.key(name).value(total);
      w.end_object().end_object();
      send(a, w.str());
    } else if (type == "report") {
      a.report = read_report(n["report"]);
      a.done = true;
    } else if (type == "error") {
      fail(a, field_or<std::string>(n, "message", ""));
    } else if (type == "exchange" || type == "barrier" || type == "gather") {
      // Checked now, so the round that answers it reads only well-formed fields.
      field<bool>(n, "ok");
      if (type == "exchange") read_directory(n["directory"]);
      else field<std::string>(n, "name");
      if (type == "gather") field<std::string>(n, "note");
      a.pending = n;
    } else {
      fail(a, "unexpected message '" + type + "'");
    }
  };

  // Rounds: wait until every live agent is waiting at the same stage (or done), answer all.
  while (!any_failed || std::any_of(agents.begin(), agents.end(), [](const Agent& a) { return !a.done; })) {
    auto deadline = Clock::now() + std::chrono::milliseconds(o.phase_timeout_ms);
    for (;;) {
      bool waiting_on_someone = false;
      std::vector<pollfd> fds;
      std::vector<Agent*> who;
      for (auto& a : agents)
        if (!a.done && !a.pending) {
          fds.push_back({a.conn.read_fd, POLLIN, 0});
          who.push_back(&a);
          waiting_on_someone = true;
        }
      if (!waiting_on_someone) break;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        for (auto* a : who) fail(*a, "no answer within " + std::to_string(o.phase_timeout_ms / 1000) + " s during " + a->phase);
        break;
      }
      int r = poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, 200)));
      if (r <= 0) continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Agent& a = *who[i];
        std::string err;
        auto text = read_message(a.conn.read_fd, 10000, &err);
        if (!text) {
          fail(a, "agent " + (err == "connection closed" ? std::string("went away") : err) + " during " + a.phase);
          continue;
        }
        auto n = parse_message(*text, &err);
        if (!n) {
          fail(a, err);
          continue;
        }
        try {
          count(g_received, field_or<std::string>(*n, "type", ""), text->size());
          handle(a, *n);
        } catch (const ProtocolError& e) {
          fail(a, std::string("malformed message: ") + e.what());
        }
      }
    }
    any_failed = std::any_of(agents.begin(), agents.end(), [](const Agent& a) { return a.failed; });
    bool waiting = std::any_of(agents.begin(), agents.end(), [](const Agent& a) { return a.pending.has_value(); });
    if (!waiting) break;
    // Everyone still running is at a stage: answer with the AND of every host's ok.
    bool ok = !any_failed && !g_abort;
    exec::Directory all;
    std::string stage;
    for (auto& a : agents) {
      if (!a.pending) continue;
      ok = ok && field<bool>(*a.pending, "ok");
      if (msg_type(*a.pending) == "exchange") {
        all.merge(read_directory((*a.pending)["directory"]));
        stage = "exchange";
      } else {
        stage = field<std::string>(*a.pending, "name");
      }
    }
    for (auto& a : agents)
      if (a.pending && (msg_type(*a.pending) == "exchange") != (stage == "exchange")) ok = false;  // out of step
    // A script workload's meeting (gather): every live host must be at the same one; each
    // gets all the notes. A host that is done or failed cannot answer: the round fails.
    std::string meeting;
    std::vector<std::string> notes;
    bool gathering = false, all_gathering = true;
    for (auto& a : agents) {
      if (!a.pending) {
        all_gathering = false;
        continue;
      }
      bool g = msg_type(*a.pending) == "gather";
      gathering |= g;
      all_gathering &= g;
      if (!g) continue;
      std::string name = field<std::string>(*a.pending, "name");
      if (meeting.empty()) meeting = name;
      if (name != meeting) ok = false;
      notes.push_back(field<std::string>(*a.pending, "note"));
    }
    if (gathering && !all_gathering) ok = false;
    if (gathering) stage = "meeting " + meeting;
    lap(stage == "exchange" ? "setup + bring-up to the exchange" : "to '" + stage + "'");
    for (auto& a : agents) {
      if (!a.pending) continue;
      util::JsonWriter w(false);
      if (msg_type(*a.pending) == "gather") {
        w.begin_object().field("type", "gather_result").field("ok", ok).key("notes").begin_array();
        for (const auto& n : notes) w.value(n);
        w.end_array().end_object();
      } else if (msg_type(*a.pending) == "exchange") {
        w.begin_object().field("type", "exchange_result").field("ok", ok).key("directory");
        write_directory(w, all);
        w.end_object();
      } else {
        w.begin_object().field("type", "barrier_result").field("ok", ok).end_object();
      }
      a.pending.reset();
      a.phase = stage == "exchange"              ? "bring-up (after the exchange)"
                : stage.rfind("meeting ", 0) == 0 ? "workload '" + meeting + "' (after a round of its meeting)"
                                                  : "the stage after '" + stage + "'";
      send(a, w.str());
    }
  }

  lap("the rest + reports");
  if (o.log) {
    // Rounds in order; past the first 30 (a script's meeting rounds) the middle ones summed.
    auto timed = [](const std::string& what, double seconds) {
      char b[32];
      std::snprintf(b, sizeof b, " %.2f s", seconds);
      return what + b;
    };
    std::string times;
    double middle = 0;
    for (size_t i = 0; i < rounds.size(); ++i) {
      bool shown = i < 30 || i + 1 == rounds.size();
      if (!shown) middle += rounds[i].second;
      if (i + 1 == rounds.size() && rounds.size() > 31)
        times += ", " + timed(std::to_string(rounds.size() - 31) + " more rounds", middle);
      if (shown) times += (times.empty() ? "" : ", ") + timed(rounds[i].first, rounds[i].second);
    }
    *o.log << "qpo: control plane: " << agents.size() << " hosts, " << rounds.size() - 2 << " rounds in "
           << std::chrono::duration<double>(Clock::now() - started).count() << " s; sent " << tally_text(g_sent)
           << "; received " << tally_text(g_received) << "\nqpo: wall time per round: " << times << "\n";
  }

  // Reports, in host order; a failed agent gets a report saying why.
  std::vector<report::RunReport> parts;
  std::vector<std::string> hosts;
  for (auto& a : agents) {
    if (a.failed) {
      report::RunReport r;
      r.scenario = s.name;
      r.file = s.file;
      r.verdict = report::Verdict::Fail;
      r.reason = a.failure;
      report::StepResult st;
      st.host = a.host;
      st.phase = "agent";
      st.verb = "agent";
      st.object = a.host;
      st.status = report::StepStatus::Failed;
      st.message = a.failure;
      r.steps.push_back(st);
      // Whatever it sent before failing is lost; what it owned is freed by the kernel when
      // the process ends, which is why a hung agent is killed here.
      if (a.conn.pid > 0) kill(a.conn.pid, SIGKILL);
      parts.push_back(r);
    } else {
      parts.push_back(a.report);
    }
    hosts.push_back(a.host);
    a.conn.close_all();
    reap(a.conn.pid, true);
  }
  // merge_reports prefixes "host X: " itself; keep failure texts that already name the host.
  auto merged = exec::merge_reports(s, parts, hosts);
  // An agent the controller lost (or that broke the protocol) is the cause; what the other
  // hosts then saw ("no progress for 5000 ms") are symptoms. The first one lost is the headline.
  const Agent* first = nullptr;
  for (const auto& a : agents)
    if (a.failed && (!first || a.failed_as < first->failed_as)) first = &a;
  if (first && merged.verdict == report::Verdict::Fail) merged.reason = first->failure;
  return merged;
}

}  // namespace qpo::cluster
