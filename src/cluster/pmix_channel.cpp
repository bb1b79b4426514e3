#include "cluster/pmix_channel.h"

#include <pmix.h>

#include <iostream>
#include <utility>

#include "cluster/codec.h"
#include "util/json_writer.h"

namespace qpo::cluster {

namespace {

std::string pmix_error(const char* call, pmix_status_t rc) {
  return std::string(call) + " failed: " + PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")";
}

// A JSON string's text ("\"a\\\"b\"") for a message assembled by hand around a raw payload.
std::string json_string(const std::string& s) {
  util::JsonWriter w(false);
  w.value(s);
  return w.str();
}

}  // namespace

std::unique_ptr<PmixClient> PmixClient::connect(std::string* why) {
  std::unique_ptr<PmixClient> c(new PmixClient);
  pmix_proc_t me;
  if (pmix_status_t rc = PMIx_Init(&me, nullptr, 0); rc != PMIX_SUCCESS) {
    *why = pmix_error("PMIx_Init", rc) + ": qpo run --pmix needs a PMIx launcher (mpirun, srun --mpi=pmix)";
    return nullptr;
  }
  c->nspace_ = me.nspace;
  c->rank_ = me.rank;
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* v = nullptr;
  if (pmix_status_t rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &v); rc != PMIX_SUCCESS || !v || v->type != PMIX_UINT32) {
    *why = rc != PMIX_SUCCESS ? pmix_error("PMIx_Get(PMIX_JOB_SIZE)", rc) : "PMIx_Get(PMIX_JOB_SIZE) gave no uint32";
    if (v) PMIX_VALUE_RELEASE(v);
    PMIx_Finalize(nullptr, 0);
    c->nspace_.clear();
    return nullptr;
  }
  c->size_ = v->data.uint32;
  PMIX_VALUE_RELEASE(v);
  return c;
}

PmixClient::~PmixClient() {
  if (!nspace_.empty()) PMIx_Finalize(nullptr, 0);
}

bool PmixClient::publish(const std::string& key, const std::string& value, int timeout_s, std::string* why) {
  pmix_value_t mine;
  PMIX_VALUE_LOAD(&mine, value.c_str(), PMIX_STRING);  // copied by the load
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &mine);
  PMIX_VALUE_DESTRUCT(&mine);
  if (rc != PMIX_SUCCESS) {
    *why = pmix_error("PMIx_Put", rc);
    return false;
  }
  if (rc = PMIx_Commit(); rc != PMIX_SUCCESS) {
    *why = pmix_error("PMIx_Commit", rc);
    return false;
  }
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, nspace_.c_str(), PMIX_RANK_WILDCARD);
  pmix_info_t info[2];
  bool collect = true;
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout_s, PMIX_INT);
  rc = PMIx_Fence(&job, 1, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc != PMIX_SUCCESS) {
    *why = rc == PMIX_ERR_TIMEOUT ? "no answer from every rank within " + std::to_string(timeout_s) + " s (PMIx_Fence)"
                                  : pmix_error("PMIx_Fence", rc);
    return false;
  }
  return true;
}

bool PmixClient::read(uint32_t rank, const std::string& key, std::string* value, std::string* why) {
  pmix_proc_t peer;
  PMIX_LOAD_PROCID(&peer, nspace_.c_str(), rank);
  pmix_value_t* v = nullptr;
  pmix_status_t rc = PMIx_Get(&peer, key.c_str(), nullptr, 0, &v);
  if (rc != PMIX_SUCCESS || !v || v->type != PMIX_STRING) {
    std::string call = "PMIx_Get(rank " + std::to_string(rank) + ", " + key + ")";
    *why = rc != PMIX_SUCCESS ? pmix_error(call.c_str(), rc) : call + " gave no string";
    if (v) PMIX_VALUE_RELEASE(v);
    return false;
  }
  *value = v->data.string ? v->data.string : "";
  PMIX_VALUE_RELEASE(v);
  return true;
}

bool PmixClient::all_gather(const std::string& key, const std::string& value, int timeout_s,
                            std::vector<std::string>* values, std::string* why) {
  if (!publish(key, value, timeout_s, why)) return false;
  values->assign(size_, "");
  for (uint32_t r = 0; r < size_; ++r)
    if (!read(r, key, &(*values)[r], why)) return false;
  return true;
}

// A rank's failure, told to the job: qpo's own event code (PMIx leaves the codes below
// PMIX_EXTERNAL_ERR_BASE to applications), the abort text in PMIX_EVENT_TEXT_MESSAGE.
constexpr pmix_status_t kQpoAbortEvent = PMIX_EXTERNAL_ERR_BASE - 417;

struct PmixNotice {
  std::string text;
  pmix_info_t info;
  explicit PmixNotice(std::string t) : text(std::move(t)) {
    PMIX_INFO_LOAD(&info, PMIX_EVENT_TEXT_MESSAGE, text.c_str(), PMIX_STRING);
  }
  ~PmixNotice() { PMIX_INFO_DESTRUCT(&info); }
  PmixNotice(const PmixNotice&) = delete;
  PmixNotice& operator=(const PmixNotice&) = delete;
};

struct PmixEvents {
  static inline PmixChannel* channel = nullptr;  // the process's one channel (the handler has no user data)

  // PMIx's progress thread: another rank failed. Its text becomes this rank's stop request.
  static void on_abort(size_t, pmix_status_t, const pmix_proc_t* source, pmix_info_t info[], size_t ninfo,
                       pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t done, void* done_data) {
    PmixChannel* ch = channel;
    if (ch && source && source->rank != ch->client_.rank() && !ch->stop_.requested.load()) {
      std::string text = "aborted: a rank failed";
      for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) && info[i].value.type == PMIX_STRING && info[i].value.data.string)
          text = info[i].value.data.string;
      ch->stop_.why = text;                    // written once, before the flag
      ch->stop_.requested.store(true);
    }
    if (done) done(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, done_data);
  }
  static void sent(pmix_status_t, void*) {}  // the notification went out (nothing to do)
};

PmixChannel::PmixChannel(PmixClient& client, std::vector<std::string> hosts, int timeout_s)
    : client_(client), hosts_(std::move(hosts)), timeout_s_(timeout_s) {
  PmixEvents::channel = this;
  pmix_status_t code = kQpoAbortEvent;
  // No callback: the registration is done when this returns (its id, or an error).
  pmix_status_t rc = PMIx_Register_event_handler(&code, 1, nullptr, 0, &PmixEvents::on_abort, nullptr, nullptr);
  if (rc >= 0) {
    handler_ = static_cast<size_t>(rc);
    handler_registered_ = true;
  } else {
    std::cerr << "qpo: --pmix: " << pmix_error("PMIx_Register_event_handler", rc)
              << ": another rank's failure reaches this one only at the next meeting\n";
  }
}

PmixChannel::~PmixChannel() {
  if (handler_registered_) PMIx_Deregister_event_handler(handler_, nullptr, nullptr);
  PmixEvents::channel = nullptr;
}

void PmixChannel::note_failure(const std::string& note) {
  note_ = note;
  if (note.empty() || notice_) return;
  // What the others' sessions log, as the controller words it.
  notice_ = std::make_unique<PmixNotice>("aborted: " + note);
  pmix_proc_t me;
  PMIX_LOAD_PROCID(&me, client_.nspace().c_str(), client_.rank());
  // The ranks on this node. OpenMPI 4.1's mpirun (ORTE) never completes a job-wide
  // (PMIX_RANGE_NAMESPACE) notification, and every PMIx call of the job hangs behind it
  // (seen with Debian 12's openmpi-bin 4.1.4 and libpmix2 4.2.2); ranks on other nodes learn
  // of the failure from the next round's parts instead.
  if (pmix_status_t rc = PMIx_Notify_event(kQpoAbortEvent, &me, PMIX_RANGE_LOCAL, &notice_->info, 1, &PmixEvents::sent, nullptr);
      rc != PMIX_SUCCESS)
    std::cerr << "qpo: --pmix: " << pmix_error("PMIx_Notify_event", rc) << ": the other ranks learn of it at the next meeting\n";
}

bool PmixChannel::round(const std::string& kind, bool ok, const std::string& payload, std::vector<Part>* parts) {
  // {"type":"round","kind":..,"ok":..,"note":..,"payload":PAYLOAD}: the payload is JSON already.
  std::string mine = "{\"type\":\"round\",\"kind\":" + json_string(kind) + ",\"ok\":" + (ok ? "true" : "false") +
                     ",\"note\":" + json_string(ok ? "" : note_) + ",\"payload\":" + payload + "}";
  if (fence_failed_) return false;  // the ranks' fences may be out of step: no more of them
  std::string key = "qpo.round." + std::to_string(++rounds_);
  std::vector<std::string> texts;
  std::string why;
  if (!client_.all_gather(key, mine, timeout_s_, &texts, &why)) {
    fence_failed_ = true;
    failure_ = "the ranks' meeting '" + kind + "' failed: " + why;
    return false;
  }
  parts->clear();
  std::string not_ok, out_of_step;
  bool noted = false;  // not_ok is a rank's own note
  for (size_t r = 0; r < texts.size(); ++r) {
    const std::string host = r < hosts_.size() ? hosts_[r] : "rank " + std::to_string(r);
    std::string error;
    auto n = parse_message(texts[r], &error);
    if (!n) {
      failure_ = "host " + host + " sent a part qpo cannot read: " + error;
      return false;
    }
    Part p;
    p.kind = field_or<std::string>(*n, "kind", "");
    p.ok = field_or<bool>(*n, "ok", false);
    p.note = field_or<std::string>(*n, "note", "");
    for (auto& m : n->members)  // moved, not copied: a rank's directory is its largest part
      if (m.key == "payload") p.payload = std::move(m.value);
    // The rank that failed on its own says why; one only stopped by it says nothing.
    if (!p.ok && !p.note.empty() && (not_ok.empty() || !noted)) not_ok = p.note, noted = true;
    if (!p.ok && not_ok.empty()) not_ok = "host " + host + " failed";
    if (p.kind != kind && out_of_step.empty())
      out_of_step = "host " + host + " was at '" + p.kind + "', this host at '" + kind + "'";
    parts->push_back(std::move(p));
  }
  if (!not_ok.empty()) {
    failure_ = not_ok;
    return false;
  }
  if (!out_of_step.empty()) {
    failure_ = "the hosts are out of step: " + out_of_step;
    return false;
  }
  return true;
}

bool PmixChannel::exchange(exec::Directory mine, bool ok, exec::Directory* all) {
  util::JsonWriter w(false);
  write_directory(w, mine);
  std::vector<Part> parts;
  if (!round("exchange", ok, w.str(), &parts)) return false;
  try {
    for (auto& p : parts) all->merge(read_directory(p.payload));
  } catch (const std::exception& e) {
    failure_ = std::string("a rank's directory is not readable: ") + e.what();
    return false;
  }
  return true;
}

bool PmixChannel::barrier(const std::string& name, bool ok) {
  std::vector<Part> parts;
  return round("barrier " + name, ok, "null", &parts);
}

bool PmixChannel::gather(const std::string& name, const std::string& note, std::vector<std::string>* notes) {
  std::vector<Part> parts;
  if (!round("gather " + name, true, json_string(note), &parts)) return false;
  notes->clear();
  for (const auto& p : parts) notes->push_back(p.payload.is(util::json::Kind::String) ? p.payload.text : "");
  return true;
}

void PmixChannel::last_meeting() {
  std::string why;
  if (fence_failed_) return;
  if (!client_.publish("qpo.done", "", timeout_s_, &why)) {
    fence_failed_ = true;
    failure_ = "the ranks' last meeting failed: " + why;
  }
}

bool PmixChannel::gather_reports(const std::string& mine, std::vector<std::string>* all) {
  std::string why;
  const char* key = "qpo.reports";
  all->clear();
  if (fence_failed_) return false;
  bool ok = client_.publish(key, mine, timeout_s_, &why);
  fence_failed_ = !ok;
  if (ok && client_.rank() == 0) {  // only rank 0 reads them: N reports to one rank, not N^2
    all->assign(client_.size(), "");
    for (uint32_t r = 0; ok && r < client_.size(); ++r) ok = client_.read(r, key, &(*all)[r], &why);
  }
  if (!ok) failure_ = "the ranks' reports could not be gathered: " + why;
  return ok;
}

}  // namespace qpo::cluster
