#pragma once
// JSON forms of what crosses the wire: messages, the exchange Directory, and run reports.
// Parsing uses yaml-cpp (JSON is YAML), so no new dependency.
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/exchange.h"
#include "report/run_report.h"
#include "util/json_writer.h"

namespace YAML {
class Node;
}

namespace qpo::cluster {

// 2: script workloads' w:signal() counters cross hosts ("signals" / "signals_result").
// 3: a host arriving failed says why ("failure"), the controller tells the hosts still at
//    work at once ("abort", any time), and a failed round's answer says which host ("why").
// 4: every agent request carries a number ("seq") its answer repeats, so a reply that comes
//    after its request timed out is never taken for the next request's (take_reply).
constexpr int kProtocolVersion = 4;

void write_directory(util::JsonWriter& w, const exec::Directory& d);
exec::Directory read_directory(const YAML::Node& n);

std::string report_json(const report::RunReport& r);
report::RunReport read_report(const YAML::Node& n);

// A message holds this many values at most: yaml-cpp takes ~0.5 kB and ~10 us for each, so
// 64 MiB of "[0,0,..." would be 15 GB. A 10,000-QP run's report holds about 1.5 million.
constexpr size_t kMaxMessageValues = 4000000;

// Parses a message; nullopt (with error) when it is not a JSON object whose "type" is a
// string (YAML beyond JSON, such as anchors and aliases, is refused before parsing; the text
// is read as strict JSON, util/json_reader.h), nests deeper than any qpo message does, or holds
// more than kMaxMessageValues values.
std::optional<YAML::Node> parse_message(const std::string& text, std::string* error);

// A field of a message that is not what the protocol says: the peer is broken or hostile.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The one way message fields are read: a present field of the wrong kind (a map where a
// string belongs, an integer out of range) throws ProtocolError naming it, never a yaml-cpp
// conversion error; an absent field is `fallback` (field_or) or an error (field).
template <typename T>
T field_or(const YAML::Node& n, const char* key, T fallback);
template <typename T>
T field(const YAML::Node& n, const char* key);
// A value that is not a field of its own (an element of a list, a value of a map whose keys are
// names): one of the wrong kind throws ProtocolError saying "<what> is not <kind>".
template <typename T>
T value_of(const YAML::Node& v, const std::string& what);

// The answer to request `seq` among the replies received so far (`inbox`, oldest first), taken
// out of it; nullopt while it has not come. A reply with another number answers a request
// that timed out (it came late): it is dropped, and `dropped` gets a line saying so. A reply
// without a number breaks the protocol (ProtocolError).
std::optional<YAML::Node> take_reply(std::deque<YAML::Node>& inbox, int64_t seq, std::vector<std::string>* dropped);

}  // namespace qpo::cluster
