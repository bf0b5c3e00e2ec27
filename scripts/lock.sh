#!/bin/sh
# `make lock`: refresh constraints.txt, the versions `make play`, `make test` and `make bench` install.
# It installs every extra and the benchmarks' baselines, newest versions within pyproject.toml's
# bounds, into a throwaway virtualenv, runs `pip check`, and writes what it got (less noughts itself).
# Run the tests on the new versions (make clean test) before committing the file.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
venv=$(mktemp -d "${TMPDIR:-/tmp}/noughts-lock.XXXXXX")
trap 'rm -rf "$venv"' EXIT
"$PYTHON" -m venv "$venv"
pip="$venv/bin/python -m pip --disable-pip-version-check --quiet"
$pip install -e '.[dev,docs,desktop,web,panel,robot,rl,picture,postgres]'
$pip install -r benchmarks/requirements.txt || echo "lock: OpenSpiel could not be installed; it is left out" >&2
$pip check
{
    echo "# The versions CI tested: make play, make test and make bench install with pip's -c constraints.txt."
    echo "# Made by 'make lock' (scripts/lock.sh) with $("$venv/bin/python" -c 'import platform; print("Python", platform.python_version(), "on", platform.system(), platform.machine())'); do not edit by hand."
    $pip freeze --exclude-editable | grep -v -i '^noughts[=@ ]'
} > constraints.txt.new
mv constraints.txt.new constraints.txt
echo "constraints.txt: $(grep -c '==' constraints.txt) packages pinned"
