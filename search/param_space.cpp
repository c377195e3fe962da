#include "search/param_space.h"

#include <fmt/format.h>

#include <limits>

#include "core/errors.h"

namespace tune {
namespace {

void collect_grid(const ParamSpace& space, const std::string& prefix,
                  std::vector<std::pair<std::string, const Domain*>>& out) {
  for (const auto& [key, node] : space.entries()) {
    if (const Domain* domain = node.domain(); domain && domain->is_grid()) {
      out.emplace_back(prefix + key, domain);
    } else if (const ParamSpace* nested = node.nested()) {
      collect_grid(*nested, prefix + key + ".", out);
    }
  }
}

void collect_searchable(const ParamSpace& space, const std::string& prefix,
                        std::vector<std::pair<std::string, const Domain*>>& out) {
  for (const auto& [key, node] : space.entries()) {
    if (const Domain* domain = node.domain(); domain && !domain->is_conditional()) {
      out.emplace_back(prefix + key, domain);
    } else if (const ParamSpace* nested = node.nested()) {
      collect_searchable(*nested, prefix + key + ".", out);
    }
  }
}

// First pass: every searchable domain takes value_of(domain), depth-first in
// insertion order; conditional ones are left null.
Json fill_node(const ParamSpace& space, const std::function<Json(const Domain&)>& value_of) {
  Json out = Json::object();
  for (const auto& [key, node] : space.entries()) {
    if (const Domain* domain = node.domain()) {
      out[key] = domain->is_conditional() ? Json() : value_of(*domain);
    } else if (const ParamSpace* nested = node.nested()) {
      out[key] = fill_node(*nested, value_of);
    } else {
      out[key] = *node.constant();
    }
  }
  return out;
}

// Second pass: conditional values, each computed from `root` as it stands.
// `path` addresses the current table inside `root`.
void fill_conditionals(const ParamSpace& space, Json& root, std::vector<std::string>& path) {
  for (const auto& [key, node] : space.entries()) {
    if (const Domain* domain = node.domain(); domain && domain->is_conditional()) {
      Json value = domain->evaluate(root);
      Json* table = &root;
      for (const auto& part : path) table = &(*table)[part];
      (*table)[key] = std::move(value);
    } else if (const ParamSpace* nested = node.nested()) {
      path.push_back(key);
      fill_conditionals(*nested, root, path);
      path.pop_back();
    }
  }
}

}  // namespace

ParamSpace::Node::Node(Domain domain) : value_(std::move(domain)) {}

ParamSpace::Node::Node(ParamSpace nested)
    : value_(std::make_shared<const ParamSpace>(std::move(nested))) {}

const ParamSpace* ParamSpace::Node::nested() const {
  const auto* ptr = std::get_if<std::shared_ptr<const ParamSpace>>(&value_);
  return ptr ? ptr->get() : nullptr;
}

ParamSpace::ParamSpace(std::initializer_list<std::pair<std::string, Node>> entries) {
  for (const auto& [key, node] : entries) set(key, node);
}

void ParamSpace::set(const std::string& key, Node node) {
  if (key.empty()) throw ConfigError("a param space key must not be empty");
  if (key.find('.') != std::string::npos) {
    throw ConfigError::at_key(key,
                              "a param space key must not contain '.'; nest a ParamSpace instead");
  }
  for (auto& [existing, old] : entries_) {
    if (existing == key) {
      old = std::move(node);
      return;
    }
  }
  entries_.emplace_back(key, std::move(node));
}

std::vector<std::pair<std::string, const Domain*>> ParamSpace::grid_domains() const {
  std::vector<std::pair<std::string, const Domain*>> out;
  collect_grid(*this, "", out);
  return out;
}

size_t ParamSpace::num_grid_cells() const {
  size_t cells = 1;
  for (const auto& [path, domain] : grid_domains()) {
    const size_t n = domain->values().size();
    if (cells > std::numeric_limits<size_t>::max() / n) {
      throw ConfigError::at_key(path, "the grid has too many cells to count");
    }
    cells *= n;
  }
  return cells;
}

Json ParamSpace::resolve(size_t cell, Rng& rng) const {
  const size_t cells = num_grid_cells();
  if (cell >= cells) {
    throw Error(fmt::format("grid cell {} is out of range; the space has {} cells", cell, cells));
  }
  // Mixed-radix decode, last grid key varying fastest.
  const auto grid = grid_domains();
  std::vector<const Json*> values(grid.size());
  for (size_t k = grid.size(); k-- > 0;) {
    const auto& choices = grid[k].second->values();
    values[k] = &choices[cell % choices.size()];
    cell /= choices.size();
  }
  size_t next_grid = 0;
  return fill([&](const Domain& domain) {
    return domain.is_grid() ? *values[next_grid++] : domain.sample(rng);
  });
}

std::vector<std::pair<std::string, const Domain*>> ParamSpace::searchable_domains() const {
  std::vector<std::pair<std::string, const Domain*>> out;
  collect_searchable(*this, "", out);
  return out;
}

Json ParamSpace::fill(const std::function<Json(const Domain&)>& value_of) const {
  Json config = fill_node(*this, value_of);
  std::vector<std::string> path;
  fill_conditionals(*this, config, path);
  return config;
}

Json ParamSpace::describe() const {
  Json out = Json::object();
  for (const auto& [key, node] : entries_) {
    if (const Domain* domain = node.domain()) {
      out[key] = domain->describe();
    } else if (const ParamSpace* nested = node.nested()) {
      out[key] = nested->describe();
    } else {
      out[key] = *node.constant();
    }
  }
  return out;
}

}  // namespace tune
