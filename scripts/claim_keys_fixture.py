"""Every claim's key, in report order, as a committed fixture that pages and tools can rely on.

A page reads its claims by key (``helpers.core.findings.claim``), so a key that disappears breaks
a page, and two claims with one key make the lookup ambiguous. The fixture lists the keys of
``helpers.claims.collect_claims()`` in report order. New keys are allowed; a key that is gone, a
duplicate, or a listed key out of order is reported.

    python scripts/claim_keys_fixture.py          # check against tests/fixtures/claim_keys.json
    python scripts/claim_keys_fixture.py --write  # rewrite the fixture (after adding claims)

``tests/test_claim_keys.py`` runs the check.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence

from helpers.core.runtime import repo_root
from tools.cli import ArgumentParser

FIXTURE = repo_root() / "tests" / "fixtures" / "claim_keys.json"
HOW_TO_UPDATE = "python scripts/claim_keys_fixture.py --write"


def current() -> list[str]:
    """The keys of every claim of the report, in report order."""
    from helpers.claims import report_claims

    return [c.key for c in report_claims()]


def problems(expected: Sequence[str], actual: Sequence[str]) -> list[str]:
    """What breaks the fixture's promise: duplicate keys, keys gone, listed keys out of order
    (empty when every listed key is still there, once, in the same order; new keys are fine)."""
    out = [f"duplicate key {k!r} ({n} claims)" for k, n in Counter(actual).items() if n > 1]
    gone = [k for k in expected if k not in actual]
    out += [f"key gone: {k!r}" for k in gone]
    kept = [k for k in dict.fromkeys(actual) if k in set(expected)]
    if not gone and kept != [k for k in expected if k in set(actual)]:
        out.append("the listed keys are no longer in report order")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="rewrite the fixture from the current claims")
    args = parser.parse_args(argv)
    os.environ["REPRO_PROFILE"] = "cpu"  # the report's profile: the committed cpu-profile results
    actual = current()
    if args.write:
        duplicates = problems([], actual)
        if duplicates:
            print("\n".join(duplicates))
            return 1
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {FIXTURE}: {len(actual)} keys")
        return 0
    found = problems(json.loads(FIXTURE.read_text()), actual)
    for line in found:
        print(line)
    print(f"{len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
