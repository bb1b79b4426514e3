#pragma once
// A suite is a set of scenario files. Each runs as its own `qpo run` child process (so a
// crash, hang or leak in one cannot take the others down), with a timeout, in parallel
// where asked. Its verdict is the child's: pass, fail, or skipped with the device's reason.
#include <string>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "util/source_text.h"

namespace qpo::suite {

struct Case {
  std::string file, name;
  std::vector<std::string> tags;
  std::string outcome;   // pass | fail | skip | error
  std::string reason;    // why not pass (first line), or the skip reason
  std::string output;    // the child's full output, for failures
  double seconds = 0;
  size_t hosts = 0;      // hosts that own a device (1 when devices name none; 0 when it does not parse)
  // The scenario's first `externals:` entry: a stock tool qpo test does not start, so its run
  // is told to skip once the file is valid (qpo run --skip-externals; "" when it has none).
  std::string external;
  // A matrix case (suite/matrix.h): its parameters, and the overrides that make it, each with
  // where its value is written. `name` is the scenario's name + "[p=v,...]".
  std::vector<std::pair<std::string, std::string>> parameters;
  std::vector<std::string> overrides;
  std::vector<util::SourceLoc> origins;
  std::string results;   // the JSON result its qpo run wrote (--results), "" when none
  // JUnit <properties>: the parameters, then figures ("write_bw.bw_avg" -> "123.4 MB/s").
  std::vector<std::pair<std::string, std::string>> properties;
};

struct Options {
  std::vector<std::string> paths;      // files or directories (searched for *.yaml)
  std::vector<std::string> tags;       // run only cases with one of these tags
  std::string name_filter;             // substring of the name or file
  int jobs = 1;
  int timeout_s = 300;
  std::string qpo;                     // binary to run cases with
  std::vector<std::string> run_args;   // extra `qpo run` arguments (--no-lab ...)
  bool tap = false;
  std::string matrix_file;             // --matrix FILE: its matrix replaces the scenarios' own
  std::string results_dir;             // each case's qpo run writes its JSON result here (--results)
  bool keep_results = false;           // qpo test --results DIR: results_dir is the user's, kept
};

// Collects the cases (name and tags read from each file); errors go to `problems`. A file with
// a matrix (its own, or --matrix's) is one case per combination; a matrix that cannot be used
// is reported into `matrix_diags` (and its file is then one case, which fails validation).
std::vector<Case> collect(const Options& o, std::vector<std::string>* problems, diag::DiagSink* matrix_diags = nullptr);

// Runs every case, printing one line per finished case (TAP when asked); fills outcomes.
void run_all(std::vector<Case>& cases, const Options& o);

// One finished case's line (text or TAP), as run_all prints it.
void print_case(const Case& c, size_t number, const Options& o);

// JUnit XML (testsuite/testcase/failure/skipped), as CI systems read it.
std::string junit_xml(const std::vector<Case>& cases, const std::string& suite_name);

}  // namespace qpo::suite
