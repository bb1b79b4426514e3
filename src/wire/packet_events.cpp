#include "wire/packet_events.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

extern "C" {
#include "wire/bpf/packet_events.h"
}

namespace qpo::wire {

static_assert(PacketEvents::kMaxRules == QPO_MAX_RULES, "the loader's limit is the program's rule array");
static_assert(kDelayPrioHandle == QPO_PRIO_HANDLE, "the program's delay class is under this qdisc");

extern const unsigned char kPacketEventsObject[];
extern const size_t kPacketEventsObjectSize;

namespace {

// libbpf's messages (the verifier's log among them) are kept for the error, not printed.
std::mutex g_log_mutex;
// Per thread: two hosts' sessions may load programs at once, and libbpf's print callback is global.
thread_local std::string* g_log = nullptr;
int keep_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG || !g_log) return 0;
  // The verifier's log comes as one argument of many kilobytes: sized first, then written.
  va_list again;
  va_copy(again, args);
  int n = vsnprintf(nullptr, 0, format, args);
  if (n > 0) {
    std::string text(static_cast<size_t>(n) + 1, '\0');
    vsnprintf(text.data(), text.size(), format, again);
    text.resize(static_cast<size_t>(n));
    g_log->append(text);
  }
  va_end(again);
  if (g_log->size() > 65536) g_log->erase(0, g_log->size() - 65536);
  return 0;
}

std::string last_lines(const std::string& log, size_t lines) {
  size_t at = log.size();
  while (lines-- > 0 && at > 0) {
    at = log.rfind('\n', at - 1);
    if (at == std::string::npos) return log;
  }
  return log.substr(at + 1);
}

}  // namespace

struct PacketEvents::Impl {
  bpf_object* obj = nullptr;
  bpf_tc_hook hook{};
  bpf_tc_opts opts{};
  bool hook_made = false, attached = false;
  int states_fd = -1, hits_fd = -1, count_fd = -1;
  size_t rules = 0;
  ~Impl() {
    if (obj) bpf_object__close(obj);
  }
};

PacketEvents::PacketEvents(const std::string& netdev, const std::vector<EventRule>& rules, EventHook hook) : netdev_(netdev) {
  auto fail = [&](const std::string& what, int err, const std::string& log = "") {
    delete impl_;
    impl_ = nullptr;
    std::string why = "packet events on " + netdev + ": " + what + ": " + std::strerror(err < 0 ? -err : err);
    // The verifier's verdict sits just before the end of its log; else libbpf's own last words.
    size_t end = log.find("-- END PROG LOAD LOG --");
    if (!log.empty()) why += " (libbpf: " + last_lines(end == std::string::npos ? log : log.substr(0, end), 3) + ")";
    throw std::runtime_error(why);
  };
  if (rules.size() > kMaxRules) throw std::runtime_error("packet events on " + netdev + ": more than 32 rules");
  unsigned ifindex = if_nametoindex(netdev.c_str());
  if (!ifindex) throw std::runtime_error("packet events: no netdev " + netdev);
  impl_ = new Impl;
  std::string log;
  {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log = &log;
    libbpf_set_print(keep_log);
    impl_->obj = bpf_object__open_mem(kPacketEventsObject, kPacketEventsObjectSize, nullptr);
    int err = impl_->obj ? 0 : -errno;
    if (!err) err = bpf_object__load(impl_->obj);
    g_log = nullptr;
    // QPO_BPF_LOG=FILE keeps libbpf's whole log (the verifier's listing) for a refused program.
    if (err && std::getenv("QPO_BPF_LOG")) {
      FILE* f = std::fopen(std::getenv("QPO_BPF_LOG"), "w");
      if (f) {
        std::fputs(log.c_str(), f);
        std::fclose(f);
      }
    }
    if (err) fail(impl_->obj ? "bpf_object__load" : "bpf_object__open_mem", err, log);
  }
  auto map_fd = [&](const char* name) {
    bpf_map* m = bpf_object__find_map_by_name(impl_->obj, name);
    return m ? bpf_map__fd(m) : -1;
  };
  int rules_fd = map_fd("qpo_rules");
  impl_->states_fd = map_fd("qpo_states");
  impl_->hits_fd = map_fd("qpo_hits");
  impl_->count_fd = map_fd("qpo_hit_count");
  if (rules_fd < 0 || impl_->states_fd < 0 || impl_->hits_fd < 0 || impl_->count_fd < 0) fail("a map of the program is missing", ENOENT);
  for (uint32_t i = 0; i < rules.size(); ++i) {
    const EventRule& r = rules[i];
    qpo_rule raw{1, r.dest_qpn, static_cast<__u32>(r.match), r.value, r.transmission, static_cast<__u32>(r.action),
                 static_cast<__u32>(r.packets), 0};
    if (bpf_map_update_elem(rules_fd, &i, &raw, BPF_ANY) != 0) fail("bpf_map_update_elem(qpo_rules)", errno);
  }
  impl_->rules = rules.size();
  bpf_program* prog = bpf_object__find_program_by_name(impl_->obj, "qpo_packet_events");
  if (!prog) fail("the program is missing", ENOENT);
  impl_->hook.sz = sizeof(bpf_tc_hook);
  impl_->hook.ifindex = static_cast<int>(ifindex);
  int err = 0;
  if (hook == EventHook::Ingress) {
    impl_->hook.attach_point = BPF_TC_INGRESS;
    err = bpf_tc_hook_create(&impl_->hook);
    if (err && err != -EEXIST) fail("bpf_tc_hook_create (clsact qdisc)", err);
    impl_->hook_made = err == 0;
  } else {
    impl_->hook.attach_point = BPF_TC_CUSTOM;  // a filter of the caller's prio qdisc
    impl_->hook.parent = QPO_PRIO_HANDLE << 16;
  }
  impl_->opts.sz = sizeof(bpf_tc_opts);
  impl_->opts.handle = 0x5150;    // "QP": qpo's own filter among any others on the hook
  impl_->opts.priority = 0x5150;
  impl_->opts.prog_fd = bpf_program__fd(prog);
  err = bpf_tc_attach(&impl_->hook, &impl_->opts);
  if (err) {
    destroy_hook();
    fail(hook == EventHook::Ingress ? "bpf_tc_attach (ingress)" : "bpf_tc_attach (egress prio qdisc)", err);
  }
  impl_->attached = true;
}

std::string PacketEvents::remove() {
  if (!impl_) return "";
  std::string why;
  if (impl_->attached) {
    bpf_tc_opts o{};
    o.sz = sizeof(bpf_tc_opts);
    o.handle = impl_->opts.handle;
    o.priority = impl_->opts.priority;
    int err = bpf_tc_detach(&impl_->hook, &o);
    if (err) why = "bpf_tc_detach on " + netdev_ + ": " + std::strerror(-err);
    impl_->attached = false;
  }
  std::string hook = destroy_hook();
  return why.empty() ? hook : why;
}

std::string PacketEvents::destroy_hook() {
  if (!impl_ || !impl_->hook_made) return "";
  // The clsact qdisc was made for this program: it goes (with whatever it holds now). Both
  // attach points: libbpf removes the qdisc only then (one alone flushes that hook's filters).
  impl_->hook.attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS);
  int err = bpf_tc_hook_destroy(&impl_->hook);
  impl_->hook_made = false;
  return err ? "removing the clsact qdisc of " + netdev_ + ": " + std::strerror(-err) : "";
}

PacketEvents::~PacketEvents() {
  remove();
  delete impl_;
}

std::vector<uint32_t> PacketEvents::hits_per_rule() const {
  std::vector<uint32_t> out;
  if (!impl_) return out;
  for (uint32_t i = 0; i < impl_->rules; ++i) {
    qpo_state s{};
    bpf_map_lookup_elem(impl_->states_fd, &i, &s);
    out.push_back(s.hits);
  }
  return out;
}

std::vector<EventHit> PacketEvents::hits() const {
  std::vector<EventHit> out;
  if (!impl_) return out;
  uint32_t zero = 0, count = 0;
  bpf_map_lookup_elem(impl_->count_fd, &zero, &count);
  for (uint32_t i = 0; i < count && i < QPO_MAX_HITS; ++i) {
    qpo_hit h{};
    if (bpf_map_lookup_elem(impl_->hits_fd, &i, &h) != 0) break;
    out.push_back({h.ns, h.rule, h.psn, h.transmission, static_cast<uint8_t>(h.opcode)});
  }
  return out;
}

}  // namespace qpo::wire
