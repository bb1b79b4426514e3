#pragma once
// `qpo agent`: runs one host's part of a scenario for a controller. Protocol (each message is
// framed JSON, see wire.h), controller -> agent: hello{version, token?}, run{host, file,
// scenario (the YAML text), options}, then answers to the agent's exchange/barrier requests
// (ok=false with why{the failing host's note}), and at any time abort{why} (another host
// failed: stop now, tear down); agent -> controller: hello{version}, exchange{ok, directory},
// barrier{name, ok} (ok=false with failure{"host b failed at step N (verb, object): ..."}),
// and at the end report{...} or error{message}. Every wait has a timeout. Each request of
// the agent (exchange, barrier, gather, signals) carries seq{N}, its answer the same N: a
// late answer to a request that timed out is dropped, never taken for the next one's.
#include <functional>
#include <string>

namespace qpo::cluster {

struct AgentOptions {
  int hello_timeout_ms = 30000;     // the controller must speak first, soon (--listen: 5 s)
  int run_request_timeout_ms = 30000;  // then, authenticated, send its run request
  int reply_timeout_ms = 900000;    // longest wait for a barrier answer (long workloads elsewhere)
  std::string expected_token;       // non-empty: hello must carry it (--listen mode)
  // Called once the controller is authenticated; a non-empty answer refuses it with that
  // message (--listen: another controller's run is in progress).
  std::function<std::string()> authenticated;
};

// Serves one controller on (in_fd, out_fd); returns the process exit code. Nothing it meets
// (a broken message, std::bad_alloc) escapes: the controller is told, and a line logged.
int serve_controller(int in_fd, int out_fd, const AgentOptions& o);

// Tells a controller why it is not served ({"type":"error","message":...}), best effort.
void refuse_controller(int fd, const std::string& message);

// "qpo agent: TEXT" on stderr in one write (connection threads log concurrently); TEXT is
// already printable.
void log_line(const std::string& text);

// --listen: connections served at once (a thread each). Past it, the oldest that has not shown
// its token is closed for the newcomer, or the newcomer refused when all have.
constexpr size_t kMaxAgentConnections = 8;

// `qpo agent --listen SPEC --token-file F` (cluster/listener.cpp): handshakes concurrently, one
// authenticated run at a time.
int listen_for_controllers(const std::string& spec, const std::string& token_file, AgentOptions o);

}  // namespace qpo::cluster
