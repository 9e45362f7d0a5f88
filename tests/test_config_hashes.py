"""Every protocol's cache keys are those of the committed fixture: a refactor keeps them.

If a key must change, re-key the committed results (config, config_hash, checksum) in the same
commit, rewrite the fixture with ``python scripts/config_hash_fixture.py --write`` and say why in
the commit message.
"""

import json


def test_every_protocol_keeps_its_cache_keys(script):
    fixture = script("config_hash_fixture")
    expected = json.loads(fixture.FIXTURE.read_text())
    assert fixture.diff(expected, fixture.current()) == []


def test_the_check_reports_a_changed_key(script):
    fixture = script("config_hash_fixture")
    expected = json.loads(fixture.FIXTURE.read_text())
    changed = {"protocols": dict(expected["protocols"])}
    name = next(iter(changed["protocols"]))
    changed["protocols"][name] = changed["protocols"][name][1:] + ["0123456789abcdef"]
    problems = fixture.diff(expected, changed)
    assert len(problems) == 1 and name in problems[0] and "0123456789abcdef" in problems[0]
