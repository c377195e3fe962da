"""Ray's tune.search.repeater: Repeater."""

from tunerun.tune.search import Repeater

__all__ = ["Repeater"]
