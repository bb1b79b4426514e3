#pragma once
// Opening a device by name, GUID or "auto", and what qpo needs to know about its port.
#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace qpo::verbs {

struct DeviceInfo {
  std::string name;   // rxe0
  std::string guid;   // 0x...
  bool port_active = false;
};

// All devices libibverbs sees, with whether `port` is ACTIVE. Empty without RDMA.
std::vector<DeviceInfo> list_devices(uint8_t port = 1);

// Owns an ibv_context. Move-only; closes on destruction.
class Context {
 public:
  // `wanted`: a device name, a GUID (0x... or 16 hex digits), or "auto" = first with `port` active.
  Context(const std::string& wanted, uint8_t port, const std::string& object);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  ibv_context* get() const { return ctx_; }
  const std::string& device_name() const { return name_; }
  const ibv_device_attr& device_attr() const { return attr_; }
  const ibv_port_attr& port_attr() const { return port_attr_; }
  uint8_t port() const { return port_; }
  bool is_ethernet() const { return port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET; }
  std::string provider() const;  // "rxe", "mlx5", from the device name / driver

  // GID index chosen like perftest -x: RoCEv2 with an IPv4-mapped address first, then any
  // RoCEv2, then index 0.
  int auto_gid_index() const;
  // The index of the GID whose IP is `ip` (IPv4: its IPv4-mapped GID), RoCE v2 before v1;
  // -1 when the port has none.
  int gid_index_of_ip(const std::string& ip) const;
  ibv_gid gid(int index) const;

 private:
  ibv_context* ctx_ = nullptr;
  std::string name_;
  ibv_device_attr attr_{};
  ibv_port_attr port_attr_{};
  uint8_t port_;
};

std::string gid_text(const ibv_gid& gid);
std::string guid_text(ibv_device* dev);  // "0x0200..." as ibv_devinfo prints it
bool parse_gid(const std::string& text, ibv_gid& out);

}  // namespace qpo::verbs
