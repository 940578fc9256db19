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
# PYTHONHASHSEED: the same string hashes in both runs, so dict probing costs the same.
# One thread of numpy's BLAS: its pool's threads spin for a while in wall time, which callgrind
# (50 times slower) would count as instructions of the workload.
export PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# Once without callgrind first: every module the workload imports is compiled (its .pyc
# written) before counting, so that neither count pays for compiling what the other does not.
"$PYTHON" -m bench.engine_instructions 0 "$WORKLOAD" >/dev/null
count() {
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$1" \
        "$PYTHON" -m bench.engine_instructions "$1" "$WORKLOAD" >/dev/null 2>"$OUT/log.$1"
    grep '^summary:' "$OUT/cg.$1" | awk '{print $2}'
}
BASE=$(count 0)
TOTAL=$(count "$GAMES")
echo "instructions_per_$WORKLOAD $(( (TOTAL - BASE) / GAMES )) games $GAMES"
