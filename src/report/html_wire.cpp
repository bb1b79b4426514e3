#include "util/roce.h"
#include "report/html_wire.h"

#include <cstdio>

#include "report/html_escape.h"

namespace qpo::report::html {

namespace {

constexpr int kSeqWidth = 760, kSeqLeft = 170, kSeqRight = 590, kSeqRow = 15, kSeqTop = 38;

std::string seq_fmt(double v, const char* f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The class a packet's arrow and label get: what the reader's eye should catch first.
const char* seq_kind(const WirePacket& p) {
  if (p.note.find("NAK") != std::string::npos) return "nak";
  if (p.note.find("RETX") != std::string::npos) return "retx";
  if (p.note.find("ECN") != std::string::npos) return "ecn";
  if (p.note.find("ACK") != std::string::npos) return "ack";
  return "pkt";
}

}  // namespace

std::string svg_sequence(const WireSequence& q) {
  int height = kSeqTop + kSeqRow * static_cast<int>(q.packets.size()) + 12;
  std::string s = "<svg class=\"wire-seq\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kSeqWidth) +
                  "\" height=\"" + std::to_string(height) + "\" data-qp=\"" + escape(q.qp) + "\" data-peer=\"" +
                  escape(q.peer) + "\" data-packets=\"" + std::to_string(q.packets.size()) + "\">";
  s += "<style>.wire-seq text{font:11px monospace}.wire-seq .pkt{stroke:#555;fill:#555}.wire-seq .ack{stroke:#16a34a;fill:#16a34a}"
       ".wire-seq .nak{stroke:#dc2626;fill:#dc2626}.wire-seq .retx{stroke:#d97706;fill:#d97706}.wire-seq .ecn{stroke:#7c3aed;fill:#7c3aed}"
       ".wire-seq line.life{stroke:#999;stroke-dasharray:4 3}</style>";
  s += "<text x=\"" + std::to_string(kSeqLeft) + "\" y=\"14\" text-anchor=\"middle\">" + escape(q.qp) + " (host " + escape(q.host) +
       ")</text><text x=\"" + std::to_string(kSeqRight) + "\" y=\"14\" text-anchor=\"middle\">" + escape(q.peer) + "</text>";
  s += "<line class=\"life\" x1=\"" + std::to_string(kSeqLeft) + "\" y1=\"20\" x2=\"" + std::to_string(kSeqLeft) + "\" y2=\"" +
       std::to_string(height) + "\"/><line class=\"life\" x1=\"" + std::to_string(kSeqRight) + "\" y1=\"20\" x2=\"" +
       std::to_string(kSeqRight) + "\" y2=\"" + std::to_string(height) + "\"/>";
  int y = kSeqTop;
  for (const auto& p : q.packets) {
    const char* k = seq_kind(p);
    int from = p.to_peer ? kSeqLeft : kSeqRight, to = p.to_peer ? kSeqRight : kSeqLeft;
    int head = p.to_peer ? to - 6 : to + 6;
    s += "<g class=\"" + std::string(k) + "\" data-psn=\"" + std::to_string(p.psn) + "\" data-dir=\"" +
         (p.to_peer ? "out" : "in") + "\"><title>" + escape(p.what + " psn " + util::psn_hex(p.psn) + (p.note.empty() ? "" : ", " + p.note)) +
         "</title>";
    s += "<text x=\"4\" y=\"" + std::to_string(y + 4) + "\">" + seq_fmt(p.t_us, "%.1f us") + "</text>";
    s += "<line x1=\"" + std::to_string(from) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" + std::to_string(to) + "\" y2=\"" +
         std::to_string(y) + "\"/><polygon points=\"" + std::to_string(to) + "," + std::to_string(y) + " " + std::to_string(head) +
         "," + std::to_string(y - 3) + " " + std::to_string(head) + "," + std::to_string(y + 3) + "\"/>";
    std::string label = p.what.substr(p.what.find(' ') + 1) + " " + util::psn_hex(p.psn) + (p.note.empty() ? "" : "  " + p.note);
    s += "<text stroke=\"none\" x=\"" + std::to_string((kSeqLeft + kSeqRight) / 2) + "\" y=\"" + std::to_string(y - 2) +
         "\" text-anchor=\"middle\">" + escape(label) + "</text></g>";
    y += kSeqRow;
  }
  return s + "</svg>\n";
}

std::string wire_section(const RunReport& r) {
  if (r.wire.empty()) return "";
  std::string s = "<h2>On the wire</h2>\n<p>Each QP's packets with its peer as its host's capture saw them, in time order: "
                  "requests to the right, responses back; <span style=\"color:#d97706\">retransmissions</span>, "
                  "<span style=\"color:#dc2626\">NAKs</span>, <span style=\"color:#16a34a\">ACKs</span>, "
                  "<span style=\"color:#7c3aed\">ECN CE</span>.</p>\n";
  for (const auto& q : r.wire) {
    s += "<h3>" + escape(q.qp) + " &#8594; " + escape(q.peer) + "</h3>\n";
    if (!q.events.empty()) {
      s += "<ul>";
      for (const auto& e : q.events) s += "<li>packet event: " + escape(e) + "</li>";
      s += "</ul>\n";
    }
    if (q.total > q.packets.size())
      s += "<p>The first " + std::to_string(q.packets.size()) + " of " + std::to_string(q.total) + " packets.</p>\n";
    s += svg_sequence(q);
  }
  return s;
}

}  // namespace qpo::report::html
