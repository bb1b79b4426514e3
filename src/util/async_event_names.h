#pragma once
// Asynchronous events (ibv_get_async_event(3)) by the names the verbs header gives them, and
// the kind of object each one is about: the one table for the timeline's `event:`/`forbid:`
// steps, the validator, the run log and the report.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qpo::util {

// What an event's `element` names (ibv_get_async_event(3)), and so what `on:` must name.
enum class EventObject { Qp, Srq, Cq, Port, Device };
const char* event_object_name(EventObject o);  // "QP", "SRQ", "CQ", "port", "device"

struct AsyncEventInfo {
  int value;            // enum ibv_event_type
  const char* name;     // "IBV_EVENT_SRQ_LIMIT_REACHED"
  EventObject object;
};

// The entry for an event type; nullptr for a value the table lacks.
const AsyncEventInfo* async_event(int value);
// "IBV_EVENT_SQ_DRAINED"; "IBV_EVENT_(unknown)" for a value the table lacks.
const char* async_event_name(int value);
// Accepts "IBV_EVENT_SRQ_LIMIT_REACHED" or "SRQ_LIMIT_REACHED" (any case).
const AsyncEventInfo* parse_async_event(std::string_view name);
// Every name, in table order (did-you-mean, help texts).
std::vector<std::string> async_event_names();

}  // namespace qpo::util
