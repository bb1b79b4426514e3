#include "cluster/controller.h"

#include <poll.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "cluster/codec.h"
#include "cluster/launch.h"
#include "cluster/tally.h"
#include "cluster/wire.h"
#include "exec/directory_names.h"
#include "exec/host_session.h"
#include "report/step_line.h"
#include "util/json_writer.h"
#include "util/strings.h"
#include "util/thread_group.h"

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
  std::vector<report::StepResult> streamed;  // its final lines so far ("lines" messages), in order
  std::optional<Message> pending;  // the exchange/barrier request it is waiting on
  exec::Directory published;       // an exchange request's directory, read once as it came
  bool running = false;       // got its run request
  bool aborted = false;       // told to abort (another host failed)
  bool told_others = false;   // its failure went out to the others
};

int g_failures = 0;  // agents failed so far in this run, for their order

ControlTally g_tally;  // this run's control plane traffic (cluster/tally.h)

std::string msg_type(const Message& n) { return field<std::string>(n, "type"); }

bool send(Agent& a, const std::string& json) {
  std::string err;
  g_tally.sent(json);
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
  // Named with how it was reached, when it was (not an agent that could not be started).
  a.failure = "host " + a.host + (a.conn.description.empty() ? "" : " (" + a.conn.description + ")") + ": " + why;
  std::string how = reap(a.conn.pid, false);
  if (!how.empty()) a.failure += " (agent " + how + ")";
}

// A host failed: every other host still busy in the stage (not waiting at a round, not done)
// is told at once, so it stops waiting (for a CM event, a stream) and tears down, instead of
// running into the phase timeout. Hosts waiting at a round learn it from the round's answer.
void abort_others(std::vector<Agent>& agents, const Agent& cause, const std::string& why) {
  for (auto& a : agents) {
    if (&a == &cause || !a.running || a.done || a.pending || a.aborted) continue;
    a.aborted = true;
    util::JsonWriter w(false);
    w.begin_object().field("type", "abort").field("why", why).end_object();
    // Best effort: a host that cannot take the abort (it finished and closed its end) is not
    // lost for that; its report, or its own loss, still comes through the normal reads.
    std::string err;
    g_tally.sent(w.str());
    write_message(a.conn.write_fd, w.str(), &err);
  }
}

// What starting and greeting one agent came to. Made in a thread of its own, beside the other
// hosts': it touches nothing but its agent's connection (the tally and the failure order are
// the caller's, afterwards, in host order).
struct Greeting {
  std::string error;        // why the agent cannot be used ("" when it said hello)
  std::string hello;        // the hello sent ("" when none was)
  bool replied = false;     // a message came back: its type and size
  std::string reply_type;
  size_t reply_bytes = 0;
};

Greeting launch_and_greet(Agent& a, const LaunchOptions& lo, const std::string& token) {
  Greeting g;
  try {
    std::string err;
    a.phase = "launch";
    if (!launch_agent(a.address, lo, &a.conn, &err)) {
      g.error = err;
      return g;
    }
    util::JsonWriter w(false);
    w.begin_object().field("type", "hello").field("version", kProtocolVersion);
    if (!token.empty()) w.field("token", token);
    w.end_object();
    a.phase = "hello";
    g.hello = w.str();
    if (!write_message(a.conn.write_fd, g.hello, &err)) {
      g.error = "lost during hello: " + err;
      return g;
    }
    auto reply = read_message(a.conn.read_fd, 30000, &err, kMaxHelloBytes);  // a hello is small
    if (!reply) {
      g.error = "no hello from the agent: " + err;
      return g;
    }
    auto n = parse_message(*reply, &err);
    if (!n) {
      g.error = "agent did not say hello";
      return g;
    }
    g.replied = true;
    g.reply_type = field_or<std::string>(*n, "type", "");
    g.reply_bytes = reply->size();
    if (msg_type(*n) != "hello")
      g.error = msg_type(*n) == "error" ? field_or<std::string>(*n, "message", "") : "agent did not say hello";
    else if (int v = field_or<int>(*n, "version", 0); v != kProtocolVersion)
      g.error = "agent speaks protocol version " + std::to_string(v) + ", this controller " +
                std::to_string(kProtocolVersion) + "; install the same qpo release on every host";
  } catch (const ProtocolError& e) {
    g.error = std::string("malformed hello: ") + e.what();
  } catch (const std::exception& e) {  // this thread must not throw
    g.error = std::string("starting the agent failed: ") + e.what();
  }
  return g;
}

}  // namespace

void request_abort() { g_abort = true; }

report::RunReport run_with_agents(const std::string& text, const scenario::Scenario& s, const ControllerOptions& o) {
  std::vector<Agent> agents;
  g_tally = ControlTally();
  for (const auto& name : s.active_hosts()) {
    Agent a;
    a.host = name;
    a.address = o.all_local ? "localhost" : s.host(name)->address;
    agents.push_back(std::move(a));
  }
  // Start and greet every agent, all at once: N unreachable hosts take one host's connect
  // budget, not N of them. A host that cannot be reached fails the run before anything is created.
  std::vector<Greeting> greetings(agents.size());
  {
    util::ThreadGroup threads;
    for (size_t i = 0; i < agents.size(); ++i) {
      LaunchOptions lo{o.self_path, o.agent_command};
      // --local puts every host here as a child process; else a host's launcher: starts it.
      lo.launcher = o.all_local ? "" : s.host(agents[i].host)->launcher;
      lo.host = agents[i].host;
      lo.connect_budget_ms = o.connect_budget_ms;
      // launch_and_greet catches what it meets; the guard is for what is left (bad_alloc), which
      // must not leave the thread: that would end the controller.
      auto greet = [&agents, &greetings, &o, i, lo] {
        try {
          greetings[i] = launch_and_greet(agents[i], lo, o.token);
        } catch (const std::exception& e) {
          greetings[i].error = std::string("starting the agent: ") + e.what();
        }
      };
      if (threads.start(greet)) greet();  // no thread to be had: this host in this thread, then
    }
    threads.join();
  }
  for (size_t i = 0; i < agents.size(); ++i) {
    if (!greetings[i].hello.empty()) g_tally.sent(greetings[i].hello);
    if (greetings[i].replied) g_tally.received(greetings[i].reply_type, greetings[i].reply_bytes);
    if (!greetings[i].error.empty()) fail(agents[i], greetings[i].error);
  }
  bool any_failed = false;
  for (auto& a : agents) any_failed |= a.failed;
  g_tally.lap("launch + hello");
  if (!any_failed)
    for (auto& a : agents) {
      util::JsonWriter w(false);
      w.begin_object().field("type", "run").field("host", a.host).field("file", s.file).field("scenario", text);
      w.field("timeout_ms", o.run.timeout_ms).field("smoke", o.run.smoke);
      w.field("bringup_threads", static_cast<int>(o.run.bringup_threads));
      if (!o.run.capture_dir.empty()) w.field("capture_dir", o.run.capture_dir);
      // The agent's own waits: a CM event without `within` (the phase timeout), and how long it
      // waits for a meeting's answer (at least as long as this controller waits for a round).
      w.field("phase_timeout_ms", o.run.phase_timeout_ms).field("meeting_timeout_ms", o.phase_timeout_ms);
      w.key("overrides").begin_array();
      for (const auto& ov : o.overrides) w.value(ov);
      w.end_array().end_object();
      a.phase = "setup";
      a.running = send(a, w.str());
    }

  // workload -> signal name -> total across hosts
  std::unordered_map<std::string, std::unordered_map<std::string, int64_t>> signal_totals;
  std::string first_why;  // the first host failure of the run, as the others are told it
  auto spread = [&](Agent& a, const std::string& why) {
    if (a.told_others) return;
    a.told_others = true;
    if (first_why.empty()) first_why = why;
    abort_others(agents, a, why);
  };
  // One message from an agent. A field of the wrong kind throws ProtocolError (codec.h).
  auto handle = [&](Agent& a, Message& n) {
    std::string type = msg_type(n);
    if (type == "signals") {
      // A script workload's w:signal() counters: add, answer with every host's totals
      // at once (no round: the other hosts may be busy or waiting at a meeting).
      int64_t seq = field<int64_t>(n, "seq");  // the answer repeats it
      auto& totals = signal_totals[field<std::string>(n, "name")];
      // Each value is read beside its name, not looked up by it (a lookup is a scan: 100,000
      // counters would take minutes).
      for (const auto& [name, value] : map_of(n, "add")) {
        int64_t& total = totals[name];
        int64_t add = value_of<int64_t>(value, "signal '" + util::printable(name, 200) + "'");
        if (__builtin_add_overflow(total, add, &total))
          throw ProtocolError("signal '" + util::printable(name, 200) + "' overflows 64 bits");
      }
      util::JsonWriter w(false);
      w.begin_object().field("type", "signals_result").field("seq", seq).key("totals").begin_object();
      for (const auto& [name, total] : totals) w.key(name).value(total);
      w.end_object().end_object();
      send(a, w.str());
    } else if (type == "lines") {
      // A host's final lines as its run goes: shown now (o.live), kept for its report.
      auto part = read_report(member(n, "report"));
      size_t from = a.streamed.size();
      for (auto& step : part.steps) a.streamed.push_back(std::move(step));
      if (o.live) o.live->lines(a.host, a.streamed, from, a.streamed.size());
    } else if (type == "report") {
      a.report = read_report(member(n, "report"));
      // It left out the lines it had sent: they come first.
      auto streamed = field_or<int64_t>(n, "streamed", 0);
      if (streamed != static_cast<int64_t>(a.streamed.size()))
        throw ProtocolError("the report counts " + std::to_string(streamed) + " lines sent before it, " +
                            std::to_string(a.streamed.size()) + " came");
      a.report.steps.insert(a.report.steps.begin(), a.streamed.begin(), a.streamed.end());
      a.done = true;
    } else if (type == "error") {
      fail(a, field_or<std::string>(n, "message", ""));
    } else if (type == "exchange" || type == "barrier" || type == "gather") {
      // Checked now, so the round that answers it reads only well-formed fields.
      bool arrived_ok = field<bool>(n, "ok");
      field<int64_t>(n, "seq");
      std::string note = field_or<std::string>(n, "failure", "");
      if (type == "exchange") {
        a.published = read_directory(member(n, "directory"));
        // A host publishes its own entries only: another's would be withheld from that host
        // (it is not sent its own back) and override the real ones at the others.
        auto own = [&](const char* kind, const std::string& name, const std::string& host) {
          if (host != a.host)
            throw ProtocolError(std::string(kind) + " '" + util::printable(name, 200) + "' names host '" +
                                util::printable(host, 200) + "', not the host that published it");
        };
        for (const auto& [id, q] : a.published.qps) own("QP", std::to_string(id), q.host);
        for (const auto& [key, m] : a.published.mrs) own("MR", exec::mr_key_text(key), m.host);
        std::erase_if(n.members, [](const util::json::Member& m) { return m.key == "directory"; });  // read: not kept twice
      } else {
        field<std::string>(n, "name");
      }
      if (type == "gather") field<std::string>(n, "note");
      a.pending = std::move(n);
      // Arrived failed: its note ("host b failed at step 14 (ibv_modify_qp, qb): ...") goes
      // to the hosts still at work. A host whose failure only echoes another's (aborted,
      // "another host failed": a script's meeting told it) has none: the cause tells.
      if (!arrived_ok && !note.empty()) spread(a, note);
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
          g_tally.received(field_or<std::string>(*n, "type", ""), text->size());
          handle(a, *n);
        } catch (const ProtocolError& e) {
          fail(a, std::string("malformed message: ") + e.what());
        }
      }
      // An agent lost or failing for good (error, gone, malformed): the others stop too.
      for (auto& a : agents)
        if (a.failed) spread(a, a.failure);
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
        all.merge(std::move(a.published));
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
    g_tally.lap(stage == "exchange" ? "setup + bring-up to the exchange" : "to '" + stage + "'");
    for (auto& a : agents) {
      if (!a.pending) continue;
      util::JsonWriter w(false);
      std::string why = ok ? "" : first_why;  // which host failed, when one did
      int64_t seq = field<int64_t>(*a.pending, "seq");  // the answer repeats the request's number
      if (msg_type(*a.pending) == "gather") {
        w.begin_object().field("type", "gather_result").field("seq", seq).field("ok", ok);
        if (!why.empty()) w.field("why", why);
        w.key("notes").begin_array();
        for (const auto& n : notes) w.value(n);
        w.end_array().end_object();
      } else if (msg_type(*a.pending) == "exchange") {
        w.begin_object().field("type", "exchange_result").field("seq", seq).field("ok", ok);
        if (!why.empty()) w.field("why", why);
        w.key("directory");
        write_directory(w, all, a.host);  // the others' entries: it has its own
        w.end_object();
      } else {
        w.begin_object().field("type", "barrier_result").field("seq", seq).field("ok", ok);
        if (!why.empty()) w.field("why", why);
        w.end_object();
      }
      a.pending.reset();
      a.phase = stage == "exchange"              ? "bring-up (after the exchange)"
                : stage.rfind("meeting ", 0) == 0 ? "workload '" + meeting + "' (after a round of its meeting)"
                                                  : "the stage after '" + stage + "'";
      send(a, w.str());
    }
  }

  g_tally.lap("the rest + reports");
  if (o.log) *o.log << g_tally.text(agents.size());

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
      r.steps = a.streamed;  // the lines it sent before it failed
      r.steps.push_back(report::step_line(a.host, "agent", "agent", a.host, report::StepStatus::Failed, a.failure));
      // What it owned is freed by the kernel when the process ends, which is why a hung
      // agent is killed here.
      if (a.conn.pid > 0) kill(a.conn.pid, SIGKILL);
      parts.push_back(r);
    } else {
      parts.push_back(a.report);
    }
    hosts.push_back(a.host);
    a.conn.close_all();
    reap(a.conn.pid, true);
    if (o.live) {  // what was not shown as it came (a report's last lines, a failure's line)
      const auto& steps = parts.back().steps;
      o.live->lines(a.host, steps, std::min(a.streamed.size(), steps.size()), steps.size());
      o.live->host_done(a.host);
    }
  }
  // merge_reports prefixes "host X: " itself; keep failure texts that already name the host.
  auto merged = exec::merge_reports(s.name, s.file, parts, hosts);
  // An agent the controller lost (or that broke the protocol) is the cause; what the other
  // hosts then saw ("no progress for 5000 ms") are symptoms. The first one lost is the headline.
  const Agent* first = nullptr;
  for (const auto& a : agents)
    if (a.failed && (!first || a.failed_as < first->failed_as)) first = &a;
  if (first && merged.verdict == report::Verdict::Fail) merged.reason = first->failure;
  return merged;
}

}  // namespace qpo::cluster
