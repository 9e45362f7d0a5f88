"""Checks of the sources' excerpts (:class:`helpers.core.attribution.Quoted`): a number a ``paper.py``
module takes from an excerpt must be written in it, and the excerpt must stand in the source's
text where that text is at hand. Test code: the book computes nothing with it."""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

from helpers.core.attribution import Quoted

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_QUOTES = {ord(c): "'" for c in "\u2018\u2019\u201a\u201b\u2032`"} | {ord(c): '"' for c in "\u201c\u201d\u201e\u2033"}


#: The LaTeX commands the extractions use as symbols, and the symbol each reads as ("" drops it).
_LATEX = dict(
    pair.split("=")
    for pair in "times=× delta=δ lambda=λ alpha=α beta=β phi=φ infty=∞ ge=≥ le=≤ pm=± cdot=· approx=≈ "
    "varepsilon=ε mathbb= text= mathrm=".split()
)
_LATEX_COMMAND = re.compile(r"\\([a-zA-Z]+)")


def normalise(text: str) -> str:
    """``text`` for comparing an excerpt with an extracted source: unicode compatibility forms
    (``C²`` reads ``C2``), one dash and quote, LaTeX symbols (``\\delta`` reads ``δ``), no markdown
    emphasis, ``$``, braces, ``^`` or in-word hyphens, whitespace collapsed, lower case."""
    text = _LATEX_COMMAND.sub(lambda m: _LATEX.get(m.group(1), m.group(0)), text)
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES)
    text = re.sub(r"[*_$^{}\\]", "", text)
    text = re.sub(r"(\w)-\s*(\w)", r"\1\2", text)
    text = re.sub(r"\s+", " ", text).strip().lower()
    return re.sub(r" ?([=×,;:()]) ?", r"\1", text)


def _squash(text: str) -> str:
    return normalise(re.sub(r"[\s|]", "", text))


def occurs_in(quote: Quoted, source: str) -> bool:
    """True when ``quote`` stands in ``source`` (compared after :func:`normalise`; a table with its
    cell separators and whitespace removed, as an extraction runs cells together)."""
    if quote.table:
        return _squash(quote.text) in _squash(source)
    return normalise(quote.text) in normalise(source)


_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers_in(text: str) -> list[Decimal]:
    """Every decimal number written in ``text`` (``0.13``, ``5e-5``, ``-0.75``; a unicode minus
    counts as a sign)."""
    return [Decimal(t) for t in _NUMBER.findall(unicodedata.normalize("NFKC", text).translate(_DASHES))]


def quote_problems(quotes: dict[str, Quoted], source: str | None = None) -> list[str]:
    """What is wrong with a ``paper.py`` module's ``QUOTES``: a number taken from an excerpt that
    the excerpt does not hold, and (given the ``source`` text) an excerpt the source does not hold."""
    problems = []
    for key, quote in quotes.items():
        written = numbers_in(quote.text)
        if missing := [v for v in quote.values if not any(Decimal(str(v)) == n for n in written)]:
            problems.append(f"{key}: {missing} not in {quote.text!r} (numbers there: {written})")
        if source is not None and not occurs_in(quote, source):
            problems.append(f"{key} ({quote.where}): {quote.text!r} is not in the source text")
    return problems
