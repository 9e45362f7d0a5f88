"""A refused argument, checked the way ``pytest.raises(error, match=...)`` checks it, but returning
what is wrong instead of raising, so one test can loop over many bad values and list every one
that is accepted or refused wrongly."""

from __future__ import annotations

import re
from collections.abc import Callable


def refusal_fault(label: str, call: Callable[[], object], error: type[Exception], match: str | None = None) -> str:
    """What is wrong with how ``call()`` is refused ("" when it raises ``error`` with a message that
    ``match`` finds, as ``pytest.raises(error, match=match)`` checks)."""
    try:
        call()
    except error as err:
        if match is not None and not re.search(match, str(err)):
            return f"{label}: {type(err).__name__} without {match!r} in its message: {str(err)[:300]}"
        return ""
    except Exception as err:  # noqa: BLE001 - a different error is a fault to list
        return f"{label}: {type(err).__name__} instead of {error.__name__}: {str(err)[:300]}"
    return f"{label}: accepted"
