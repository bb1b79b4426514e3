#include "scenario/yaml_tree.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

namespace qpo::yaml {

namespace {

// Blocks stay under glibc's mmap threshold (128 KiB): they come from the heap, and once the
// tree is freed the model and plan reuse those pages instead of faulting in new ones (page
// faults were a fifth of validating 10,000 QPs). Node blocks hold 1,024 nodes (~90 KiB).
constexpr size_t kFirstBlock = 16 * 1024;
constexpr size_t kLargestBlock = 64 * 1024;
constexpr size_t kFirstNodes = 64;
constexpr size_t kMostNodes = 1024;

detail::NodeData g_undefined{NodeType::Undefined};
const std::string g_no_text;

}  // namespace

const std::string& Node::Scalar() const { return IsScalar() ? data_->text : g_no_text; }

std::string Node::Tag() const {
  if (!data_ || data_->type == NodeType::Null || data_->type == NodeType::Undefined) return "";
  switch (data_->tag) {
    case detail::TagKind::Plain: return "?";
    case detail::TagKind::NonPlain: return "!";
    case detail::TagKind::Explicit: break;
  }
  auto it = tree_->explicit_tags_.find(data_);
  return it == tree_->explicit_tags_.end() ? "" : it->second;
}

Node Node::undefined() { return Node(nullptr, &g_undefined); }

size_t Node::size() const {
  if (IsSequence()) return data_->count;
  if (IsMap()) return data_->count / 2;
  return 0;
}

Node Node::operator[](size_t index) const {
  if (!IsSequence() || index >= data_->count) return undefined();
  return Node(tree_, data_->kids[index]);
}

Node Node::operator[](std::string_view key) const {
  if (!IsMap()) return undefined();
  for (uint32_t i = 0; i + 1 < data_->count; i += 2) {
    const detail::NodeData* k = data_->kids[i];
    if (k->type == NodeType::Scalar && k->text == key) return Node(tree_, data_->kids[i + 1]);
  }
  return undefined();
}

void Node::iterator::load() {
  item_ = Item();
  if (index_ >= node_->size()) return;
  const detail::NodeData* d = node_->data_;
  if (node_->IsSequence()) {
    static_cast<Node&>(item_) = Node(node_->tree_, d->kids[index_]);
  } else {
    item_.first = Node(node_->tree_, d->kids[2 * index_]);
    item_.second = Node(node_->tree_, d->kids[2 * index_ + 1]);
  }
}

void Node::set_map_value(size_t entry, const Node& value) {
  if (IsMap() && entry < size()) data_->kids[2 * entry + 1] = value.data_;
}

void Node::set_item(size_t index, const Node& value) {
  if (IsSequence() && index < data_->count) data_->kids[index] = value.data_;
}

void Node::append_entry(const Node& key, const Node& value) {
  if (!tree_ || !data_ || !(IsMap() || IsNull())) return;
  if (IsNull()) {
    data_->type = NodeType::Map;
    data_->tag = detail::TagKind::Plain;
  }
  // The parser sizes a collection's kids exactly; the first append moves them to an array of a
  // power of two, and every later one fits until that is full.
  uint32_t capacity = data_->grown ? std::bit_ceil(std::max<uint32_t>(data_->count, 8)) : data_->count;
  if (data_->count + 2 > capacity) {
    uint32_t more = std::bit_ceil(std::max<uint32_t>(data_->count + 2, 8));
    detail::NodeData** kids = tree_->allocate_kids(more);
    std::copy(data_->kids, data_->kids + data_->count, kids);
    data_->kids = kids;  // the old array stays in the arena until the tree goes
    data_->grown = true;
  }
  data_->kids[data_->count++] = key.data_;
  data_->kids[data_->count++] = value.data_;
}

void* Tree::allocate(size_t size, size_t align) {
  size_t pad = (align - reinterpret_cast<uintptr_t>(next_) % align) % align;
  if (!next_ || pad + size > left_) {
    size_t want = std::max(size + align, std::min(kLargestBlock, std::max(kFirstBlock, bytes_ / 2)));
    blocks_.push_back(std::make_unique<char[]>(want));  // throws bad_alloc, as any node would
    next_ = blocks_.back().get();
    left_ = want;
    bytes_ += want;
    pad = (align - reinterpret_cast<uintptr_t>(next_) % align) % align;
  }
  char* out = next_ + pad;
  next_ = out + size;
  left_ -= pad + size;
  return out;
}

detail::NodeData** Tree::allocate_kids(uint32_t capacity) {
  return static_cast<detail::NodeData**>(allocate(sizeof(detail::NodeData*) * capacity, alignof(detail::NodeData*)));
}

detail::NodeData* Tree::new_data(const Mark& at) {
  if (!nodes_left_) {
    size_t n = std::min(kMostNodes, std::max(kFirstNodes, nodes_ / 2));
    node_blocks_.push_back(std::make_unique<detail::NodeData[]>(n));
    nodes_left_ = block_size_ = n;
    bytes_ += n * sizeof(detail::NodeData);
  }
  detail::NodeData* d = &node_blocks_.back()[block_size_ - nodes_left_--];
  ++nodes_;
  d->line = at.line;
  d->column = at.column;
  return d;
}

Node Tree::new_null(const Mark& at) { return Node(this, new_data(at)); }

Node Tree::new_scalar(std::string_view text, std::string_view tag, const Mark& at) {
  Node n = new_null(at);
  n.data_->type = NodeType::Scalar;
  n.data_->text = text;
  set_tag(*n.data_, tag);
  return n;
}

Node Tree::new_collection(NodeType type, std::string_view tag, bool flow, const Mark& at) {
  Node n = new_null(at);
  n.data_->type = type;
  set_tag(*n.data_, tag);
  n.data_->flow = flow;
  return n;
}

void Tree::set_tag(detail::NodeData& d, std::string_view tag) {
  if (tag == "?") d.tag = detail::TagKind::Plain;
  else if (tag == "!") d.tag = detail::TagKind::NonPlain;
  else d.tag = detail::TagKind::Explicit, explicit_tags_[&d] = std::string(tag);
}

void Tree::set_children(Node& collection, const std::vector<detail::NodeData*>& kids) {
  detail::NodeData* d = collection.data_;
  d->count = static_cast<uint32_t>(kids.size());
  d->grown = false;
  d->kids = kids.empty() ? nullptr : allocate_kids(d->count);
  std::copy(kids.begin(), kids.end(), d->kids);
}

}  // namespace qpo::yaml
