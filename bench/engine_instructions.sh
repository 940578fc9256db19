#!/bin/sh
# Instructions per random complete 4-player Sushi Go! game, counted by valgrind's callgrind
# (a count, not a time: a noisy machine cannot move it). Two runs of bench/engine_instructions.py,
# with 0 and with GAMES games; (difference) / GAMES is printed as "instructions_per_game N".
# Usage: bench/engine_instructions.sh [GAMES]   (PYTHON defaults to .venv/bin/python)
set -eu
GAMES=${1:-20}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
count() {
    # PYTHONHASHSEED: the same string hashes in both runs, so dict probing costs the same.
    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$1" \
        "$PYTHON" -m bench.engine_instructions "$1" >/dev/null 2>"$OUT/log.$1"
    grep '^summary:' "$OUT/cg.$1" | awk '{print $2}'
}
BASE=$(count 0)
TOTAL=$(count "$GAMES")
echo "instructions_per_game $(( (TOTAL - BASE) / GAMES )) games $GAMES"
