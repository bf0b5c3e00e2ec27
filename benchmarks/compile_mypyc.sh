#!/bin/sh
# An experiment, not a build step: compile the web server's per-move modules with mypyc, as C extensions
# beside their .py files, to measure what compiled room logic saves (docs/web-protocol.md, The issue's
# targets). Python imports an extension before the .py of the same name, so everything run from this
# checkout then uses them: run it in a checkout of its own, never in one others import, and compare with
# an untouched checkout (benchmarks/web_lobby.py, benchmarks/web_load.py). Not every test passes
# compiled (see the docs). `benchmarks/compile_mypyc.sh clean` removes the extensions.
# Needs mypy (the dev extra), a C compiler and Python's headers; PYTHON names the interpreter.
set -eu
cd "$(dirname "$0")/../src"
MODULES="noughts/game.py noughts/match.py noughts/web/protocol.py noughts/web/rooms.py noughts/web/hub.py
noughts/web/lobby.py noughts/web/connection.py noughts/web/guard.py noughts/web/shared.py noughts/web/shared_guard.py"
remove() {
    find noughts -name '*.so' -delete  # (the package has no other extensions)
    rm -f ./*__mypyc.*.so
    rm -rf build .mypy_cache
}
if [ "${1:-}" = clean ]; then remove; exit 0; fi
remove
PYTHON=${PYTHON:-python3}
# shellcheck disable=SC2086
"$PYTHON" -m mypyc $MODULES >build.log 2>&1 || { cat build.log >&2; rm -f build.log; exit 1; }
rm -rf build build.log .mypy_cache
echo "compiled with mypyc: $MODULES" | tr '\n' ' '; echo
