// A controller (or anyone who can reach an agent) sending messages that break the protocol:
// the agent answers with an error naming what is wrong and exits 2; it never aborts with an
// "internal error", and before the token it reads nothing bigger than a hello.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "cluster/codec.h"
#include "cluster/wire.h"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string reply;   // the agent's answers, one per line
  std::string stderr_text;
};

// `qpo agent --stdio` fed `frames` (each sent as one message), then closed.
Outcome feed_agent(const std::vector<std::string>& frames) {
  int in[2], out[2], err[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(in[1]);
    close(out[0]);
    close(err[0]);
    execl(QPO_BINARY, QPO_BINARY, "agent", "--stdio", nullptr);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  signal(SIGPIPE, SIG_IGN);
  std::string e;
  for (const auto& f : frames) qpo::cluster::write_message(in[1], f, &e);
  close(in[1]);
  Outcome o;
  while (auto m = qpo::cluster::read_message(out[0], 60000, &e)) o.reply += *m + "\n";  // every answer
  char buf[4096];
  ssize_t n;
  while ((n = read(err[0], buf, sizeof buf)) > 0) o.stderr_text.append(buf, static_cast<size_t>(n));
  int status = 0;
  waitpid(pid, &status, 0);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  close(out[0]);
  close(err[0]);
  return o;
}

const std::string kHello = R"({"type":"hello","version":5})";

}  // namespace

using qpo::exec::MrKey;

TEST_CASE("a hello whose version is a string gets an error naming the field, not a crash") {
  auto o = feed_agent({R"({"type":"hello","version":"two"})"});
  CHECK(o.exit_code == 2);
  CHECK(o.reply.find("field 'version' is not an integer in range") != std::string::npos);
  CHECK(o.stderr_text.find("internal error") == std::string::npos);
}

TEST_CASE("a message whose type is a map is refused as not a message") {
  auto o = feed_agent({R"({"type":{"a":1},"version":5})"});
  CHECK(o.exit_code == 2);
  CHECK(o.stderr_text.find("internal error") == std::string::npos);
}

TEST_CASE("a run request with timeout_ms above 2^31 is a malformed message") {
  auto o = feed_agent({kHello, R"({"type":"run","host":"a","file":"x.yaml","scenario":"version: 1","timeout_ms":4294967296})"});
  CHECK(o.exit_code == 2);
  CHECK(o.stderr_text.find("field 'timeout_ms' is not an integer in range") != std::string::npos);
}

TEST_CASE("a run request whose scenario is a list is a malformed message") {
  auto o = feed_agent({kHello, R"({"type":"run","host":"a","file":"x.yaml","scenario":[1,2]})"});
  CHECK(o.exit_code == 2);
  CHECK(o.stderr_text.find("field 'scenario' is not a string") != std::string::npos);
}

TEST_CASE("a hello nested thousands of levels deep is refused before the reader recurses into it") {
  std::string deep = R"({"type":"hello","version":5,"x":)" + std::string(5000, '[') + std::string(5000, ']') + "}";
  auto o = feed_agent({deep});
  CHECK(o.exit_code == 2);
  CHECK(o.stderr_text.find("internal error") == std::string::npos);
}

TEST_CASE("before the token, a hello bigger than 64 KiB is not read") {
  std::string big = R"({"type":"hello","version":5,"pad":")" + std::string(1 << 20, 'x') + "\"}";
  auto o = feed_agent({big});
  CHECK(o.exit_code == 2);
  CHECK(o.stderr_text.find("-byte message (limit 65536)") != std::string::npos);
}

TEST_CASE("the typed field reader names the field and what it should be") {
  std::string err;
  auto n = qpo::cluster::parse_message(R"({"type":"barrier","ok":"yes"})", &err);
  REQUIRE(n);
  CHECK_THROWS_WITH_AS(qpo::cluster::field<bool>(*n, "ok"), "field 'ok' is not true or false", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(qpo::cluster::field<std::string>(*n, "name"), "field 'name' is missing", qpo::cluster::ProtocolError);
  CHECK(qpo::cluster::field_or<int>(*n, "absent", 7) == 7);
}

TEST_CASE("a message with YAML anchors and aliases is not JSON: refused, saying what was found") {
  std::string err;
  CHECK_FALSE(qpo::cluster::parse_message(R"({"type":"barrier","a":&x [1],"b":*x})", &err));
  CHECK(err == "message is not a JSON object (found & outside a string)");
}

TEST_CASE("an agent asked to run a host the scenario lacks refuses, naming the hosts it has") {
  auto o = feed_agent({kHello, R"({"type":"run","host":"nope","file":"x.yaml","scenario":"version: 1\nhosts: { a: {} }\ndevices: { d: { host: a } }\n"})"});
  CHECK(o.exit_code == 2);
  CHECK(o.reply.find("host nope is not in the scenario (its hosts: a)") != std::string::npos);
}

TEST_CASE("an agent refuses a protocol-3 controller, naming both versions") {
  auto o = feed_agent({R"({"type":"hello","version":3})"});
  CHECK(o.exit_code == 2);
  CHECK(o.reply.find("protocol version 3 not supported; this agent speaks version 5") != std::string::npos);
}

namespace {

qpo::cluster::Message reply(const std::string& text) {
  std::string err;
  auto n = qpo::cluster::parse_message(text, &err);
  REQUIRE_MESSAGE(n, err);
  return *n;
}

}  // namespace

TEST_CASE("a reply to a request that timed out is dropped, and the awaited one is taken") {
  // Request #3 timed out; its answer came late, then #4's answer.
  std::deque<qpo::cluster::Message> inbox{reply(R"({"type":"barrier_result","seq":3,"ok":true})"),
                               reply(R"({"type":"barrier_result","seq":4,"ok":false,"why":"host b failed"})")};
  std::vector<std::string> dropped;
  auto got = qpo::cluster::take_reply(inbox, 4, &dropped);
  REQUIRE(got);
  CHECK(qpo::cluster::field<int64_t>(*got, "seq") == 4);
  CHECK(qpo::cluster::field<bool>(*got, "ok") == false);
  CHECK(dropped == std::vector<std::string>{"dropped a late reply: barrier_result #3 while awaiting #4"});
  CHECK(inbox.empty());
}

TEST_CASE("a late reply alone is not the awaited one: dropped, and the wait goes on") {
  std::deque<qpo::cluster::Message> inbox{reply(R"({"type":"signals_result","seq":7,"totals":{}})")};
  std::vector<std::string> dropped;
  CHECK_FALSE(qpo::cluster::take_reply(inbox, 8, &dropped));
  CHECK(dropped == std::vector<std::string>{"dropped a late reply: signals_result #7 while awaiting #8"});
  CHECK(inbox.empty());
  inbox.push_back(reply(R"({"type":"exchange_result","seq":8,"ok":true,"directory":{}})"));
  auto got = qpo::cluster::take_reply(inbox, 8, &dropped);
  REQUIRE(got);
  CHECK(qpo::cluster::field<std::string>(*got, "type") == "exchange_result");
  CHECK(dropped.size() == 1);
}

TEST_CASE("a reply without its request's number breaks the protocol") {
  std::deque<qpo::cluster::Message> inbox{reply(R"({"type":"barrier_result","ok":true})")};
  CHECK_THROWS_WITH_AS(qpo::cluster::take_reply(inbox, 1, nullptr), "field 'seq' is missing", qpo::cluster::ProtocolError);
}

TEST_CASE("a late reply's type is logged printable: a controller's terminal escapes do not reach the agent's terminal") {
  // Issue 30 item 14.
  std::deque<qpo::cluster::Message> inbox{reply(R"({"type":"\u001b]0;owned\u0007","seq":3})")};
  std::vector<std::string> dropped;
  CHECK_FALSE(qpo::cluster::take_reply(inbox, 4, &dropped));
  CHECK(dropped == std::vector<std::string>{"dropped a late reply: \\x1B]0;owned\\x07 #3 while awaiting #4"});
}

TEST_CASE("a message in YAML beyond JSON (anchors and aliases) is refused before it is parsed") {
  // Issue 30 item 9: an alias repeated a million times is a million copies for the reader.
  std::string err;
  CHECK_FALSE(qpo::cluster::parse_message(R"({"type":"report","a":&x [1,2],"b":[*x,*x]})", &err));
  CHECK(err == "message is not a JSON object (found & outside a string)");
  CHECK_FALSE(qpo::cluster::parse_message("type: hello\nversion: 4\n", &err));
  CHECK(err == "message is not a JSON object (found y outside a string)");
  CHECK(qpo::cluster::parse_message(R"({"type":"x","s":"&*!: in a string","n":[-1.5e+3,true,false,null]})", &err));
}

TEST_CASE("a message of more values than kMaxMessageValues is refused before the reader builds them") {
  // 2 bytes a value: 8 MB of text would be ~0.5 GB of read values.
  std::string text = R"({"type":"x","v":[0)";
  for (size_t i = 0; i < qpo::cluster::kMaxMessageValues; ++i) text += ",0";
  text += "]}";
  std::string err;
  CHECK_FALSE(qpo::cluster::parse_message(text, &err));
  CHECK(err.rfind("message holds 400000", 0) == 0);
  CHECK(err.find(" values (limit " + std::to_string(qpo::cluster::kMaxMessageValues) + ")") != std::string::npos);
}

TEST_CASE("a host's 10,000 lines go in messages of at most kLinesPerMessage lines, all read back in order") {
  std::vector<qpo::report::StepResult> steps(10000);
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].plan_step = static_cast<int>(i + 1);
    steps[i].verb = "ibv_create_qp";
  }
  std::vector<size_t> ends;
  std::vector<int> read;
  size_t end = qpo::cluster::send_lines("s", steps, 0, steps.size(), [&](const std::string& msg, size_t at) {
    ends.push_back(at);
    auto n = reply(msg);
    CHECK(qpo::cluster::field<std::string>(n, "type") == "lines");
    for (const auto& s : qpo::cluster::read_report(qpo::cluster::member(n, "report")).steps) read.push_back(s.plan_step);
    return true;
  });
  CHECK(end == 10000);
  CHECK(ends == std::vector<size_t>{4096, 8192, 10000});
  REQUIRE(read.size() == 10000);
  CHECK(read.front() == 1);
  CHECK(read.back() == 10000);
  CHECK(std::is_sorted(read.begin(), read.end()));
}

TEST_CASE("lines whose message cannot be sent stay unsent: the sending stops at the end of the last one sent") {
  std::vector<qpo::report::StepResult> steps(5000);
  int calls = 0;
  size_t end = qpo::cluster::send_lines("s", steps, 100, steps.size(), [&](const std::string&, size_t) { return ++calls < 2; });
  CHECK(calls == 2);
  CHECK(end == 100 + qpo::cluster::kLinesPerMessage);
}

TEST_CASE("the typed reader takes numbers and strings as JSON writes them, not as YAML would guess them") {
  auto n = reply(R"({"type":"x","qpn":17,"big":4294967296,"neg":-1,"half":1.5,"name":"17","flag":true,"none":null})");
  CHECK(qpo::cluster::field<int64_t>(n, "big") == 4294967296);
  CHECK(qpo::cluster::field_or<uint32_t>(n, "qpn", 0) == 17);
  CHECK_THROWS_WITH_AS(qpo::cluster::field_or<uint32_t>(n, "big", 0), "field 'big' is not an integer in range", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(qpo::cluster::field_or<uint64_t>(n, "neg", 0), "field 'neg' is not an integer in range", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(qpo::cluster::field<int>(n, "half"), "field 'half' is not an integer in range", qpo::cluster::ProtocolError);
  CHECK(qpo::cluster::field<double>(n, "half") == 1.5);
  CHECK_THROWS_WITH_AS(qpo::cluster::field<int>(n, "name"), "field 'name' is not an integer in range", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(qpo::cluster::field<std::string>(n, "qpn"), "field 'qpn' is not a string", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(qpo::cluster::field<std::string>(n, "none"), "field 'none' is not a string", qpo::cluster::ProtocolError);
  CHECK(qpo::cluster::list_of(n, "none").empty());
  CHECK_THROWS_WITH_AS(qpo::cluster::list_of(n, "name"), "field 'name' is not a list", qpo::cluster::ProtocolError);
}

TEST_CASE("a host's exchange answer holds the other hosts' entries, not its own") {
  qpo::exec::Directory d;
  d.qps[0].host = "a";
  d.qps[1].host = "b";
  d.qps[1].qpn = 0x11;
  d.mrs[{MrKey::Kind::Mr, 0}] = {"a", 0x1000, 64, 7};
  d.mrs[{MrKey::Kind::Mr, 1}] = {"b", 0x2000, 64, 8};
  qpo::util::JsonWriter w(false);
  w.begin_object().field("type", "exchange_result").key("directory");
  qpo::cluster::write_directory(w, d, "a");
  w.end_object();
  auto back = qpo::cluster::read_directory(qpo::cluster::member(reply(w.str()), "directory"));
  REQUIRE(back.qps.size() == 1);
  CHECK(back.qps.at(1).qpn == 0x11);
  REQUIRE(back.mrs.size() == 1);
  CHECK(back.mrs.at({MrKey::Kind::Mr, 1}).rkey == 8);
}

TEST_CASE("a directory goes by host, each entry one string of fields, and reads back whole") {
  qpo::exec::Directory d;
  auto& q = d.qps[3];  // a QP goes by its id
  q.host = "a";
  q.type = "RC";
  q.qpn = 0x11;
  q.sq_psn = 0xabcdef;
  q.qkey = 0x11111111;
  q.gid[10] = q.gid[11] = 0xff;
  q.gid[15] = 7;
  q.active_mtu = 3;
  q.port = 1;
  q.slots_count = 4;
  q.slot_size = 4096;
  d.mrs[{MrKey::Kind::Slots, 3}] = {"b", 0x7f0012345000, 64, 0x1234};  // QP 3's slot buffer
  qpo::util::JsonWriter w(false);
  w.begin_object().field("type", "exchange").key("directory");
  qpo::cluster::write_directory(w, d);
  w.end_object();
  CHECK(w.str() == R"({"type":"exchange","directory":{"hosts":{"a":{"gids":["00000000000000000000ffff00000007"],)"
                   R"("qps":{"3":"RC 17 11259375 286331153 0 0 3 1 4 4096"},"mrs":{}},)"
                   R"("b":{"gids":[],"qps":{},"mrs":{"s3":"139638282145792 64 4660"}}}}})");
  auto back = qpo::cluster::read_directory(qpo::cluster::member(reply(w.str()), "directory"));
  REQUIRE(back.qps.count(3) == 1);
  const auto& r = back.qps.at(3);
  CHECK(r.host == "a");
  CHECK(r.type == "RC");
  CHECK(r.sq_psn == 0xabcdef);
  CHECK(r.gid == q.gid);
  CHECK(r.slot_size == 4096);
  CHECK(back.mrs.at({MrKey::Kind::Slots, 3}).addr == 0x7f0012345000);
  CHECK(back.mrs.at({MrKey::Kind::Slots, 3}).host == "b");
}

TEST_CASE("a directory entry with a field out of range or missing is refused, naming the entry") {
  auto dir = [](const std::string& entry) {
    return qpo::cluster::read_directory(qpo::cluster::member(
        reply(R"({"type":"x","directory":{"hosts":{"a":{"gids":["00000000000000000000000000000000"],"qps":{"7":")" +
              entry + R"("}}}}})"),
        "directory"));
  };
  CHECK_THROWS_WITH_AS(dir("RC 17 1 0 70000 0 3 1 0 0"), "QP '7': field 4 is not a number in range", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(dir("RC 17 1 0 0 1 3 1 0 0"), "QP '7' names GID 1 of 1", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(dir("RC 17 1 0 0 0 3 1 0"), "QP '7': field 9 is not a number in range", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(dir("RC 17 1 0 0 0 3 1 0 0 9"), "QP '7' has too many fields", qpo::cluster::ProtocolError);
  CHECK(dir("RC 17 1 0 0 0 3 1 0 0").qps.at(7).qpn == 17);
}

TEST_CASE("a directory entry keyed by no QP id is refused, naming the key") {
  auto dir = [](const std::string& key) {
    return qpo::cluster::read_directory(qpo::cluster::member(
        reply(R"({"type":"x","directory":{"hosts":{"a":{"gids":["00000000000000000000000000000000"],"qps":{")" + key +
              R"(":"RC 17 1 0 0 0 3 1 0 0"}}}}})"),
        "directory"));
  };
  CHECK_THROWS_WITH_AS(dir("qa"), "QP 'qa' is not a QP id (a number)", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(dir("12x"), "QP '12x' is not a QP id (a number)", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(dir("4294967296"), "QP '4294967296' is not a QP id (a number)", qpo::cluster::ProtocolError);
}

TEST_CASE("a directory MR keyed by no kind letter and id is refused, naming the key") {
  auto dir = [](const std::string& key) {
    return qpo::cluster::read_directory(qpo::cluster::member(
        reply(R"({"type":"x","directory":{"hosts":{"a":{"gids":[],"qps":{},"mrs":{")" + key + R"(":"4096 64 7"}}}}})"),
        "directory"));
  };
  CHECK_THROWS_WITH_AS(dir("ma"), "MR 'ma' is not an MR key (m, s, w or x and an id)", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(dir("q1"), "MR 'q1' is not an MR key (m, s, w or x and an id)", qpo::cluster::ProtocolError);
  CHECK_THROWS_WITH_AS(dir("m"), "MR 'm' is not an MR key (m, s, w or x and an id)", qpo::cluster::ProtocolError);
  CHECK(dir("w2").mrs.at({MrKey::Kind::Window, 2}).rkey == 7);
  CHECK(dir("x0").mrs.at({MrKey::Kind::External, 0}).addr == 4096);
}

TEST_CASE("a directory entry whose type is no QP type word, or a host with 257 GIDs, is refused") {
  auto dir = [](const std::string& part) {
    return qpo::cluster::read_directory(
        qpo::cluster::member(reply(R"({"type":"x","directory":{"hosts":{"a":)" + part + "}}}"), "directory"));
  };
  CHECK_THROWS_WITH_AS(dir(R"({"gids":["00000000000000000000000000000000"],"qps":{"7":"rc;x 17 1 0 0 0 3 1 0 0"}})"),
                       "QP '7': 'rc;x' is not a QP type", qpo::cluster::ProtocolError);
  std::string gids;
  for (int i = 0; i < 257; ++i) gids += std::string(i ? "," : "") + "\"00000000000000000000000000000000\"";
  CHECK_THROWS_WITH_AS(dir(R"({"gids":[)" + gids + "]}"), "host 'a' lists 257 GIDs (at most 256)", qpo::cluster::ProtocolError);
}

TEST_CASE("lines with big results go in smaller messages: none above the byte budget but a single line") {
  std::vector<qpo::report::StepResult> steps(40);
  for (auto& s : steps) s.message = std::string(1 << 20, 'x');  // 1 MiB each
  size_t biggest = 0, lines = 0, messages = 0;
  size_t end = qpo::cluster::send_lines("s", steps, 0, steps.size(), [&](const std::string& msg, size_t at) {
    biggest = std::max(biggest, msg.size());
    lines = at;
    ++messages;
    return true;
  });
  CHECK(end == 40);
  CHECK(lines == 40);
  CHECK(messages >= 3);
  CHECK(biggest <= qpo::cluster::kLinesMessageBytes);
}

TEST_CASE("every step status crosses the wire as itself, 'not run' included") {
  std::vector<qpo::report::StepResult> steps;
  for (auto status : qpo::report::kStepStatuses) {
    steps.emplace_back();
    steps.back().plan_step = static_cast<int>(steps.size());
    steps.back().status = status;
  }
  std::vector<qpo::report::StepStatus> read;
  qpo::cluster::send_lines("s", steps, 0, steps.size(), [&](const std::string& msg, size_t) {
    for (const auto& s : qpo::cluster::read_report(qpo::cluster::member(reply(msg), "report")).steps) read.push_back(s.status);
    return true;
  });
  REQUIRE(read.size() == steps.size());
  for (size_t i = 0; i < steps.size(); ++i) CHECK(read[i] == steps[i].status);
  CHECK(read.back() == qpo::report::StepStatus::NotRun);
}
