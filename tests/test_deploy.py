"""docker-compose.yml against the Compose Specification's own JSON schema, and its commands against
the real `noughts web` options. Docker cannot run here: this is what can be checked without it.

tests/data/compose-spec.json is the published schema (Apache-2.0; see compose-spec.NOTICE.txt).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from noughts.cli import build_parser
from noughts.web.guard import TrustedProxies

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "data" / "compose-spec.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    return document


def problems(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(document)]


def test_the_compose_file_follows_the_compose_specification(compose: dict[str, Any]) -> None:
    assert problems(compose) == []
    # the schema does catch mistakes: a misspelt key, a number where Compose wants a duration
    broken = json.loads(json.dumps(compose))
    broken["services"]["web"]["restrat"] = "always"
    broken["services"]["web"]["stop_grace_period"] = 30
    assert len(problems(broken)) == 2


def web_command(service: dict[str, Any]) -> list[str]:
    """The `noughts web …` words a service runs, with Compose's `$$VAR` filled in from its environment."""
    command = service["command"]
    if command[:2] == ["sh", "-c"]:
        line = re.sub(r"\$\$(\w+)", lambda found: str(service["environment"][found.group(1)]), command[2])
        words = shlex.split(line)
        return words[1:] if words[0] == "exec" else words
    return list(command)


def test_the_services_run_real_noughts_web_options(compose: dict[str, Any]) -> None:
    words = web_command(compose["services"]["web"])
    assert words[:2] == ["noughts", "web"]
    options = build_parser().parse_args(words[1:])  # an unknown or malformed option exits here
    assert options.redis == "redis://redis:6379/0" and options.db.startswith("postgresql://noughts:")
    assert options.workers == 2 and options.host == "0.0.0.0"
    proxy_address = compose["services"]["proxy"]["networks"]["default"]["ipv4_address"]
    assert options.trusted_proxies == [proxy_address] and proxy_address in TrustedProxies(options.trusted_proxies)
    assert "redis" in compose["services"] and "postgres" in compose["services"]
    assert set(compose["services"]["web"]["depends_on"]) == {"redis", "postgres"}
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    cmd = json.loads(dockerfile.split("\nCMD ", 1)[1].splitlines()[0])
    assert cmd[:2] == ["noughts", "web"] and build_parser().parse_args(cmd[1:]).port == 8000
