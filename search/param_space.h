// ParamSpace: the tree of hyperparameters a sweep explores.
//
// Each key holds a Domain, a constant (any JSON value) or a nested
// ParamSpace. Keys keep their insertion order (grid expansion and sampling
// follow it, so a seed gives the same configs whatever the key names).
//
//   tune::ParamSpace space{{"lr", tune::loguniform(1e-4, 1e-1)},
//                          {"hidden", tune::grid_search({128, 256})},
//                          {"epochs", 10},
//                          {"model", tune::ParamSpace{{"width", tune::choice({64, 128})}}}};
//
// A resolved config is a JSON object of the same shape with every domain
// replaced by a value. Conditional values (tune::sample_from) are computed
// last: first every other domain is drawn and every constant copied, then
// each sample_from function runs, in depth-first insertion order, on the
// config as resolved so far (it sees all plain values and the conditional
// values before it).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "search/domain.h"

namespace tune {

class ParamSpace {
 public:
  // One key's node. Constructible from a Domain, a nested ParamSpace or any
  // value nlohmann::json accepts (a constant).
  class Node {
   public:
    Node(Domain domain);      // NOLINT: implicit by design
    Node(ParamSpace nested);  // NOLINT
    template <class T>
    requires std::is_constructible_v<Json, T> Node(T&& constant)
        : value_(Json(std::forward<T>(constant))) {}  // NOLINT

    const Domain* domain() const { return std::get_if<Domain>(&value_); }
    const ParamSpace* nested() const;
    const Json* constant() const { return std::get_if<Json>(&value_); }

   private:
    std::variant<Json, Domain, std::shared_ptr<const ParamSpace>> value_;
  };

  ParamSpace() = default;
  ParamSpace(std::initializer_list<std::pair<std::string, Node>> entries);

  // Adds or replaces `key` (a plain key, no dots). Throws ConfigError on an
  // empty key or one containing '.'.
  void set(const std::string& key, Node node);

  const std::vector<std::pair<std::string, Node>>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

  // Every grid_search domain, with its dotted path ("model.width"), in
  // depth-first insertion order.
  std::vector<std::pair<std::string, const Domain*>> grid_domains() const;

  // Number of grid cells: the product of the grid_search value counts (1
  // when there is none).
  size_t num_grid_cells() const;

  // The config for grid cell `cell` (0 <= cell < num_grid_cells(); the first
  // grid key varies slowest, like itertools.product) with every other domain
  // drawn from `rng` in depth-first insertion order and constants copied.
  Json resolve(size_t cell, Rng& rng) const;

  // Every domain a searcher chooses a value for (all but sample_from, grid
  // domains included), with its dotted path, in depth-first insertion order.
  std::vector<std::pair<std::string, const Domain*>> searchable_domains() const;

  // The config whose searchable domains take the values `value_of` returns,
  // called once per domain in searchable_domains() order; constants are
  // copied and conditional values computed afterwards (see above).
  Json fill(const std::function<Json(const Domain&)>& value_of) const;

  // A JSON description for storage and display: domains as their describe()
  // strings, constants as themselves.
  Json describe() const;

 private:
  std::vector<std::pair<std::string, Node>> entries_;
};

}  // namespace tune
