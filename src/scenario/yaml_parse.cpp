#include "scenario/yaml_parse.h"

#include <yaml.h>

#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scenario/node_identity.h"

namespace qpo::scenario {

namespace {

using Access = YAML::as_if<NodeIdentityTag, void>;

YAML::Mark to_mark(const yaml_mark_t& m) {
  YAML::Mark out;
  out.pos = static_cast<int>(m.index);
  out.line = static_cast<int>(m.line);
  out.column = static_cast<int>(m.column);
  return out;
}

std::string text_of(const yaml_char_t* s) { return s ? reinterpret_cast<const char*>(s) : std::string(); }

// One libyaml parser over a text, its events freed as they are consumed.
class EventStream {
 public:
  explicit EventStream(const std::string& text) {
    if (!yaml_parser_initialize(&parser_)) throw std::bad_alloc();
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  }
  ~EventStream() {
    if (has_event_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // The next event; throws what the parser found wrong, with its position.
  const yaml_event_t& next() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = yaml_parser_parse(&parser_, &event_) != 0;
    if (!has_event_) fail();
    return event_;
  }

 private:
  [[noreturn]] void fail() const {
    if (parser_.error == YAML_MEMORY_ERROR) throw std::bad_alloc();
    std::string msg = parser_.problem ? parser_.problem : "unreadable input";
    if (parser_.context) msg += std::string(" (") + parser_.context + ")";
    throw YAML::ParserException(to_mark(parser_.problem_mark), msg);
  }

  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool has_event_ = false;
};

// yaml-cpp reads a plain, untagged scalar spelled like this as null (its IsNullString).
bool is_null_spelling(const std::string& s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

// Builds the nodes YAML::Load builds from one document's events: a stack of open collections,
// and for a map the key waiting for its value.
class Builder {
 public:
  // Consumes the events up to the document's end.
  YAML::Node build(EventStream& events) {
    for (;;) {
      const yaml_event_t& e = events.next();
      switch (e.type) {
        case YAML_DOCUMENT_END_EVENT:
          return root_ ? Access::wrap(*root_, memory_) : YAML::Node();
        case YAML_ALIAS_EVENT: on_alias(e); break;
        case YAML_SCALAR_EVENT: on_scalar(e); break;
        case YAML_SEQUENCE_START_EVENT:
          open(e, text_of(e.data.sequence_start.anchor), e.data.sequence_start.tag, e.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE,
               YAML::NodeType::Sequence);
          break;
        case YAML_MAPPING_START_EVENT:
          open(e, text_of(e.data.mapping_start.anchor), e.data.mapping_start.tag, e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE,
               YAML::NodeType::Map);
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
          YAML::detail::node& n = *open_.back().node;
          open_.pop_back();
          close(n);
          break;
        }
        default: break;  // stream and document starts: nothing to build
      }
    }
  }

 private:
  struct Open {
    YAML::detail::node* node;
    YAML::detail::node* key = nullptr;  // a map's key read, its value not yet
  };

  YAML::detail::node& create(const yaml_event_t& e, const std::string& anchor) {
    YAML::detail::node& n = memory_->create_node();
    n.set_mark(to_mark(e.start_mark));
    if (!anchor.empty()) anchors_[anchor] = &n;  // a later anchor of the same name wins, as in yaml-cpp
    return n;
  }

  void on_alias(const yaml_event_t& e) {
    auto it = anchors_.find(text_of(e.data.alias.anchor));
    if (it == anchors_.end()) throw YAML::ParserException(to_mark(e.start_mark), "the referenced anchor is not defined");
    close(*it->second);
  }

  void on_scalar(const yaml_event_t& e) {
    const auto& s = e.data.scalar;
    std::string value(reinterpret_cast<const char*>(s.value), s.length);
    YAML::detail::node& n = create(e, text_of(s.anchor));
    bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
    if (!s.tag && plain && is_null_spelling(value)) {
      n.set_null();
    } else {
      n.set_scalar(value);
      // yaml-cpp's non-specific tags: "?" for a plain scalar, "!" for a quoted or block one.
      n.set_tag(s.tag ? text_of(s.tag) : plain ? "?" : "!");
    }
    close(n);
  }

  void open(const yaml_event_t& e, const std::string& anchor, const yaml_char_t* tag, bool flow, YAML::NodeType::value type) {
    if (open_.size() >= static_cast<size_t>(kMaxYamlNesting))
      throw NestingTooDeep{to_mark(e.start_mark), kMaxYamlNesting};
    YAML::detail::node& n = create(e, anchor);
    n.set_type(type);
    n.set_tag(tag ? text_of(tag) : "?");
    n.set_style(flow ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
    open_.push_back({&n});
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
  std::unordered_map<std::string, YAML::detail::node*> anchors_;
  std::vector<Open> open_;
  YAML::detail::node* root_ = nullptr;
};

}  // namespace

ParsedText parse_yaml(const std::string& text) {
  EventStream events(text);
  ParsedText out;
  // The rest of the stream is read (not built) to count its documents: a second one is refused.
  for (;;) {
    const yaml_event_t& e = events.next();
    if (e.type == YAML_STREAM_END_EVENT) return out;
    if (e.type != YAML_DOCUMENT_START_EVENT) continue;
    if (++out.documents == 1) {
      Builder builder;
      out.root = builder.build(events);
    } else if (out.documents == 2) {
      out.second = to_mark(e.start_mark);
    }
  }
}

}  // namespace qpo::scenario
