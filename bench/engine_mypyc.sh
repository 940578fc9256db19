#!/bin/sh
# Issue 15's mypyc experiment (cardroom itself runs pure Python: README, Benchmarks, "Engine"):
# copies domain/, bench/ and pyproject.toml (mypy's config) to a scratch folder, compiles MODULES
# there with mypyc (mypy's compiler, in requirements/dev.txt; it needs gcc and Python's headers),
# and counts instructions per game and per fold there with bench/engine_instructions.sh. Nothing
# is compiled in the checkout, so no stale extension module can shadow its sources.
# Usage: bench/engine_mypyc.sh [MODULE.py ...]   (default: the 16 modules a random game runs)
set -eu
HERE=$(pwd)
PYTHON=${PYTHON:-.venv/bin/python}
case $PYTHON in /*) ;; *) PYTHON=$HERE/$PYTHON ;; esac
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r domain bench pyproject.toml "$WORK"/
cd "$WORK"
if [ $# -eq 0 ]; then
    set -- domain/sushigo/game.py domain/sushigo/picks.py domain/sushigo/table.py \
        domain/sushigo/rounds.py domain/sushigo/evolution.py domain/sushigo/state.py \
        domain/sushigo/randomplay.py domain/sushigo/scoring.py domain/sushigo/rules.py \
        domain/sushigo/cards.py domain/sushigo/shuffle.py domain/sushigo/upcast.py \
        domain/lifecycle.py domain/shuffle.py domain/bots.py domain/names.py
fi
"$(dirname "$PYTHON")/mypyc" "$@" >mypyc.log 2>&1 || { cat mypyc.log >&2; exit 1; }
# The counts must be of the compiled modules, not of the checkout an editable install points at.
for module in "$@"; do
    name=$(echo "${module%.py}" | tr / .)
    "$PYTHON" -c "import sys, $name; sys.exit(not sys.modules['$name'].__file__.endswith('.so'))" ||
        { echo "$name was not imported compiled" >&2; exit 1; }
done
echo "compiled: $*"
PYTHON=$PYTHON "$HERE/bench/engine_instructions.sh" "${GAMES:-20}"
PYTHON=$PYTHON "$HERE/bench/engine_instructions.sh" "${GAMES:-20}" fold
