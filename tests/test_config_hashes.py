"""Every protocol's cache keys are those of the committed fixture: a refactor keeps them.

If a key must change, re-key the committed results (config, config_hash, checksum) in the same
commit, rewrite the fixture with ``python scripts/config_hash_fixture.py --write`` and say why in
the commit message.
"""

import importlib.util
import json

from helpers.core.runtime import repo_root


def _fixture_module():
    path = repo_root() / "scripts" / "config_hash_fixture.py"
    spec = importlib.util.spec_from_file_location("config_hash_fixture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_protocol_keeps_its_cache_keys():
    fixture = _fixture_module()
    expected = json.loads(fixture.FIXTURE.read_text())
    assert fixture.diff(expected, fixture.current()) == []


def test_the_check_reports_a_changed_key():
    fixture = _fixture_module()
    expected = json.loads(fixture.FIXTURE.read_text())
    changed = {"protocols": dict(expected["protocols"])}
    name = next(iter(changed["protocols"]))
    changed["protocols"][name] = changed["protocols"][name][1:] + ["0123456789abcdef"]
    problems = fixture.diff(expected, changed)
    assert len(problems) == 1 and name in problems[0] and "0123456789abcdef" in problems[0]
