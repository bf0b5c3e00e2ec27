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


def test_no_password_reaches_a_command_line(compose: dict[str, Any]) -> None:
    """ps shows every process's arguments to anyone on the machine: secrets go in environments."""
    for name, service in compose["services"].items():
        command = service.get("command", [])
        line = " ".join(command) if isinstance(command, list) else str(command)
        assert "$" not in line, (name, line)  # nothing expanded into it
        assert not re.search(r"://[^/\s]*:[^/\s]*@", line), (name, line)
        assert "PASSWORD" not in line.upper(), (name, line)
    postgres = compose["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"]
    assert postgres.startswith("${NOUGHTS_DB_PASSWORD")  # the operator's own, from the shell or a .env file
    assert postgres in compose["services"]["web"]["environment"]["NOUGHTS_DB"]


def web_command(service: dict[str, Any]) -> list[str]:
    """The `noughts web …` words a service runs, with Compose's `$$VAR` filled in from its environment."""
    command = service["command"]
    if command[:2] == ["sh", "-c"]:
        line = re.sub(r"\$\$(\w+)", lambda found: str(service["environment"][found.group(1)]), command[2])
        words = shlex.split(line)
        return words[1:] if words[0] == "exec" else words
    return list(command)


def test_the_services_run_real_noughts_web_options(compose: dict[str, Any]) -> None:
    web = compose["services"]["web"]
    words = web_command(web)
    assert words[:2] == ["noughts", "web"]
    options = build_parser().parse_args(words[1:])  # an unknown or malformed option exits here
    # the addresses (and their passwords) come from the environment, not the command line
    assert options.redis is None and options.db is None
    assert web["environment"]["NOUGHTS_REDIS_URL"] == "redis://redis:6379/0"
    assert web["environment"]["NOUGHTS_DB"].startswith("postgresql://noughts:")
    assert options.workers == 2 and options.host == "0.0.0.0"
    proxy_address = compose["services"]["proxy"]["networks"]["default"]["ipv4_address"]
    assert options.trusted_proxies == [proxy_address] and proxy_address in TrustedProxies(options.trusted_proxies)
    assert "redis" in compose["services"] and "postgres" in compose["services"]
    assert set(compose["services"]["web"]["depends_on"]) == {"redis", "postgres"}
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    cmd = json.loads(dockerfile.split("\nCMD ", 1)[1].splitlines()[0])
    assert cmd[:2] == ["noughts", "web"] and build_parser().parse_args(cmd[1:]).port == 8000
