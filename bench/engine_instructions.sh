#!/bin/sh
# Instructions per random complete 4-player Sushi Go! game, counted by valgrind's callgrind
# (a count, not a time: a noisy machine cannot move it). Two runs of bench/engine_instructions.py,
# with 0 and with GAMES games; (difference) / GAMES is printed as "instructions_per_game N".
# With WORKLOAD "fold": instructions per fold of a finished 5-player game ("instructions_per_fold");
# "env": per random 4-player game played through the PettingZoo environment ("instructions_per_env").
# Usage: bench/engine_instructions.sh [GAMES [WORKLOAD]]   (PYTHON defaults to .venv/bin/python)
set -eu
GAMES=${1:-20}
WORKLOAD=${2:-game}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
count() {
    # PYTHONHASHSEED: the same string hashes in both runs, so dict probing costs the same.
    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$1" \
        "$PYTHON" -m bench.engine_instructions "$1" "$WORKLOAD" >/dev/null 2>"$OUT/log.$1"
    grep '^summary:' "$OUT/cg.$1" | awk '{print $2}'
}
BASE=$(count 0)
TOTAL=$(count "$GAMES")
echo "instructions_per_$WORKLOAD $(( (TOTAL - BASE) / GAMES )) games $GAMES"
