#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "suite/suite.h"

namespace qpo::suite {

namespace fs = std::filesystem;

std::vector<Case> collect(const Options& o, std::vector<std::string>* problems) {
  std::vector<std::string> files;
  for (const auto& p : o.paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && (it->path().extension() == ".yaml" || it->path().extension() == ".yml"))
          files.push_back(it->path().string());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      problems->push_back(p + ": no such file or directory");
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const auto& f : files) {
    Case c;
    c.file = f;
    c.name = fs::path(f).stem().string();
    // Name and tags are only for filtering and reports; a file that does not parse still
    // becomes a case, and `qpo run` reports why it is invalid.
    try {
      YAML::Node n = YAML::LoadFile(f);
      if (n.IsMap() && n["name"] && n["name"].IsScalar()) c.name = n["name"].as<std::string>();
      if (n.IsMap() && n["tags"] && n["tags"].IsSequence())
        for (const auto& t : n["tags"])
          if (t.IsScalar()) c.tags.push_back(t.as<std::string>());
      // Hosts that own a device take part (exec::active_hosts); a declared but unused host
      // must not send the whole suite into two lab guests per scenario.
      if (n.IsMap() && n["devices"] && n["devices"].IsMap()) {
        std::set<std::string> owners;
        for (const auto& d : n["devices"])
          if (d.second.IsMap() && d.second["host"] && d.second["host"].IsScalar()) owners.insert(d.second["host"].as<std::string>());
        c.hosts = std::max<size_t>(1, owners.size());
      }
    } catch (const std::exception&) {
    }
    if (!o.tags.empty()) {
      bool any = false;
      for (const auto& t : o.tags) any |= std::find(c.tags.begin(), c.tags.end(), t) != c.tags.end();
      if (!any) continue;
    }
    if (!o.name_filter.empty() && c.name.find(o.name_filter) == std::string::npos &&
        c.file.find(o.name_filter) == std::string::npos)
      continue;
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace qpo::suite
