// qpo probe [DEVICE]: what a live device's ibv_modify_qp answers against what the rule tables
// predict, case by case (src/probe), and the disagreements as a provider entry for
// schemas/providers.yaml. In the Soft-RoCE lab when this host has no RDMA device.
#include <unistd.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/html_report.h"
#include "cli/lab.h"
#include "cli/provider_source.h"
#include "probe/deviations.h"
#include "util/json_writer.h"
#include "verbs/verbs_error.h"
#include "util/strings.h"

namespace qpo::cli {

namespace {

struct ProbeOptions {
  std::string device = "auto";
  int port = 1;
  std::string out_file, expect;
  bool lab = false, no_lab = false;
  OutputOptions out;
};

const char kFooter[] =
    "For every QP type the device can create (RC, UC, UD; XRC and RAW_PACKET when it can, else\n"
    "listed as not probed, with the reason), qpo drives fresh QPs into RESET, INIT, RTR, RTS, SQD\n"
    "and ERR and, for each (cur, next) pair of the rule table, calls ibv_modify_qp with:\n"
    "  the minimal mask (the table's required attributes), each required bit removed, each\n"
    "  optional or forbidden bit added, IBV_QP_STATE alone on a pair the table forbids, and each\n"
    "  ranged attribute (qpo rules show --values) at and just past its bounds (the device's cap,\n"
    "  e.g. phys_port_cnt for port_num, where the rule names one), read back with ibv_query_qp\n"
    "  (stored as written, or truncated, rounded or ignored).\n"
    "Each answer is compared with qpo's prediction (the tables behind qpo rules check). Output: a\n"
    "summary line (cases, agreed, disagreed, time), then the disagreements as a table; progress\n"
    "goes to stderr. Every QP is destroyed before the next case: nothing stays allocated.\n"
    "Reading the table: `answered` is ibv_modify_qp's return (ok, or the errno name); for a value,\n"
    "\"ok, reads back N\" means ibv_query_qp returned N instead of the value written.\n\n"
    "--out FILE writes the disagreements as a provider entry in schemas/providers.yaml's format\n"
    "(merged into FILE when it exists: other providers and this one's description are kept).\n"
    "Use it to validate scenarios for that NIC:  qpo validate --provider FILE scenario.yaml\n"
    "--expect NAME|FILE compares the deviations with a recorded entry (schemas/providers.yaml's\n"
    "NAME, or FILE) and exits 1 naming every case the device now answers differently.\n\n"
    "Exit status: 0 probed (disagreements are data, not failures), 1 --expect differs,\n"
    "2 no such device or a system error.\n\n"
    "Examples:\n"
    "  qpo probe                                   the first active device (the lab's rxe0 without RDMA)\n"
    "  qpo probe mlx5_0 --out mlx5.yaml            record a NIC's deviations\n"
    "  qpo validate --provider mlx5.yaml my.yaml   warn where that NIC refuses a step (Q308)\n"
    "  qpo probe rxe0 --expect rxe                 has this kernel's rxe changed since it was recorded?";

std::string absolute(const std::string& p) {
  std::error_code ec;
  auto a = std::filesystem::absolute(p, ec);
  return ec ? p : a.string();
}

int in_lab(const ProbeOptions& o) {
  std::vector<std::string> args{"probe", o.device, "--no-lab", "--port", std::to_string(o.port), "--format",
                                o.out.format};
  std::vector<std::string> lab_args;
  if (!o.out_file.empty()) {
    // The guest writes only to a share: the output file's directory, at the same path.
    std::string out = absolute(o.out_file);
    lab_args = {"--out", std::filesystem::path(out).parent_path().string()};
    args.insert(args.end(), {"--out", out});
  }
  if (!o.expect.empty()) {
    std::error_code ec;
    args.insert(args.end(), {"--expect", std::filesystem::exists(o.expect, ec) ? absolute(o.expect) : o.expect});
  }
  return run_in_lab(args, lab_args);
}

void render_json(const probe::Report& r, const std::vector<std::string>& changed) {
  util::JsonWriter w;
  w.begin_object().field("device", r.device).field("provider", r.provider).field("kernel", r.kernel)
      .field("date", r.date).field("cases", static_cast<uint64_t>(r.results.size()))
      .field("agreed", static_cast<uint64_t>(r.agreed()))
      .field("disagreed", static_cast<uint64_t>(r.results.size() - r.agreed())).field("seconds", r.seconds);
  w.key("not_probed").begin_object();
  for (const auto& [type, why] : r.not_probed) w.field(type, why);
  w.end_object().key("disagreements").begin_array();
  const auto& rules = spec::RuleTable::builtin();
  for (const auto& res : r.results) {
    if (res.agreed()) continue;
    const auto& c = res.c;
    w.begin_object().field("type", rules.types()[static_cast<size_t>(c.type)].name)
        .field("from", spec::state_name(c.cur)).field("to", spec::state_name(c.next))
        .field("mask", rules.mask_names(c.mask, "|")).field("case", c.key.text())
        .field("predicted", c.predicted).field("answered", res.answered).end_object();
  }
  w.end_array().key("changed").begin_array();
  for (const auto& c : changed) w.value(c);
  w.end_array().end_object();
  std::cout << w.str() << "\n";
}

void render_text(const probe::Report& r) {
  std::cout << "probed " << util::printable(r.device, 200) << " (provider " << util::printable(r.provider, 200) << ", "
            << util::printable(r.kernel, 200) << ") on " << r.date << "\n";
  for (const auto& [type, why] : r.not_probed) std::cout << type << ": not probed: " << why << "\n";
  size_t agreed = r.agreed();
  std::ostringstream secs;
  secs << std::fixed << std::setprecision(1) << r.seconds;
  std::cout << r.results.size() << " cases, " << agreed << " agreed, " << r.results.size() - agreed
            << " disagreed, " << secs.str() << " s\n";
  auto table = probe::disagreement_table(r);
  if (!table.empty()) std::cout << "\n" << table;
}

// Merges the probe's entry into `path` (or a new file); returns false with a message on failure.
bool write_out(const std::string& path, const spec::ProviderEntry& found) {
  spec::ProviderTable table;
  std::error_code ec;
  try {
    if (std::filesystem::exists(path, ec)) table = load_provider_file(path);
  } catch (const std::exception& e) {
    std::cerr << "qpo: not overwriting " << util::printable(path, 1000) << ": " << util::printable(e.what()) << "\n";
    return false;
  }
  spec::ProviderEntry e = found;
  if (!table.entry(e.name))
    if (const auto* known = spec::ProviderTable::builtin().entry(e.name)) {
      e.description = known->description;
      e.unsupported = known->unsupported;
    }
  table.merge_probe(e);
  return write_report_file(path, table.to_yaml(), "--out");
}

int probe_here(const ProbeOptions& o) {
  probe::Options po;
  po.device = o.device;
  po.port = static_cast<uint8_t>(o.port);
  po.progress = [](const std::string& line) { std::cerr << "probe: " << line << "\n"; };
  probe::Report report;
  try {
    report = probe::run_probe(po);
  } catch (const verbs::VerbsError& e) {
    std::cerr << "qpo: " << e.what() << "\n";
    return kSystemError;
  }
  auto found = probe::entry_from(report);
  std::vector<std::string> changed;
  if (!o.expect.empty()) {
    try {
      changed = probe::compare_deviations(resolve_provider(o.expect, report.provider).entry, found);
    } catch (const std::exception& e) {
      std::cerr << "qpo: --expect: " << util::printable(e.what()) << "\n";
      return kSystemError;
    }
  }
  if (o.out.format == "json") render_json(report, changed);
  else render_text(report);
  if (!o.out_file.empty()) {
    if (!write_out(o.out_file, found)) return kSystemError;
    std::cerr << "qpo: wrote provider '" << util::printable(found.name, 200) << "' (" << found.deviations.size()
              << " deviations) to " << util::printable(o.out_file, 1000) << "\n";
  }
  if (!o.expect.empty()) {
    for (const auto& c : changed) std::cerr << "changed: " << c << "\n";
    if (!changed.empty()) {
      std::cerr << "qpo: " << changed.size() << " case(s) answered differently from " << util::printable(o.expect, 1000) << "\n";
      return kInvalid;
    }
    std::cerr << "qpo: every deviation matches " << util::printable(o.expect, 1000) << "\n";
  }
  return kOk;
}

}  // namespace

Action add_probe(CLI::App& app) {
  auto opts = std::make_shared<ProbeOptions>();
  auto* cmd = app.add_subcommand("probe", "Probe what a live device's ibv_modify_qp accepts, against the rule tables");
  cmd->footer(kFooter);
  cmd->add_option("device", opts->device, "Device name or GUID (default: the first with the port active)");
  cmd->add_option("--port", opts->port, "Port number")->check(CLI::Range(1, 255))->capture_default_str();
  cmd->add_option("--out", opts->out_file, "Write the deviations as a provider entry (schemas/providers.yaml format)");
  cmd->add_option("--expect", opts->expect, "Compare with a recorded provider entry: NAME or FILE; exit 1 on a change");
  cmd->add_flag("--lab", opts->lab, "Probe the Soft-RoCE lab guest's rxe0 even if this host has RDMA devices");
  cmd->add_flag("--no-lab", opts->no_lab, "Never use the lab: probe this host's device");
  add_output_options(*cmd, opts->out);
  return [opts]() {
    if (use_lab(opts->lab, opts->no_lab, "probing")) return in_lab(*opts);
    say_if_no_device("probing");
    return probe_here(*opts);
  };
}

}  // namespace qpo::cli
