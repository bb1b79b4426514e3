#include "wire/pcap_io.h"

#include <pcap/pcap.h>

#include <stdexcept>

namespace qpo::wire {

struct LiveCapture::Handles {
  pcap_t* pcap = nullptr;
  pcap_dumper_t* dump = nullptr;
  ~Handles() {
    if (dump) pcap_dump_close(dump);
    if (pcap) pcap_close(pcap);
  }
};

namespace {

// Only RoCEv2: the run's control connection and anything else on the netdev stay out.
constexpr const char* kFilter = "udp dst port 4791";

std::runtime_error capture_error(const std::string& netdev, const std::string& what, const std::string& why) {
  return std::runtime_error("capture on " + netdev + ": " + what + ": " + why);
}

}  // namespace

LiveCapture::LiveCapture(const std::string& netdev, const std::string& path)
    : netdev_(netdev), path_(path), h_(std::make_unique<Handles>()) {
  char err[PCAP_ERRBUF_SIZE] = {};
  h_->pcap = pcap_create(netdev.c_str(), err);
  if (!h_->pcap) throw capture_error(netdev, "pcap_create", err);
  // The kernel's ring holds frames of snaplen each: 64 KiB frames left room for ~250 packets
  // in 16 MiB and a 20-QP burst overflowed it. A RoCEv2 packet at path_mtu 4096 with its
  // headers and ICRC fits 4,608 bytes; 64 MiB then holds ~14,000 of them.
  pcap_set_snaplen(h_->pcap, 4608);
  pcap_set_promisc(h_->pcap, 0);
  pcap_set_immediate_mode(h_->pcap, 1);  // each packet as it comes: stop() must not wait for a buffer to fill
  pcap_set_buffer_size(h_->pcap, 64 << 20);
  pcap_set_tstamp_precision(h_->pcap, PCAP_TSTAMP_PRECISION_NANO);
  pcap_set_timeout(h_->pcap, 50);
  int rc = pcap_activate(h_->pcap);
  if (rc < 0) throw capture_error(netdev, "pcap_activate", pcap_geterr(h_->pcap));
  bpf_program prog{};
  if (pcap_compile(h_->pcap, &prog, kFilter, 1, PCAP_NETMASK_UNKNOWN) != 0)
    throw capture_error(netdev, std::string("filter '") + kFilter + "'", pcap_geterr(h_->pcap));
  rc = pcap_setfilter(h_->pcap, &prog);
  pcap_freecode(&prog);
  if (rc != 0) throw capture_error(netdev, "pcap_setfilter", pcap_geterr(h_->pcap));
  h_->dump = pcap_dump_open(h_->pcap, path.c_str());
  if (!h_->dump) throw capture_error(netdev, "cannot write " + path, pcap_geterr(h_->pcap));
  if (auto why = thread_.start([this] { loop(); })) throw capture_error(netdev, "no capture thread", *why);
}

LiveCapture::~LiveCapture() { stop(); }

void LiveCapture::loop() {
  // No exception leaves this thread: libpcap reports by return codes, kept in error_.
  auto on_packet = [](u_char* self, const pcap_pkthdr* h, const u_char* bytes) {
    auto* c = reinterpret_cast<LiveCapture*>(self);
    pcap_dump(reinterpret_cast<u_char*>(c->h_->dump), h, bytes);
    c->packets_.fetch_add(1, std::memory_order_relaxed);
  };
  while (!stopping_.load()) {
    int n = pcap_dispatch(h_->pcap, -1, on_packet, reinterpret_cast<u_char*>(this));
    if (n == PCAP_ERROR) {
      error_ = pcap_geterr(h_->pcap);
      return;
    }
    if (n == PCAP_ERROR_BREAK) break;
  }
  // What the kernel holds already: the last packets before stop() must be in the file.
  char err[PCAP_ERRBUF_SIZE];
  pcap_setnonblock(h_->pcap, 1, err);
  // A breakloop that came after libpcap's last check ends the first drain call instead: the
  // flag is cleared by that return, so one more round reads what is left.
  for (int breaks = 0;;) {
    int n = pcap_dispatch(h_->pcap, -1, on_packet, reinterpret_cast<u_char*>(this));
    if (n == PCAP_ERROR_BREAK && ++breaks < 3) continue;
    if (n <= 0) break;
  }
}

CaptureStats LiveCapture::stop() {
  if (stopped_) return stats_;
  stopped_ = true;
  stopping_ = true;
  // A blocked pcap_dispatch wakes up only for a packet or this (libpcap >= 1.10 wakes its poll).
  if (h_->pcap) pcap_breakloop(h_->pcap);
  thread_.join();
  if (error_.empty()) error_ = thread_.escaped();
  pcap_stat ps{};
  if (pcap_stats(h_->pcap, &ps) == 0) stats_.dropped = ps.ps_drop;
  stats_.packets = packets_.load();
  h_.reset();  // flushes and closes the file
  if (!error_.empty()) stats_.error = "capture on " + netdev_ + ": pcap_dispatch: " + error_;
  return stats_;
}

PcapRead read_pcap(const std::string& path) {
  PcapRead out;
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  if (!p) {
    out.error = err;
    return out;
  }
  int link = pcap_datalink(p);
  pcap_pkthdr* h = nullptr;
  const u_char* bytes = nullptr;
  int rc;
  while ((rc = pcap_next_ex(p, &h, &bytes)) == 1) {
    ++out.frames;
    auto pkt = decode_frame(bytes, h->caplen, link);
    if (!pkt) {
      ++out.other;
      continue;
    }
    pkt->time = static_cast<double>(h->ts.tv_sec) + static_cast<double>(h->ts.tv_usec) * 1e-9;
    pkt->frame_size = h->len;
    out.packets.push_back(*pkt);
  }
  if (rc == PCAP_ERROR) out.error = pcap_geterr(p);
  pcap_close(p);
  return out;
}

}  // namespace qpo::wire
