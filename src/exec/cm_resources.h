#pragma once
// rdma_cm handles as RunState resources: teardown's Destroy steps release them by name (the
// ids before their channel). Connections (cm_steps.cpp) and multicast joins (multicast_cm.cpp).
#include <memory>
#include <string>

#include "cm/cm.h"
#include "cm/multicast.h"
#include "verbs/resources.h"

namespace qpo::exec {

class ChannelResource : public verbs::Resource {
 public:
  explicit ChannelResource(const std::string& name) : Resource(name), ch_(std::make_unique<cm::EventChannel>(name)) {}
  ~ChannelResource() override { release(); }
  bool holds() const override { return ch_ != nullptr; }
  const char* destroy_verb() const override { return "rdma_destroy_event_channel"; }
  int release() override {
    ch_.reset();
    return 0;
  }
  cm::EventChannel& channel() { return *ch_; }

 private:
  std::unique_ptr<cm::EventChannel> ch_;
};

class IdResource : public verbs::Resource {
 public:
  IdResource(const std::string& name, cm::Id id) : Resource(name), id_(std::move(id)) {}
  ~IdResource() override { release(); }
  bool holds() const override { return static_cast<bool>(id_); }
  const char* destroy_verb() const override { return "rdma_destroy_id"; }
  int release() override { return id_.release(); }
  rdma_cm_id* get() const { return id_.get(); }
  // A connect retried on a fresh id (a REJECTED id cannot connect again): the old one goes now.
  void replace(cm::Id id) { id_ = std::move(id); }

 private:
  cm::Id id_;
};

// A multicast join (rdma_leave_multicast at teardown, before its id goes).
class McastJoinResource : public verbs::Resource {
 public:
  template <typename... Args>
  explicit McastJoinResource(const std::string& name, Args&&... args)
      : Resource(name), join_(std::make_unique<cm::McastJoin>(std::forward<Args>(args)...)) {}
  ~McastJoinResource() override { release(); }
  bool holds() const override { return join_ && join_->joined(); }
  const char* destroy_verb() const override { return "rdma_leave_multicast"; }
  int release() override { return join_ ? join_->leave() : 0; }

 private:
  std::unique_ptr<cm::McastJoin> join_;
};

}  // namespace qpo::exec
