#include "scenario/yaml_parse.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <utility>
#include <vector>

#include "scenario/node_identity.h"

namespace qpo::scenario {

namespace {

using Access = YAML::as_if<NodeIdentityTag, void>;

// Notes where each document starts; the base of both handlers below.
class DocumentStarts : public YAML::EventHandler {
 public:
  YAML::Mark start;
  void OnDocumentStart(const YAML::Mark& m) override { start = m; }
  void OnDocumentEnd() override {}
};

// Counts what follows the first document without building anything.
class Skipper : public DocumentStarts {
 public:
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Builds the nodes YAML::Load builds (the same marks, tags, styles and shared anchors), from
// the parser's events: a stack of open collections, and for a map the key waiting for its value.
class Builder : public DocumentStarts {
 public:
  YAML::Node root() { return root_ ? Access::wrap(*root_, memory_) : YAML::Node(); }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YAML::detail::node& n = create(mark, anchor);
    n.set_null();
    close(n);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    if (anchor >= anchors_.size() || !anchors_[anchor]) throw YAML::ParserException(YAML::Mark(), "unknown anchor");
    close(*anchors_[anchor]);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
    YAML::detail::node& n = create(mark, anchor);
    n.set_scalar(value);
    n.set_tag(tag);
    close(n);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, style, YAML::NodeType::Sequence);
  }
  void OnSequenceEnd() override { end_collection(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, style, YAML::NodeType::Map);
  }
  void OnMapEnd() override { end_collection(); }

 private:
  struct Open {
    YAML::detail::node* node;
    YAML::detail::node* key = nullptr;  // a map's key read, its value not yet
  };

  YAML::detail::node& create(const YAML::Mark& mark, YAML::anchor_t anchor) {
    YAML::detail::node& n = memory_->create_node();
    n.set_mark(mark);
    if (anchor) {  // anchors are numbered 1, 2, ... in the order they appear
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, nullptr);
      anchors_[anchor] = &n;
    }
    return n;
  }

  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, YAML::EmitterStyle::value style,
            YAML::NodeType::value type) {
    YAML::detail::node& n = create(mark, anchor);
    n.set_type(type);
    n.set_tag(tag);
    n.set_style(style);
    open_.push_back({&n});
  }

  void end_collection() {
    YAML::detail::node& n = *open_.back().node;
    open_.pop_back();
    close(n);
  }

  // `n` is complete: it is the root, an entry of the open list, or a key or value of the open map.
  void close(YAML::detail::node& n) {
    if (open_.empty()) {
      root_ = &n;
      return;
    }
    Open& parent = open_.back();
    if (parent.node->type() == YAML::NodeType::Sequence) {
      parent.node->push_back(n, memory_);
    } else if (!parent.key) {
      parent.key = &n;
    } else {
      parent.node->insert(*parent.key, n, memory_);
      parent.key = nullptr;
    }
  }

  YAML::detail::shared_memory_holder memory_ = std::make_shared<YAML::detail::memory_holder>();
  std::vector<YAML::detail::node*> anchors_;
  std::vector<Open> open_;
  YAML::detail::node* root_ = nullptr;
};

}  // namespace

ParsedText parse_yaml(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  ParsedText out;
  Builder builder;
  if (!parser.HandleNextDocument(builder)) return out;
  out.root = builder.root();
  out.documents = 1;
  Skipper rest;
  YAML::Mark last = builder.start;
  while (parser.HandleNextDocument(rest)) {
    if (rest.start.pos <= last.pos) {
      out.stuck = true;
      out.stuck_at = rest.start;
      break;
    }
    last = rest.start;
    if (++out.documents == 2) out.second = rest.start;
  }
  return out;
}

}  // namespace qpo::scenario
