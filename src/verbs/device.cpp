#include "verbs/device.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "util/strings.h"
#include "verbs/verbs_error.h"

namespace qpo::verbs {

namespace {

// ibv_get_device_list / ibv_free_device_list as RAII.
struct DeviceList {
  ibv_device** list = nullptr;
  int count = 0;
  DeviceList() { list = ibv_get_device_list(&count); }
  ~DeviceList() {
    if (list) ibv_free_device_list(list);
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
};

bool port_is_active(ibv_device* dev, uint8_t port) {
  ibv_context* ctx = ibv_open_device(dev);
  if (!ctx) return false;
  ibv_port_attr pa{};
  bool active = ibv_query_port(ctx, port, &pa) == 0 && pa.state == IBV_PORT_ACTIVE;
  ibv_close_device(ctx);
  return active;
}

bool matches(ibv_device* dev, const std::string& wanted) {
  if (wanted == ibv_get_device_name(dev)) return true;
  std::string g = guid_text(dev);
  std::string w = util::to_lower(wanted);
  if (w.rfind("0x", 0) != 0) w = "0x" + w;
  return w == g;
}

}  // namespace

std::vector<DeviceInfo> list_devices(uint8_t port) {
  std::vector<DeviceInfo> out;
  DeviceList devices;
  for (int i = 0; devices.list && i < devices.count; ++i)
    out.push_back({ibv_get_device_name(devices.list[i]), guid_text(devices.list[i]), port_is_active(devices.list[i], port)});
  return out;
}

Context::Context(const std::string& wanted, uint8_t port, const std::string& object) : port_(port) {
  DeviceList devices;
  // ENOSYS: the kernel has no RDMA stack (no /sys/class/infiniband_verbs), not just no device.
  if (!devices.list)
    throw VerbsError("ibv_get_device_list", object, errno ? errno : ENODEV,
                     errno == ENOSYS ? "this kernel has no RDMA support" : "");
  ibv_device* chosen = nullptr;
  for (int i = 0; i < devices.count && !chosen; ++i) {
    if (wanted == "auto" ? port_is_active(devices.list[i], port) : matches(devices.list[i], wanted))
      chosen = devices.list[i];
  }
  if (!chosen) {
    std::vector<std::string> names;
    for (int i = 0; i < devices.count; ++i) names.emplace_back(ibv_get_device_name(devices.list[i]));
    throw VerbsError("ibv_open_device", object, ENODEV,
                     (wanted == "auto" ? "no device with an ACTIVE port " + std::to_string(port)
                                       : "no device named '" + wanted + "'") +
                         "; devices: " + (names.empty() ? "none" : util::join(names, ", ")));
  }
  name_ = ibv_get_device_name(chosen);
  ctx_ = ibv_open_device(chosen);
  if (!ctx_) throw VerbsError("ibv_open_device", object, errno ? errno : EIO, name_);
  if (int e = verb_errno(ibv_query_device(ctx_, &attr_))) {
    ibv_close_device(ctx_);
    throw VerbsError("ibv_query_device", object, e, name_);
  }
  if (int e = verb_errno(ibv_query_port(ctx_, port_, &port_attr_))) {
    ibv_close_device(ctx_);
    throw VerbsError("ibv_query_port", object, e, name_ + " port " + std::to_string(port_));
  }
}

Context::~Context() {
  if (ctx_) ibv_close_device(ctx_);
}

std::string Context::provider() const {
  std::string n = name_;
  while (!n.empty() && std::isdigit(static_cast<unsigned char>(n.back()))) n.pop_back();
  return n;
}

ibv_gid Context::gid(int index) const {
  ibv_gid g{};
  ibv_query_gid(ctx_, port_, index, &g);
  return g;
}

int Context::auto_gid_index() const {
  int any_v2 = -1;
  for (int i = 0; i < port_attr_.gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(ctx_, port_, static_cast<uint32_t>(i), &entry, 0) != 0) continue;
    if (entry.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
    const uint8_t* raw = entry.gid.raw;
    bool v4_mapped = true;
    for (int b = 0; b < 10; ++b) v4_mapped &= raw[b] == 0;
    v4_mapped &= raw[10] == 0xff && raw[11] == 0xff;
    if (v4_mapped) return i;
    if (any_v2 < 0) any_v2 = i;
  }
  return any_v2 >= 0 ? any_v2 : 0;
}

int Context::gid_index_of_ip(const std::string& ip) const {
  ibv_gid want{};
  if (inet_pton(AF_INET6, ip.c_str(), want.raw) != 1) {
    if (inet_pton(AF_INET, ip.c_str(), want.raw + 12) != 1) return -1;
    want.raw[10] = want.raw[11] = 0xff;  // ::ffff:a.b.c.d, as RoCE writes IPv4 GIDs
  }
  int other = -1;
  for (int i = 0; i < port_attr_.gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(ctx_, port_, static_cast<uint32_t>(i), &entry, 0) != 0) continue;
    if (std::memcmp(entry.gid.raw, want.raw, sizeof want.raw) != 0) continue;
    if (entry.gid_type == IBV_GID_TYPE_ROCE_V2) return i;
    if (other < 0) other = i;
  }
  return other;
}

std::string guid_text(ibv_device* dev) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(be64toh(ibv_get_device_guid(dev))));
  return buf;
}

std::string gid_text(const ibv_gid& gid) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, gid.raw, buf, sizeof buf);
  return buf;
}

bool parse_gid(const std::string& text, ibv_gid& out) { return inet_pton(AF_INET6, text.c_str(), out.raw) == 1; }

}  // namespace qpo::verbs
