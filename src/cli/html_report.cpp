#include "cli/html_report.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cluster/codec.h"

namespace qpo::cli {

std::string absolute_report_path(const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  std::error_code ec;
  auto abs = std::filesystem::absolute(file, ec);
  return ec ? file : abs.lexically_normal().string();
}

std::vector<std::string> report_lab_args(const std::string& absolute_file) {
  std::string dir = std::filesystem::path(absolute_file).parent_path().string();
  return {"--out", dir.empty() ? "/" : dir};
}

bool write_report_file(const std::string& file, const std::string& html, const char* option) {
  std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) out << html;
    if (!out || !out.flush()) {
      int err = errno;
      std::cerr << "qpo: " << option << " " << file << ": cannot write " << tmp << ": " << std::strerror(err) << "\n";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    int err = errno;
    std::cerr << "qpo: " << option << " " << file << ": " << std::strerror(err) << "\n";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

bool read_run_results(const std::string& path, std::vector<report::RunReport>* out, std::string* error) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    auto one = [&](const YAML::Node& n) {
      if (!n.IsMap() || !n["verdict"] || !n["steps"]) throw std::runtime_error("not a run result (qpo run --format json)");
      out->push_back(cluster::read_report(n));
    };
    if (root.IsSequence()) {
      for (const auto& n : root) one(n);
    } else {
      one(root);
    }
    return true;
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

}  // namespace qpo::cli
