#include "cli/html_report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

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

bool write_report_file(const std::string& file, const std::string& html) {
  std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) out << html;
    if (!out || !out.flush()) {
      int err = errno;
      std::cerr << "qpo: --report " << file << ": cannot write " << tmp << ": " << std::strerror(err) << "\n";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    int err = errno;
    std::cerr << "qpo: --report " << file << ": " << std::strerror(err) << "\n";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace qpo::cli
