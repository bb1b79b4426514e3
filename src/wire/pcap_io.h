#pragma once
// RoCEv2 packets to and from pcap files (libpcap): a live capture on a netdev that writes
// every UDP 4791 packet into a file while a run goes on, and the reader qpo's listing and
// analyzers use. Files are nanosecond pcap, which Wireshark and tshark read.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/thread_group.h"
#include "wire/roce_packet.h"

namespace qpo::wire {

struct CaptureStats {
  uint64_t packets = 0;    // written to the file
  uint64_t dropped = 0;    // the kernel's count of packets the capture missed (buffer full)
  std::string error;       // libpcap failed while capturing (the file holds what came before)
};

// A capture of RoCEv2 packets on `netdev` into `path`, from construction until stop() (or
// destruction). Construction throws std::runtime_error naming the netdev and libpcap's reason
// (no permission, no such device). A thread of its own writes the file.
class LiveCapture {
 public:
  LiveCapture(const std::string& netdev, const std::string& path);
  ~LiveCapture();
  LiveCapture(const LiveCapture&) = delete;
  LiveCapture& operator=(const LiveCapture&) = delete;
  // Reads what the kernel still holds, closes the file and returns the counts; once. Never throws.
  CaptureStats stop();
  const std::string& netdev() const { return netdev_; }
  const std::string& path() const { return path_; }

 private:
  void loop();
  std::string netdev_, path_;
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> packets_{0};
  std::string error_;  // the thread's, reported by stop()
  util::ThreadGroup thread_;  // one: the writer
  bool stopped_ = false;
  CaptureStats stats_;
};

struct PcapRead {
  std::vector<RocePacket> packets;
  uint64_t frames = 0, other = 0;  // frames read, of which not RoCEv2
  std::string error;               // the file could not be read
};
PcapRead read_pcap(const std::string& path);

}  // namespace qpo::wire
