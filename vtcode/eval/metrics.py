"""Pass rates over repeated runs: pass@1, the unbiased pass@k estimator, and pass^k.

With n runs of a task of which c passed:

- pass@1 = c / n;
- pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k runs drawn without
  replacement from the n passes (Chen et al. 2021, the unbiased estimator);
- pass^k = C(c, k) / C(n, k): the chance that all k drawn runs pass (tau-bench's reliability
  measure).

Both need n >= k; a suite-level figure is the mean over its tasks.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from math import comb

__all__ = ["mean_or_none", "median_or_none", "pass_at_k", "pass_hat_k"]


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n) or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k; None when fewer than k runs exist."""
    _check(n, c, k)
    if n < k:
        return None
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """pass^k: all k of k drawn runs pass; None when fewer than k runs exist."""
    _check(n, c, k)
    if n < k:
        return None
    return comb(c, k) / comb(n, k)


def mean_or_none(values: Sequence[float | None]) -> float | None:
    """The mean of the known values; None when there is none."""
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def median_or_none(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None
