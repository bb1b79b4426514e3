#include "cluster/agent.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <iostream>
#include <sstream>
#include <thread>

#include "check/validate.h"
#include "cluster/codec.h"
#include "cluster/launch.h"
#include "cluster/wire.h"
#include "exec/host_session.h"
#include "plan/plan.h"
#include "scenario/loader.h"
#include "util/json_writer.h"
#include "util/strings.h"
#include "util/thread_group.h"

namespace qpo::cluster {

namespace {

// Test hook for failure drills: QPO_AGENT_FAULT="<host>:<what>:<stage>" where <what> is
//   die        exit abruptly (like kill -9) on reaching that stage (or "exchange"),
//   hang       stop answering there,
//   die-later  pass the stage, then die 300 ms into the next one (mid-workload),
//   stall      stay busy there until the controller aborts the run (another host failed),
//              then go on: a host in a long wait that honours the abort (a CM event, a stream),
//   throw      throw std::bad_alloc there (what an agent under a memory limit meets).
// <stage> may also be "setup": before the host's session starts.
void maybe_fault(const std::string& host, const std::string& stage, const exec::StopRequest* stop = nullptr) {
  const char* spec = std::getenv("QPO_AGENT_FAULT");
  if (!spec) return;
  std::string s(spec);
  auto a = s.find(':'), b = s.find(':', a == std::string::npos ? 0 : a + 1);
  if (a == std::string::npos || b == std::string::npos) return;
  if (s.substr(0, a) != host || s.substr(b + 1) != stage) return;
  if (s.substr(a + 1, b - a - 1) == "die") _exit(9);
  if (s.substr(a + 1, b - a - 1) == "hang")
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  if (s.substr(a + 1, b - a - 1) == "die-later") {  // a timer, not a detached thread: _exit is async-signal-safe
    signal(SIGALRM, [](int) { _exit(9); });
    itimerval in_300ms{};
    in_300ms.it_value.tv_usec = 300'000;
    setitimer(ITIMER_REAL, &in_300ms, nullptr);
  }
  if (s.substr(a + 1, b - a - 1) == "throw") throw std::bad_alloc();  // as an allocation under a memory limit
  if (s.substr(a + 1, b - a - 1) == "stall" && stop)
    while (!stop->requested.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// The agent's side of the run's channel. One reader thread takes every message the
// controller sends: the answers to this host's round trips (one at a time), and an "abort"
// whenever it comes (another host failed mid-stage): that turns this host's stop request on,
// so its session and workers stop where they wait (a CM event, a stream, a script) and tear
// down at once instead of waiting out the phase timeout.
class PipeChannel : public exec::Channel {
 public:
  PipeChannel(int in, int out, std::string host, int timeout_ms)
      : in_(in), out_(out), host_(std::move(host)), timeout_ms_(timeout_ms) {
    // No reader, no answers: every round trip then fails with this, and the run stops.
    if (auto why = reader_.start([this] { read_loop(); })) lost_controller("no thread to read its messages (" + *why + ")");
  }
  ~PipeChannel() override {
    closing_ = true;
    reader_.join();
  }

  bool exchange(exec::Directory mine, bool ok, exec::Directory* all) override {
    maybe_fault(host_, "exchange", &stop_);
    util::JsonWriter w(false);
    int64_t seq = next_seq_++;
    w.begin_object().field("type", "exchange").field("seq", seq).field("ok", ok);
    note_field(w, ok);
    w.key("directory");
    write_directory(w, mine);
    w.end_object();
    auto reply = round_trip(w.str(), seq, "exchange_result", "the exchange");
    if (!reply) return false;
    // The controller sends the other hosts' entries only: this host's own are `mine`.
    *all = read_directory(member(*reply, "directory"));
    all->merge(std::move(mine));
    return answer_ok(*reply);
  }

  bool barrier(const std::string& name, bool ok) override {
    maybe_fault(host_, name, &stop_);
    util::JsonWriter w(false);
    int64_t seq = next_seq_++;
    w.begin_object().field("type", "barrier").field("seq", seq).field("name", name).field("ok", ok);
    note_field(w, ok);
    w.end_object();
    auto reply = round_trip(w.str(), seq, "barrier_result", "stage '" + name + "'");
    return reply && answer_ok(*reply);
  }

  bool gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) override {
    util::JsonWriter w(false);
    int64_t seq = next_seq_++;
    w.begin_object().field("type", "gather").field("seq", seq).field("name", name).field("ok", true).field("note", note).end_object();
    auto reply = round_trip(w.str(), seq, "gather_result", "workload meeting '" + name + "'");
    if (!reply || !answer_ok(*reply)) return false;
    notes->clear();
    for (const auto& n : list_of(*reply, "notes")) notes->push_back(value_of<std::string>(n, "a note"));
    return true;
  }

  // A message that wants no answer (a host's final lines as the run goes). False when the
  // controller cannot be written to; the lines are still in the final report then.
  bool tell(const std::string& msg) {
    std::lock_guard lock(pipe_);
    std::string err;
    return write_message(out_, msg, &err);
  }

  // Answered by the controller at once. Workers call it while another thread of this host
  // may be in a round trip (a barrier's gather): then not now, the caller keeps its increments.
  bool signals(const std::string& workload, const std::map<std::string, int64_t>& add,
               std::map<std::string, int64_t>* totals) override {
    std::unique_lock lock(pipe_, std::try_to_lock);
    if (!lock) return false;
    util::JsonWriter w(false);
    int64_t seq = next_seq_++;
    w.begin_object().field("type", "signals").field("seq", seq).field("name", workload).key("add").begin_object();
    for (const auto& [name, n] : add) w.key(name).value(n);
    w.end_object().end_object();
    auto reply = round_trip_locked(w.str(), seq, "signals_result", "signals of workload '" + workload + "'");
    if (!reply) return false;
    totals->clear();
    for (const auto& [name, total] : map_of(*reply, "totals"))
      (*totals)[name] = value_of<int64_t>(total, "the total of signal '" + util::printable(name, 200) + "'");
    return true;
  }

  void note_failure(const std::string& note) override {
    std::lock_guard lock(mu_);
    if (note_.empty()) note_ = note;
  }
  std::string failure() const override {
    std::lock_guard lock(mu_);
    return why_;
  }
  const exec::StopRequest* stop_request() const override { return &stop_; }
  const exec::StopRequest& stop() const { return stop_; }

  const std::string& problem() const { return problem_; }

 private:
  // A host arriving with ok=false says why once (its first failed step), for the others.
  void note_field(util::JsonWriter& w, bool ok) {
    if (ok) return;
    std::lock_guard lock(mu_);
    if (!note_.empty() && !note_sent_) {
      w.field("failure", note_);
      note_sent_ = true;
    }
  }

  // A round's answer; a failed round says which host failed and why (the first one).
  bool answer_ok(const Message& reply) {
    bool ok = field<bool>(reply, "ok");
    std::string why = field_or<std::string>(reply, "why", "");
    if (!ok && !why.empty()) {
      std::lock_guard lock(mu_);
      if (why_.empty()) why_ = why;
    }
    return ok;
  }

  // This thread must not throw (std::terminate would end the agent): a failure here (memory
  // for a big message) ends the reading, reported as the controller going away is.
  void read_loop() {
    try {
      read_messages();
    } catch (const std::exception& e) {
      lost_controller(std::string("reading its messages failed: ") + e.what());
    } catch (...) {
      lost_controller("reading its messages failed");
    }
  }

  void lost_controller(const std::string& err) {
    std::lock_guard lock(mu_);
    reader_error_ = err;
    // Nobody will answer this host's next round; stop now.
    if (!stop_.requested.load(std::memory_order_acquire)) {
      stop_.why = "stopped: the controller went away (" + err + ")";
      stop_.requested.store(true, std::memory_order_release);
    }
    arrived_.notify_all();
  }

  void read_messages() {
    while (!closing_) {
      pollfd p{in_, POLLIN, 0};
      int r = poll(&p, 1, 100);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      std::string err;
      auto text = read_message(in_, 30000, &err);
      if (!text) return lost_controller(err);
      auto n = parse_message(*text, &err);
      std::lock_guard lock(mu_);
      try {
        if (n && field<std::string>(*n, "type") == "abort") {
          // Another host failed: stop here too. `why` before the flag (StopRequest).
          if (!stop_.requested.load(std::memory_order_acquire)) {
            stop_.why = "aborted: " + field_or<std::string>(*n, "why", "another host failed");
            stop_.requested.store(true, std::memory_order_release);
          }
          continue;
        }
      } catch (const ProtocolError& e) {  // this thread must not throw: the round trip reports it
        n.reset();
        err = std::string("malformed message: ") + e.what();
      }
      if (!n) {
        reader_error_ = err;
        arrived_.notify_all();
        return;
      }
      inbox_.push_back(std::move(*n));
      arrived_.notify_all();
    }
  }

  std::optional<Message> round_trip(const std::string& msg, int64_t seq, const char* want, const std::string& phase) {
    std::lock_guard lock(pipe_);
    return round_trip_locked(msg, seq, want, phase);
  }

  // One request, one reply: the pipe carries one round trip at a time (pipe_); the reader
  // thread hands the replies over, and the one whose number is `seq` is this request's. A
  // reply to an earlier request that timed out (it came late) is dropped, with a line here.
  std::optional<Message> round_trip_locked(const std::string& msg, int64_t seq, const char* want,
                                              const std::string& phase) {
    std::string err;
    if (!write_message(out_, msg, &err)) {
      problem_ = "controller unreachable at " + phase + ": " + err;
      return std::nullopt;
    }
    std::unique_lock lock(mu_);
    std::optional<Message> reply;
    auto answered = [&] {
      std::vector<std::string> dropped;
      try {
        reply = take_reply(inbox_, seq, &dropped);
      } catch (const ProtocolError& e) {  // a reply without its number: reported as the reader's are
        reader_error_ = std::string("malformed message: ") + e.what();
      }
      for (const auto& d : dropped) log_line("host " + util::printable(host_, 200) + ": " + d);
      return reply.has_value() || !reader_error_.empty();
    };
    bool came = arrived_.wait_for(lock, std::chrono::milliseconds(timeout_ms_ < 0 ? INT32_MAX : timeout_ms_), answered);
    if (!reply) {
      problem_ = "no answer from the controller at " + phase + ": " + (came ? reader_error_ : std::string("timed out"));
      return std::nullopt;
    }
    if (field_or<std::string>(*reply, "type", "") != want) {
      problem_ = "unexpected message from the controller at " + phase;
      return std::nullopt;
    }
    return reply;
  }

  int in_, out_;
  std::string host_;
  int timeout_ms_;
  std::string problem_;
  std::mutex pipe_;
  mutable std::mutex mu_;  // inbox_, reader_error_, note_, why_
  std::condition_variable arrived_;
  std::deque<Message> inbox_;
  std::string reader_error_;
  std::string note_, why_;
  bool note_sent_ = false;
  exec::StopRequest stop_;
  std::atomic<int64_t> next_seq_{1};  // the number of this host's next request
  std::atomic<bool> closing_{false};
  util::ThreadGroup reader_;  // last: started once everything it uses exists, joined first
};

// A host's final lines, sent to the controller as they come (a "lines" message: a report of
// just those steps), so `qpo run` prints them live as it does for hosts in its own process.
// The final report then carries only the lines not sent.
class LinesToController : public report::LineSink {
 public:
  LinesToController(PipeChannel& channel, std::string scenario) : channel_(channel), scenario_(std::move(scenario)) {}

  void lines(const std::string&, const std::vector<report::StepResult>& steps, size_t from, size_t to) noexcept override {
    to = std::min(to, steps.size());
    if (broken_ || from != sent_ || from >= to) return;  // not in sequence: the final report has them
    try {
      auto told = [&](const std::string& msg, size_t end) {
        if (!channel_.tell(msg)) return false;
        sent_ = end;  // as each goes: a failure after it leaves the final report the rest only
        return true;
      };
      broken_ = send_lines(scenario_, steps, from, to, told) < to;
    } catch (...) {  // out of memory for the message: the final report has the rest
      broken_ = true;
    }
  }
  void host_done(const std::string&) noexcept override {}
  size_t sent() const { return sent_; }

 private:
  PipeChannel& channel_;
  std::string scenario_;
  size_t sent_ = 0;
  bool broken_ = false;
};

void send_error(int fd, const std::string& message) {
  util::JsonWriter w(false);
  w.begin_object().field("type", "error").field("message", message).end_object();
  std::string err;
  write_message(fd, w.str(), &err);
}

bool tokens_equal(const std::string& a, const std::string& b) {
  // Constant time in the length of the expected token, so timing leaks nothing.
  unsigned diff = a.size() != b.size();
  for (size_t i = 0; i < b.size(); ++i) diff |= static_cast<unsigned>(b[i] ^ (i < a.size() ? a[i] : 0));
  return diff == 0;
}

}  // namespace

namespace {

int serve_checked(int in, int out, const AgentOptions& o) {
  std::string err;
  auto hello_text = read_message(in, o.hello_timeout_ms, &err, kMaxHelloBytes);  // before the token: small
  if (!hello_text) {
    log_line("no hello from the controller: " + err);
    return 2;
  }
  auto hello = parse_message(*hello_text, &err);
  if (!hello || field<std::string>(*hello, "type") != "hello") {
    send_error(out, "expected hello");
    return 2;
  }
  int version = field_or<int>(*hello, "version", 0);
  if (version != kProtocolVersion) {
    send_error(out, "protocol version " + std::to_string(version) + " not supported; this agent speaks version " +
                        std::to_string(kProtocolVersion) + " (same qpo release on every host?)");
    return 2;
  }
  if (!o.expected_token.empty()) {
    std::string token = field_or<std::string>(*hello, "token", "");
    if (!tokens_equal(token, o.expected_token)) {
      send_error(out, "authentication failed: wrong or missing token");
      log_line("rejected a controller without the right token");
      return 2;
    }
  }
  if (o.authenticated)
    if (std::string refusal = o.authenticated(); !refusal.empty()) {
      send_error(out, refusal);
      log_line("refused a controller: " + refusal);
      return 2;
    }
  {
    util::JsonWriter w(false);
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    // QPO_TEST_PROTOCOL_VERSION lets the tests impersonate an agent from another release.
    int mine = std::getenv("QPO_TEST_PROTOCOL_VERSION") ? std::atoi(std::getenv("QPO_TEST_PROTOCOL_VERSION")) : kProtocolVersion;
    w.begin_object().field("type", "hello").field("version", mine).field("hostname", name).end_object();
    if (!write_message(out, w.str(), &err)) return 2;
  }
  auto run_text = read_message(in, o.run_request_timeout_ms, &err);
  if (!run_text) {
    log_line("no run request: " + err);
    return 2;
  }
  auto run = parse_message(*run_text, &err);
  if (!run || field<std::string>(*run, "type") != "run") {
    send_error(out, "expected run");
    return 2;
  }
  // Every field first: a malformed request is refused before any of it is acted on.
  std::string host = field<std::string>(*run, "host");
  std::string file = field<std::string>(*run, "file");
  std::string scenario_text = field<std::string>(*run, "scenario");
  // --set PATH=VALUE the controller applied: the same tree here, or the hosts would disagree.
  std::vector<std::string> overrides;
  for (const auto& o : list_of(*run, "overrides")) overrides.push_back(value_of<std::string>(o, "an element of field 'overrides'"));
  exec::RunOptions ro;
  ro.timeout_ms = field_or<int>(*run, "timeout_ms", 5000);
  ro.phase_timeout_ms = field_or<int>(*run, "phase_timeout_ms", ro.phase_timeout_ms);
  // A meeting's answer may take as long as the controller's round, and then some.
  int64_t meeting_ms = field_or<int64_t>(*run, "meeting_timeout_ms", 0);
  int reply_timeout_ms = static_cast<int>(std::min<int64_t>(
      std::max<int64_t>(o.reply_timeout_ms, meeting_ms + 60000), std::numeric_limits<int>::max()));
  ro.smoke = field_or<bool>(*run, "smoke", true);
  ro.bringup_threads = static_cast<unsigned>(
      std::clamp(field_or<int>(*run, "bringup_threads", exec::RunOptions::kDefaultBringupThreads), 1, 64));
  ro.capture_dir = field_or<std::string>(*run, "capture_dir", "");
  util::SourceText source(file, scenario_text);
  diag::DiagSink diags;
  auto s = scenario::load_scenario(source, diags, overrides);
  std::optional<check::Checked> checked;
  if (s) checked = check::validate(*s, diags);
  if (s && !diags.has_errors() && !s->host(host)) {
    send_error(out, "host " + host + " is not in the scenario (its hosts: " + [&] {
      std::string names;
      for (const auto& h : s->hosts) names += (names.empty() ? "" : ", ") + h.name;
      return names;
    }() + ")");
    return 2;
  }
  if (!s || diags.has_errors()) {
    send_error(out, "host " + host + ": the scenario does not validate here (" + std::to_string(diags.error_count()) +
                        " errors); different qpo versions?");
    return 1;
  }
  ro.all_hosts_local = true;
  auto p = plan::build_plan(*checked, {.smoke = ro.smoke, .capture = !ro.capture_dir.empty()});
  PipeChannel channel(in, out, host, reply_timeout_ms);
  LinesToController live(channel, s->name);
  ro.live = &live;
  maybe_fault(host, "setup", &channel.stop());
  auto report = exec::HostSession(p, host, ro).run(channel);
  if (!channel.problem().empty() && report.reason.find("another host failed") != std::string::npos)
    report.reason = channel.problem() + "; tore down";
  // The lines the controller has already are not sent again: the report carries the rest.
  size_t streamed = std::min(live.sent(), report.steps.size());
  report.steps.erase(report.steps.begin(), report.steps.begin() + static_cast<std::ptrdiff_t>(streamed));
  std::string msg = "{\"type\":\"report\",\"streamed\":" + std::to_string(streamed) +
                    ",\"report\":" + report_json(report) + "}";
  if (!write_message(out, msg, &err)) {
    log_line("could not deliver the report: " + err);
    return 2;
  }
  return report::exit_code(report);
}

}  // namespace

// A message that breaks the protocol ends this controller's session with a clear error, on
// both ends; so does a failure of the agent itself (memory under a limit: std::bad_alloc). A
// listening agent then waits for the next controller.
int serve_controller(int in, int out, const AgentOptions& o) {
  try {
    return serve_checked(in, out, o);
  } catch (const ProtocolError& e) {
    send_error(out, std::string("malformed message: ") + e.what());
    log_line("malformed message from the controller: " + util::printable(e.what()));
    return 2;
  } catch (const std::exception& e) {
    std::string why = std::string("the agent failed serving this controller: ") + e.what();
    send_error(out, why);
    log_line(util::printable(why));
    return 2;
  }
}

void refuse_controller(int fd, const std::string& message) { send_error(fd, message); }

void log_line(const std::string& text) {
  std::string line = "qpo agent: " + text + "\n";  // one write: connection threads log at once
  std::cerr.write(line.data(), static_cast<std::streamsize>(line.size())).flush();
}

}  // namespace qpo::cluster
