#include "exec/async_events.h"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <thread>

#include "exec/failure_note.h"
#include "exec/steps.h"
#include "util/async_event_names.h"

namespace qpo::exec {

const char* event_name(int e) { return util::async_event_name(e); }

namespace {

using Clock = std::chrono::steady_clock;

// The scenario object an event's element points at (ibv_get_async_event(3)): its name (empty
// when it is not this run's) and how messages call it.
std::pair<std::string, std::string> element_of(const RunState& st, const DeviceState& d, const ibv_async_event& ev) {
  const std::string& device = d.facts->name;
  const auto* info = util::async_event(ev.event_type);
  auto kind = info ? info->object : util::EventObject::Qp;
  switch (kind) {
    case util::EventObject::Cq:
      if (const auto* c = st.cqs.find_if([&](const verbs::Cq* c) { return c->get() == ev.element.cq; })) {
        const std::string& name = (*c)->name();
        return {name, "CQ '" + name + "' (a completion did not fit: it holds " + std::to_string(ev.element.cq->cqe) + ")"};
      }
      return {"", "a CQ of another owner"};
    case util::EventObject::Srq:
      if (const auto* s = st.srqs.find_if([&](const SrqState& s) { return s.srq && s.srq->get() == ev.element.srq; }))
        return {s->srq->name(), "SRQ '" + s->srq->name() + "'"};
      return {"", "an SRQ of another owner"};
    case util::EventObject::Port: {
      std::string about = "port " + std::to_string(ev.element.port_num) + " of device '" + device + "'";
      return {ev.element.port_num == static_cast<int>(d.facts->port) ? device : "", about};
    }
    case util::EventObject::Device: return {device, "device '" + device + "'"};
    case util::EventObject::Qp: {
      const QpState* found = st.qps.find_if([&](const QpState& q) { return q.qp && q.qp->get() == ev.element.qp; });
      if (found) return {found->facts->name, "QP '" + found->facts->name + "'"};
      return {"", "a QP of another owner"};
    }
  }
  return {"", "?"};
}

// Reads what the devices have queued into the journal (the caller holds its lock).
size_t drain(const RunState& st) {
  size_t added = 0;
  st.devices.for_each([&](plan::ObjectId, const DeviceState& d) {
    if (!d.res) return;
    while (auto ev = take_async_event(d.ctx().get(), 0)) {
      auto [object, about] = element_of(st, d, *ev);
      st.events.seen.push_back({ev->event_type, std::move(object), std::move(about), Clock::now()});
      ++added;
    }
  });
  return added;
}

// Blocks until a device's async fd is readable or wait_ms passed.
void await_any(const RunState& st, int wait_ms) {
  std::vector<pollfd> fds;
  st.devices.for_each([&](plan::ObjectId, const DeviceState& d) {
    if (d.res) fds.push_back({d.ctx().get()->async_fd, POLLIN, 0});
  });
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    return;
  }
  poll(fds.data(), fds.size(), wait_ms);
}

SeenEvent* untaken(const RunState& st, int type, const std::string& object) {
  for (auto& e : st.events.seen)
    if (!e.taken && e.type == type && e.object == object) return &e;
  return nullptr;
}

// "IBV_EVENT_SRQ_LIMIT_REACHED on SRQ 'srq0', IBV_EVENT_SQ_DRAINED on QP 'qa'": what came and
// no step took (the candidates for a mistake in `on:` or the event's name).
std::string others(const RunState& st) {
  std::string out;
  for (const auto& e : st.events.seen)
    if (!e.taken) out += (out.empty() ? "" : ", ") + std::string(event_name(e.type)) + " on " + e.about;
  return out;
}

// How a step's object is called in messages: "SRQ 'srq0'", "QP 'qa'", "device 'da' (port 1)".
std::string object_text(const RunState& st, const plan::Step& step) {
  const auto* info = util::async_event(step.extra().event_value);
  auto kind = info ? info->object : util::EventObject::Qp;
  if (kind == util::EventObject::Port) {
    const auto* d = st.devices.find(step.id);
    std::string port = d && d->facts ? std::to_string(d->facts->port) : "?";
    return "port " + port + " of device '" + step.object + "'";
  }
  return std::string(util::event_object_name(kind)) + " '" + step.object + "'";
}

report::StepResult line(const RunState& st, const plan::Step& step) {
  report::StepResult r;
  r.host = st.host;
  r.phase = "transitions";
  r.verb = step.verb;
  r.object = step.object;
  r.detail = std::string(step.kind == plan::StepKind::ForbidEvent ? "forbid " : "expect ") + step.extra().event;
  return r;
}

long long ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace

std::optional<ibv_async_event> take_async_event(ibv_context* ctx, int wait_ms) {
  int flags = fcntl(ctx->async_fd, F_GETFL);
  if (!(flags & O_NONBLOCK)) fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
  pollfd pfd{ctx->async_fd, POLLIN, 0};
  if (poll(&pfd, 1, wait_ms) <= 0) return std::nullopt;
  ibv_async_event ev{};
  if (ibv_get_async_event(ctx, &ev) != 0) return std::nullopt;
  ibv_async_event copy = ev;  // the type and the element pointer stay valid to read
  ibv_ack_async_event(&ev);
  return copy;
}

size_t collect_async_events(const RunState& st, int wait_ms) {
  {
    std::lock_guard lock(st.events.m);
    if (size_t n = drain(st); n || wait_ms <= 0) return n;
  }
  await_any(st, wait_ms);
  std::lock_guard lock(st.events.m);
  return drain(st);
}

std::string describe_async_events(const RunState& st) {
  collect_async_events(st, 0);
  std::lock_guard lock(st.events.m);
  std::string out;
  for (auto& e : st.events.seen) {
    if (e.described || e.taken) continue;
    e.described = true;
    out += std::string(out.empty() ? "; the device raised " : ", ") + event_name(e.type) + " on " + e.about;
  }
  return out;
}

bool wait_event(RunState& st, report::RunReport& log, const plan::Step& step, const RunOptions& o) {
  auto r = line(st, step);
  uint64_t within = step.extra().within_ms ? step.extra().within_ms : static_cast<uint64_t>(std::max(o.timeout_ms, 0));
  collect_async_events(st, 0);  // what is queued already came before this step
  auto start = Clock::now();
  auto deadline = start + std::chrono::milliseconds(within);
  bool stopped = false;  // cut short by a stop (another host failed): a symptom, said so (exec/failure_note.h)
  for (;;) {
    collect_async_events(st, 0);
    {
      std::lock_guard lock(st.events.m);
      if (auto* e = untaken(st, step.extra().event_value, step.object)) {
        e->taken = true;
        long long ms = ms_between(start, e->at);
        r.message = step.extra().event + " on " + e->about +
                    (e->at >= start ? " after " + std::to_string(ms) + " ms" : " (it came before this step)");
        r.micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
        log.add(std::move(r));
        return true;
      }
    }
    auto now = Clock::now();
    if (now >= deadline) break;
    if (stop_now(st)) {
      stopped = true;
      break;
    }
    await_any(st, static_cast<int>(std::min<long long>(50, ms_between(now, deadline) + 1)));
  }
  std::string seen;
  {
    std::lock_guard lock(st.events.m);
    seen = others(st);
  }
  r.status = report::StepStatus::Failed;
  r.micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  std::string what = step.extra().event + " on " + object_text(st, step);
  r.message = (stopped ? stopped_while_waiting(what) : "no " + what + " within " + std::to_string(within) + " ms") +
              (seen.empty() ? "" : " (saw: " + seen + ")");
  log.fail(r.message);
  log.add(std::move(r));
  return false;
}

bool forbid_event(RunState& st, report::RunReport& log, const plan::Step& step) {
  auto r = line(st, step);
  collect_async_events(st, 0);  // what is queued already came before this step
  auto start = Clock::now();
  auto deadline = start + std::chrono::milliseconds(step.extra().within_ms);
  SeenEvent got;
  bool came = false;
  for (;;) {
    collect_async_events(st, 0);
    {
      std::lock_guard lock(st.events.m);
      if (auto* e = untaken(st, step.extra().event_value, step.object)) {
        e->taken = true;
        got = *e;
        came = true;
        break;
      }
    }
    auto now = Clock::now();
    if (now >= deadline || stop_now(st)) break;
    await_any(st, static_cast<int>(std::min<long long>(50, ms_between(now, deadline) + 1)));
  }
  r.micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  if (!came) {
    r.message = "no " + step.extra().event + " on " + object_text(st, step) +
                (step.extra().within_ms ? " within " + std::to_string(step.extra().within_ms) + " ms" : " so far");
    log.add(std::move(r));
    return true;
  }
  long long ms = ms_between(start, got.at);
  r.status = report::StepStatus::Failed;
  r.message = "forbidden " + step.extra().event + " on " + got.about +
              (got.at >= start ? " came " + std::to_string(ms) + " ms into the step" : " came before this step");
  log.fail(r.message);
  log.add(std::move(r));
  return false;
}

}  // namespace qpo::exec
