#!/bin/sh
# Build the web server's per-move modules with mypyc, as C extensions beside their .py files (optional;
# `make compiled`). Python imports an extension before the .py of the same name, so the server then runs
# them compiled; the .py files stay the source and the default. `scripts/compile.sh clean` removes them.
# Needs mypy (the dev extra), a C compiler and Python's headers.
set -eu
cd "$(dirname "$0")/../src"
MODULES="noughts/game.py noughts/match.py noughts/web/protocol.py noughts/web/rooms.py noughts/web/hub.py
noughts/web/lobby.py noughts/web/connection.py noughts/web/guard.py noughts/web/shared.py noughts/web/shared_guard.py"
remove() {
    for module in $MODULES; do rm -f "${module%.py}".*.so; done
    rm -f ./*__mypyc.*.so
    rm -rf build
}
if [ "${1:-}" = clean ]; then remove; exit 0; fi
remove
PYTHON=${PYTHON:-python3}
# shellcheck disable=SC2086
"$PYTHON" -m mypyc $MODULES >build.log 2>&1 || { cat build.log >&2; rm -f build.log; exit 1; }
rm -rf build build.log
echo "compiled with mypyc: $MODULES" | tr '\n' ' '; echo
