#pragma once
// JSON forms of what crosses the wire: messages, the exchange Directory, and run reports.
// Messages are read with qpo's strict JSON reader (util/json_reader.h) and walked as its
// values (yaml-cpp nodes took 20x the writing time: bench/codec_scale.cpp).
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/exchange.h"
#include "report/run_report.h"
#include "util/json_reader.h"
#include "util/json_writer.h"

namespace qpo::cluster {

// A message as read: a JSON object with a "type" string.
using Message = util::json::Value;

// 2: script workloads' w:signal() counters cross hosts ("signals" / "signals_result").
// 3: a host arriving failed says why ("failure"), the controller tells the hosts still at
//    work at once ("abort", any time), and a failed round's answer says which host ("why").
// 4: every agent request carries a number ("seq") its answer repeats, so a reply that comes
//    after its request timed out is never taken for the next request's (take_reply).
// 5: a directory goes by host, each entry one string of fields (write_directory).
constexpr int kProtocolVersion = 5;

// `d`, but for the entries of host `except` (a host is not sent back what it published).
void write_directory(util::JsonWriter& w, const exec::Directory& d, const std::string& except = "");
exec::Directory read_directory(const Message& n);

std::string report_json(const report::RunReport& r);

// A host's final lines [from, to) as "lines" messages (a report of just those steps, under
// `scenario`), at most kLinesPerMessage each and, but for a single line, kLinesMessageBytes: a
// 10,000-QP bring-up's ~70,000 lines would be one 14 MB message, and the frame cap (wire.h)
// would be met near 18,000 QPs. Each goes to `send` with the end of its lines as it is
// written; returns the end of the lines sent (short of `to` when `send` said false).
size_t send_lines(const std::string& scenario, const std::vector<report::StepResult>& steps, size_t from, size_t to,
                  const std::function<bool(const std::string& message, size_t end)>& send);
report::RunReport read_report(const Message& n);

// A message holds this many values at most: a read value takes ~120 bytes, so 64 MiB of
// "[0,0,..." would be 4 GB. A host's lines go in messages of at most kLinesPerMessage lines
// (~21 values each); a 10,000-QP directory holds ~20,000 (an entry is one string).
constexpr size_t kMaxMessageValues = 4000000;
constexpr size_t kLinesPerMessage = 4096;
constexpr size_t kLinesMessageBytes = size_t{16} << 20;  // and at most this (a line alone may be more)

// Parses a message; nullopt (with error) when it is not a JSON object whose "type" is a
// string (YAML beyond JSON, such as anchors and aliases, is refused before parsing; the text
// is read as strict JSON, util/json_reader.h), nests deeper than any qpo message does, or holds
// more than kMaxMessageValues values.
std::optional<Message> parse_message(const std::string& text, std::string* error);

// The member `key` of an object; a null value when it is absent (or `n` is not an object).
const Message& member(const Message& n, const char* key);
// The elements of list field `key` (absent or null: none); a field of another kind throws
// ProtocolError.
const std::vector<Message>& list_of(const Message& n, const char* key);
// The members of object field `key` (absent or null: none), as list_of.
const std::vector<util::json::Member>& map_of(const Message& n, const char* key);

// A field of a message that is not what the protocol says: the peer is broken or hostile.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The one way message fields are read: a present field of the wrong kind (a map where a
// string belongs, an integer out of range) throws ProtocolError naming it, never a reader's
// conversion error; an absent field is `fallback` (field_or) or an error (field).
template <typename T>
T field_or(const Message& n, const char* key, T fallback);
template <typename T>
T field(const Message& n, const char* key);
// A value that is not a field of its own (an element of a list, a value of a map whose keys are
// names): one of the wrong kind throws ProtocolError saying "<what> is not <kind>".
template <typename T>
T value_of(const Message& v, const std::string& what);

// The answer to request `seq` among the replies received so far (`inbox`, oldest first), taken
// out of it; nullopt while it has not come. A reply with another number answers a request
// that timed out (it came late): it is dropped, and `dropped` gets a line saying so. A reply
// without a number breaks the protocol (ProtocolError).
std::optional<Message> take_reply(std::deque<Message>& inbox, int64_t seq, std::vector<std::string>* dropped);

}  // namespace qpo::cluster
