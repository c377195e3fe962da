// The ConfigError message a callable throws, for the domain tests.
#pragma once

#include <string>

#include "core/errors.h"

namespace tune {

// The ConfigError message `make` throws, or "" when it does not throw.
template <class F>
std::string config_error(F make) {
  try {
    make();
  } catch (const ConfigError& e) {
    return e.message();
  }
  return "";
}

}  // namespace tune
