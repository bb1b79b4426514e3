// qpo packets FILE.pcap...: the RoCEv2 packets of a capture (qpo run --capture, or any pcap of
// UDP 4791), one row per packet, grouped by the QP they were sent to.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "wire/listing.h"
#include "wire/pcap_io.h"

namespace qpo::cli {

Action add_packets(CLI::App& app) {
  struct Options {
    std::vector<std::string> files;
    OutputOptions out;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("packets", "List the RoCEv2 packets of a capture, per flow (qpo run --capture)");
  cmd->footer(
      "Each flow is the packets sent to one QP: requests to the responder, ACKs/NAKs and read responses\n"
      "back to the requester. Rows: time since the capture's first packet, opcode, PSN, payload bytes, the\n"
      "AETH (ACK, NAK PSN sequence error, RNR NAK with its timer) and MSN, RETX n for the nth\n"
      "retransmission of a PSN its flow already carried, ECN-CE when the IP header carries it.\n"
      "Flows are named by the run's QPs when FILE.pcap.qps.json (written by qpo run --capture) is there.\n"
      "Wireshark and tshark read the same files.\n"
      "--format json prints one object per file ({file, flows: [{name, src, dst, dest_qpn, retransmissions, packets}]}),\n"
      "a list of them for several files.\n"
      "Exit status: 0 listed, 2 a file cannot be read.\n\n"
      "Example:\n  qpo run --lab --capture cap scenarios/wire/rc-write-drop-psn4.yaml\n  qpo packets cap/*.pcap");
  cmd->add_option("pcap", opts->files, "pcap files")->required()->check(CLI::ExistingFile);
  add_output_options(*cmd, opts->out);
  return [opts]() {
    int rc = kOk;
    bool json = opts->out.format == "json", several = opts->files.size() > 1;
    std::string documents;  // --format json: one object per file, a list of them for several
    for (const auto& f : opts->files) {
      auto read = wire::read_pcap(f);
      if (!read.error.empty()) {
        std::cerr << "qpo packets: " << f << ": " << read.error << "\n";
        rc = kSystemError;
        continue;
      }
      std::string error;
      auto known = wire::read_known_qps(f, &error);
      if (!error.empty()) std::cerr << "qpo packets: " << error << " (flows named by address)\n";
      auto flows = wire::group_flows(read.packets, known);
      if (json) {
        documents += (documents.empty() ? "" : ",\n") + wire::listing_json(flows, f);
      } else {
        std::cout << f << ": " << read.packets.size() << " RoCEv2 packets";
        if (read.other) std::cout << " (" << read.other << " other frames left out)";
        std::cout << "\n" << wire::listing_text(flows);
      }
    }
    if (json && !documents.empty()) std::cout << (several ? "[\n" + documents + "\n]\n" : documents + "\n");
    return rc;
  };
}

}  // namespace qpo::cli
