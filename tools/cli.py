"""The command lines' argument parsing (``tools``, ``scripts`` and ``benchmarks``): an ``argparse``
that refuses a repeated or abbreviated flag, and a positive-integer flag type."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any


class ArgumentParser(argparse.ArgumentParser):
    """``argparse`` that refuses a flag given twice (``--seeds 0 --seeds 1`` would run seed 1 alone)
    unless meant to repeat (``append``, ``count``), and abbreviated flags."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        seen: dict[str, str] = {}
        for token in sys.argv[1:] if args is None else list(args):
            if token == "--":
                break
            action = self._option_string_actions.get(token.split("=", 1)[0]) if token.startswith("-") else None
            if action is None or isinstance(action, (argparse._AppendAction, argparse._CountAction)):
                continue
            if action.dest in seen:
                self.error(f"{token.split('=', 1)[0]} given twice (after {seen[action.dest]}): give it once")
            seen[action.dest] = token.split("=", 1)[0]
        return super().parse_known_args(args, namespace)


def positive_int_arg(flag: str) -> Callable[[str], int]:
    """An argparse ``type`` for ``flag``: a positive integer, else an argparse error naming it."""

    def parse(text: str) -> int:
        # ASCII digits only: int() also reads "1_0" as 10 and other scripts' digits
        value = int(text) if text.isascii() and text.strip().isdigit() else 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {text!r}")
        return value

    return parse
