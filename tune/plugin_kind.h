// The kind of a plug-in object, as a sweep file names it ("bohb" in
// [search] algorithm, "hyperband" in [scheduler] type), for the rules that
// pair plug-ins (tune/spec_validation.h: BOHB needs HyperBand) when the C++
// API hands the experiment objects instead of names.
//
// Why a deleter: the plug-in interfaces, like Ray's, carry no name, and the
// objects the C++ factories make (tune/tune_config.h) are the library's own
// classes. So each factory gives its shared_ptr a NamedPlugin deleter, which
// deletes as the default one does and names the kind; std::get_deleter reads
// it back from any copy of that shared_ptr. An asynchronous HyperBand is an
// ASHA object, and only its factory knows it is a HyperBand.
#pragma once

#include <memory>
#include <string_view>

#include "schedulers/trial_scheduler.h"
#include "search/searcher.h"

namespace tune {

struct NamedPlugin {
  std::string_view kind;  // a literal: "tpe", "hyperband"...

  template <class T>
  void operator()(T* plugin) const {
    delete plugin;
  }
};

// `plugin` owned by a shared_ptr that names `kind`.
template <class Base, class T>
std::shared_ptr<Base> named_plugin(std::unique_ptr<T> plugin, std::string_view kind) {
  return std::shared_ptr<Base>(plugin.release(), NamedPlugin{kind});
}

// The kind a factory named, or "custom" for an object made otherwise (a
// user's class, a Python adapter).
std::string_view plugin_kind(const std::shared_ptr<search::Searcher>& searcher);
std::string_view plugin_kind(const std::shared_ptr<schedulers::TrialScheduler>& scheduler);

}  // namespace tune
