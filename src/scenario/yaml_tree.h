#pragma once
// A scenario's YAML as a compact tree: every node, scalar and child list lives in one arena
// owned by the Tree, built from libyaml's events (scenario/yaml_parse.h) and freed at once.
//
// Why not yaml-cpp's nodes: each costs ~7 heap blocks (~800 bytes); a hand-written scenario of
// 10,000 QPs (5.6 MB, ~400,000 nodes) took 318 MB and most of `qpo validate`'s time went to
// malloc and page faults. Here a node is ~90 bytes in a block of thousands.
//
// Node is a handle (two pointers, copied freely) with the part of yaml-cpp's Node API the loader
// reads, under the same names, so the loader reads as before. An alias is the anchor's node
// itself: `*a` and `&a` have one identity, and a value that contains itself is a cycle.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qpo::yaml {

enum class NodeType : uint8_t { Undefined, Null, Scalar, Sequence, Map };

// Where a node starts in its text, 0-based; -1 for a node no text wrote (made by --set). A
// node keeps its line and column; `pos` is only filled in where the parser reports an error.
struct Mark {
  int pos = -1, line = -1, column = -1;
  bool is_null() const { return line < 0; }
};

// The text is not YAML: libyaml's words, and where.
struct ParseError : std::runtime_error {
  ParseError(Mark at, const std::string& what) : std::runtime_error(what), mark(at), msg(what) {}
  Mark mark;
  std::string msg;
};

class Tree;

namespace detail {
// The YAML tag of a node: the two non-specific ones, or one written out (kept by the Tree).
enum class TagKind : uint8_t { Plain /* "?" */, NonPlain /* "!": quoted or block */, Explicit };

// 56 bytes: a scalar's text fits in its std::string when short (most do: no heap block).
struct NodeData {
  NodeType type = NodeType::Null;
  bool flow = false;
  TagKind tag = TagKind::Plain;
  bool grown = false;  // kids were reallocated by an append: their capacity is bit_ceil(count)
  int32_t line = -1, column = -1;
  uint32_t count = 0;         // entries of `kids`
  std::string text;           // a scalar's value
  NodeData** kids = nullptr;  // a list's items; a map's keys and values, interleaved
};
}  // namespace detail

class Node {
 public:
  // A null node, as yaml-cpp's `Node()`; a missing key or index gives an undefined one.
  Node() = default;

  NodeType Type() const { return data_ ? data_->type : NodeType::Null; }
  bool IsDefined() const { return Type() != NodeType::Undefined; }
  bool IsNull() const { return Type() == NodeType::Null; }
  bool IsScalar() const { return Type() == NodeType::Scalar; }
  bool IsSequence() const { return Type() == NodeType::Sequence; }
  bool IsMap() const { return Type() == NodeType::Map; }
  explicit operator bool() const { return IsDefined(); }
  bool operator!() const { return !IsDefined(); }

  // A scalar's text; "" for anything else.
  const std::string& Scalar() const;
  std::string Tag() const;
  yaml::Mark Mark() const {
    yaml::Mark m;
    if (data_) m.line = data_->line, m.column = data_->column;
    return m;
  }
  bool is_flow() const { return data_ && data_->flow; }

  // Items of a list, entries of a map, 0 for anything else.
  size_t size() const;
  // A list's item; undefined past the end or on anything but a list.
  Node operator[](size_t index) const;
  Node operator[](int index) const { return (*this)[static_cast<size_t>(index)]; }
  // The value of the first entry whose key is the scalar `key`; undefined when there is none.
  // A scan of the map: the loader reads maps whole (YamlReader::entries) and asks this only
  // for a key or two of a small map.
  Node operator[](std::string_view key) const;
  Node operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  Node operator[](const std::string& key) const { return (*this)[std::string_view(key)]; }

  // What a for-loop yields: a list's item (the Node itself), or a map's entry (first, second).
  struct Item;
  class iterator;
  iterator begin() const;
  iterator end() const;

  // Equal for two handles on one node (an alias and its anchor); nullptr for a default Node.
  const void* identity() const { return data_; }
  // The tree the node lives in (nullptr for a default Node): where an edit allocates.
  Tree* tree() const { return tree_; }

  // Edits (--set overrides): all allocate in the node's tree.
  // A map's value at `entry` (0-based) becomes `value`.
  void set_map_value(size_t entry, const Node& value);
  // A list's item becomes `value`.
  void set_item(size_t index, const Node& value);
  // Appends `key: value` without searching (the caller knows the key is new). A null node
  // made by the tree becomes an empty map first.
  void append_entry(const Node& key, const Node& value);

 private:
  friend class Tree;
  Node(Tree* tree, detail::NodeData* data) : tree_(tree), data_(data) {}
  static Node undefined();

  Tree* tree_ = nullptr;
  detail::NodeData* data_ = nullptr;
};

// A list's item is the Item itself; a map's entry is (first, second), as in yaml-cpp.
struct Node::Item : Node {
  Node first, second;
};

class Node::iterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Item;
  using difference_type = std::ptrdiff_t;
  using pointer = const Item*;
  using reference = const Item&;
  iterator(const Node* n, size_t i) : node_(n), index_(i) { load(); }
  const Item& operator*() const { return item_; }
  const Item* operator->() const { return &item_; }
  iterator& operator++() {
    ++index_;
    load();
    return *this;
  }
  bool operator==(const iterator& o) const { return index_ == o.index_; }
  bool operator!=(const iterator& o) const { return index_ != o.index_; }

 private:
  void load();
  const Node* node_;
  size_t index_;
  Item item_;
};

inline Node::iterator Node::begin() const { return iterator(this, 0); }
inline Node::iterator Node::end() const { return iterator(this, size()); }

// The arena every node of one parse (and of the --set values parsed into it) lives in.
class Tree {
 public:
  Tree() = default;
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  Node new_null(const Mark& at = {});
  Node new_scalar(std::string_view text, std::string_view tag, const Mark& at = {});
  Node new_collection(NodeType type, std::string_view tag, bool flow, const Mark& at = {});
  // Sets a collection's children at once (the builder knows them when the collection closes).
  void set_children(Node& collection, const std::vector<detail::NodeData*>& kids);
  static detail::NodeData* data_of(const Node& n) { return n.data_; }

  // Bytes the arena holds (benchmarks).
  size_t bytes() const { return bytes_; }

 private:
  friend class Node;
  detail::NodeData* new_data(const Mark& at);
  void* allocate(size_t size, size_t align);
  void set_tag(detail::NodeData& d, std::string_view tag);
  detail::NodeData** allocate_kids(uint32_t capacity);

  // Nodes in blocks of their own type (so their strings are destroyed with them), child
  // lists and tags in blocks of bytes.
  std::vector<std::unique_ptr<detail::NodeData[]>> node_blocks_;
  size_t block_size_ = 0, nodes_left_ = 0, nodes_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::unordered_map<const detail::NodeData*, std::string> explicit_tags_;  // few: `!!str 40`
  char* next_ = nullptr;
  size_t left_ = 0;
  size_t bytes_ = 0;
};

}  // namespace qpo::yaml
