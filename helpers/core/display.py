"""How the book prints a statistic: intervals whose two ends never print the same, small values
with the significant digits they need, exact results in words. Pure formatting, no statistics;
:mod:`helpers.core.statistics` and :mod:`helpers.core.report` use it."""

from __future__ import annotations

import math

__all__ = ["MAX_DECIMALS", "exact_text", "interval_text", "number_text"]


#: The most decimals :func:`interval_text` and :func:`number_text` add to tell values apart.
MAX_DECIMALS: int = 12


def interval_text(
    low: float, high: float, digits: int = 2, *, spec: str = "+.{d}f", scale: float = 1.0, suffix: str = ""
) -> str:
    """``"[low, high]"`` with at least ``digits`` decimals, more (up to :data:`MAX_DECIMALS`) until
    different ends print differently and a nonzero end not as zero (``[-0.10, -0.10]`` would look
    exact). ``spec``: the format with ``{d}`` (``".{d}%"`` for a rate); ``scale`` multiplies both
    ends before comparing (leave 1 for a ``%`` spec). Equal ends print unchanged."""

    def fmt(v: float, d: int) -> str:
        return format(v * scale, spec.format(d=d)) + suffix

    def value(text: str) -> float:  # "-0.000" and "+0.000" are the same printed number
        return float(text[: -len(suffix)] if suffix else text.rstrip("%"))

    def unclear(d: int) -> bool:
        lo, hi = fmt(low, d), fmt(high, d)
        zero_end = any(v != 0 and value(t) == 0 for v, t in ((low, lo), (high, hi)))
        return value(lo) == value(hi) or zero_end

    d = digits
    while d < MAX_DECIMALS and low != high and unclear(d):
        d += 1
    return f"[{fmt(low, d)}, {fmt(high, d)}]"


def number_text(value: float, digits: int = 2, *, spec: str = ".{d}f") -> str:
    """``value`` with ``digits`` decimals, or more (up to :data:`MAX_DECIMALS`) until a nonzero
    value shows a significant digit: an MDE of 4e-5 must not read "0.00"."""
    if not math.isfinite(value):
        return "n/a"
    if abs(value) < 0.5 * 10.0**-MAX_DECIMALS:
        # zero up to floating-point rounding (the mean of paired differences that cancel in
        # decimal but not in binary, ~1e-17): "+0.00", not "-0.000000000000"
        value = 0.0
    d = digits
    if value != 0:
        needed = -math.floor(math.log10(abs(value)))  # decimals for one significant digit
        d = min(MAX_DECIMALS, max(digits, needed))
    return format(value, spec.format(d=d))


def exact_text(n: int, unit: str = "seeds") -> str:
    """The words of an exact result, a count: ``"identical on all 3 seeds"``."""
    return f"identical on all {n} {unit}"
