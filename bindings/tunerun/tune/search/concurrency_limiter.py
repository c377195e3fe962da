"""Ray's tune.search.concurrency_limiter: ConcurrencyLimiter."""

from tunerun.tune.search import ConcurrencyLimiter

__all__ = ["ConcurrencyLimiter"]
