// qpo: declarative RDMA queue-pair orchestrator. Subcommands live in cmd_*.cpp.
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "qpo - declarative RDMA queue-pair orchestrator\n\n"
      "Describe an RDMA experiment in a YAML scenario (hosts, devices, PDs, MRs, CQs, QPs and the\n"
      "attributes of every ibv_modify_qp transition); qpo checks it against the kernel's verbs\n"
      "rule tables before touching hardware and shows the exact verbs calls it will make.\n\n"
      "Start with:\n"
      "  qpo run scenarios/rc-write-pair.yaml          bring it up for real (Soft-RoCE lab if no RDMA here)\n"
      "  qpo validate scenarios/rc-write-pair.yaml     every mistake, with file:line:col\n"
      "  qpo plan scenarios/rc-write-pair.yaml         the verbs calls and attr_masks, per host\n"
      "  qpo rules show --type RC --from INIT --to RTR the kernel's table, as a learning tool\n"
      "  qpo devices                                    devices, ports, GIDs and caps (lab's rxe0 if no RDMA here)\n"
      "  qpo probe                                      what the device's ibv_modify_qp accepts vs the tables\n"
      "  echo 'RC INIT RTR IBV_QP_STATE|IBV_QP_AV' | qpo rules check   why did ibv_modify_qp say EINVAL?\n",
      "qpo"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "qpo 0.1.0");
  auto validate = qpo::cli::add_validate(app);
  auto plan = qpo::cli::add_plan(app);
  auto rules = qpo::cli::add_rules(app);
  auto run = qpo::cli::add_run(app);
  auto agent = qpo::cli::add_agent(app);
  auto test = qpo::cli::add_test(app);
  auto devices = qpo::cli::add_devices(app);
  auto compare = qpo::cli::add_compare(app);
  auto probe = qpo::cli::add_probe(app);
  auto report = qpo::cli::add_report(app);
  auto packets = qpo::cli::add_packets(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return qpo::cli::kSystemError;
  }
  std::string name;
  try {
    for (auto* sub : app.get_subcommands()) {
      name = sub->get_name();
      if (name == "validate") return validate();
      if (name == "plan") return plan();
      if (name == "rules") return rules();
      if (name == "run") return run();
      if (name == "agent") return agent();
      if (name == "test") return test();
      if (name == "devices") return devices();
      if (name == "compare") return compare();
      if (name == "probe") return probe();
      if (name == "report") return report();
      if (name == "packets") return packets();
    }
  } catch (const std::exception& e) {
    // A bug, not a user error: say where, so the report can be acted on.
    std::cerr << "qpo" << (name.empty() ? "" : " " + name) << ": internal error (a bug in qpo; please report it): "
              << e.what() << "\n";
    return qpo::cli::kSystemError;
  }
  return qpo::cli::kSystemError;
}
