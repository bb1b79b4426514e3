#include "util/errno_names.h"

#include <cerrno>

#include "util/strings.h"

namespace qpo::util {

namespace {

struct ErrnoName {
  const char* name;
  int value;
};

constexpr ErrnoName kErrnos[] = {
    {"EPERM", EPERM},   {"ENOENT", ENOENT},         {"EIO", EIO},           {"EAGAIN", EAGAIN},
    {"ENOMEM", ENOMEM}, {"EACCES", EACCES},         {"EFAULT", EFAULT},     {"EBUSY", EBUSY},
    {"ENODEV", ENODEV}, {"EINVAL", EINVAL},         {"ENOSPC", ENOSPC},     {"ENOSYS", ENOSYS},
    {"EOPNOTSUPP", EOPNOTSUPP}, {"EPROTONOSUPPORT", EPROTONOSUPPORT}, {"ETIMEDOUT", ETIMEDOUT},
    {"ENETUNREACH", ENETUNREACH},
};

}  // namespace

const char* errno_symbol(int err) {
  for (const auto& e : kErrnos)
    if (e.value == err) return e.name;
  return nullptr;
}

std::string errno_name(int err) {
  const char* name = errno_symbol(err);
  return name ? name : "errno " + std::to_string(err);
}

int errno_from_symbol(std::string_view name) {
  std::string upper = to_upper(name);
  if (upper == "ENOTSUP") upper = "EOPNOTSUPP";
  for (const auto& e : kErrnos)
    if (upper == e.name) return e.value;
  return 0;
}

std::vector<std::string> errno_symbols() {
  std::vector<std::string> out;
  for (const auto& e : kErrnos) out.emplace_back(e.name);
  return out;
}

}  // namespace qpo::util
