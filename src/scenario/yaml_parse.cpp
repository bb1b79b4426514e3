#include "scenario/yaml_parse.h"

#include <yaml.h>

#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qpo::scenario {

namespace {

yaml::Mark to_mark(const yaml_mark_t& m) {
  yaml::Mark out;
  out.pos = static_cast<int>(m.index);
  out.line = static_cast<int>(m.line);
  out.column = static_cast<int>(m.column);
  return out;
}

std::string_view text_of(const yaml_char_t* s) { return s ? reinterpret_cast<const char*>(s) : std::string_view(); }

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
    throw yaml::ParseError(to_mark(parser_.problem_mark), msg);
  }

  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool has_event_ = false;
};

// A plain, untagged scalar spelled like this is null (YAML's core schema, as yaml-cpp reads it).
bool is_null_spelling(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

// Builds one document's nodes from its events: a stack of open collections, each with the
// children read so far (a map's keys and values interleaved).
class Builder {
 public:
  explicit Builder(yaml::Tree& tree) : tree_(tree) {}

  // Consumes the events up to the document's end.
  yaml::Node build(EventStream& events) {
    for (;;) {
      const yaml_event_t& e = events.next();
      switch (e.type) {
        case YAML_DOCUMENT_END_EVENT: return root_;
        case YAML_ALIAS_EVENT: on_alias(e); break;
        case YAML_SCALAR_EVENT: on_scalar(e); break;
        case YAML_SEQUENCE_START_EVENT:
          open(e, text_of(e.data.sequence_start.anchor), e.data.sequence_start.tag,
               e.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE, yaml::NodeType::Sequence);
          break;
        case YAML_MAPPING_START_EVENT:
          open(e, text_of(e.data.mapping_start.anchor), e.data.mapping_start.tag,
               e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE, yaml::NodeType::Map);
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
          yaml::Node n = open_.back();
          tree_.set_children(n, kids_[open_.size() - 1]);
          open_.pop_back();
          close(n);
          break;
        }
        default: break;  // stream and document starts: nothing to build
      }
    }
  }

 private:
  void remember(std::string_view anchor, const yaml::Node& n) {
    if (!anchor.empty()) anchors_[std::string(anchor)] = n;  // a later anchor of the same name wins
  }

  void on_alias(const yaml_event_t& e) {
    auto it = anchors_.find(std::string(text_of(e.data.alias.anchor)));
    if (it == anchors_.end()) throw yaml::ParseError(to_mark(e.start_mark), "the referenced anchor is not defined");
    close(it->second);
  }

  void on_scalar(const yaml_event_t& e) {
    const auto& s = e.data.scalar;
    std::string_view value(reinterpret_cast<const char*>(s.value), s.length);
    bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
    yaml::Mark at = to_mark(e.start_mark);
    // The non-specific tags: "?" for a plain scalar, "!" for a quoted or block one.
    yaml::Node n = !s.tag && plain && is_null_spelling(value)
                       ? tree_.new_null(at)
                       : tree_.new_scalar(value, s.tag ? text_of(s.tag) : plain ? "?" : "!", at);
    remember(text_of(s.anchor), n);
    close(n);
  }

  void open(const yaml_event_t& e, std::string_view anchor, const yaml_char_t* tag, bool flow, yaml::NodeType type) {
    if (open_.size() >= static_cast<size_t>(kMaxYamlNesting))
      throw NestingTooDeep(to_mark(e.start_mark), kMaxYamlNesting);
    yaml::Node n = tree_.new_collection(type, tag ? text_of(tag) : "?", flow, to_mark(e.start_mark));
    remember(anchor, n);
    open_.push_back(n);
    if (kids_.size() < open_.size()) kids_.emplace_back();  // one scratch list per depth, reused
    kids_[open_.size() - 1].clear();
  }

  // `n` is complete: the root, or the next child of the open collection.
  void close(const yaml::Node& n) {
    if (open_.empty()) root_ = n;
    else kids_[open_.size() - 1].push_back(yaml::Tree::data_of(n));
  }

  yaml::Tree& tree_;
  std::unordered_map<std::string, yaml::Node> anchors_;
  std::vector<yaml::Node> open_;
  std::vector<std::vector<yaml::detail::NodeData*>> kids_;
  yaml::Node root_;
};

}  // namespace

ParsedText parse_yaml(const std::string& text) {
  EventStream events(text);
  ParsedText out;
  out.tree = std::make_shared<yaml::Tree>();
  // The rest of the stream is read (not built) to count its documents: a second one is refused.
  for (;;) {
    const yaml_event_t& e = events.next();
    if (e.type == YAML_STREAM_END_EVENT) return out;
    if (e.type != YAML_DOCUMENT_START_EVENT) continue;
    if (++out.documents == 1) {
      Builder builder(*out.tree);
      out.root = builder.build(events);
    } else if (out.documents == 2) {
      out.second = to_mark(e.start_mark);
    }
  }
}

yaml::Node parse_value(yaml::Tree& tree, const std::string& text) {
  EventStream events(text);
  for (;;) {
    const yaml_event_t& e = events.next();
    if (e.type == YAML_STREAM_END_EVENT) return yaml::Node();
    if (e.type == YAML_DOCUMENT_START_EVENT) {
      Builder builder(tree);
      return builder.build(events);
    }
  }
}

}  // namespace qpo::scenario
