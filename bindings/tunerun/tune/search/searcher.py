"""Ray's tune.search.searcher: Searcher, the base of Python searchers."""

from tunerun.tune.search import Searcher

__all__ = ["Searcher"]
