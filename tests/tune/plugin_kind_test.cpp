#include "tune/plugin_kind.h"

#include <doctest/doctest.h>

#include "search/factory.h"
#include "tune/tune_config.h"

TEST_CASE("the C++ factories name their plug-ins' kinds; other objects are custom") {
  CHECK(tune::plugin_kind(tune::search::tpe()) == "tpe");
  CHECK(tune::plugin_kind(tune::search::gp()) == "gp");
  CHECK(tune::plugin_kind(tune::search::bohb()) == "bohb");
  CHECK(tune::plugin_kind(tune::schedulers::asha()) == "asha");
  // An asynchronous HyperBand is an ASHA object, named as its factory's kind.
  CHECK(tune::plugin_kind(tune::schedulers::hyperband({.asynchronous = true})) == "hyperband");
  CHECK(tune::plugin_kind(tune::schedulers::median_stopping()) == "median_stopping_rule");
  // Copies and conversions keep the kind.
  const std::shared_ptr<tune::schedulers::TrialScheduler> copy = tune::schedulers::fifo();
  const auto again = copy;
  CHECK(tune::plugin_kind(again) == "fifo");

  const std::shared_ptr<tune::search::Searcher> made_otherwise =
      tune::search::make_searcher("random", tune::Json::object(), {});
  CHECK(tune::plugin_kind(made_otherwise) == "custom");
  CHECK(tune::plugin_kind(std::shared_ptr<tune::schedulers::TrialScheduler>(
            tune::schedulers::make_scheduler("fifo", tune::Json::object()))) == "custom");
}
