#!/usr/bin/env bash
# Benchmarks of an earlier commit and of the working tree, run one after the other on this
# machine, saved by pytest-benchmark and compared (medians), so a change can show it made
# nothing slower:
#
#     bash bench/compare.sh BASE [PYTEST ARGS...]
#     bash bench/compare.sh HEAD~3                                # bench/test_bench_scale.py
#     bash bench/compare.sh main bench/test_bench_kernels.py -k hrr
#
# BASE is checked out in a temporary git worktree and imported from there (PYTHONPATH), with
# this checkout's virtual environment ($PYTHON, default .venv/bin/python). The runs are kept
# under $BENCH_STORE (default: a new temporary folder) as "base" and "head"; pytest-benchmark's
# own `compare` prints both, each test's median and its ratio to the fastest. The development
# data is found as the tests find it ($FASTMEM_DATA, default ../shared/data beside the checkout).
set -euo pipefail
base=${1:?usage: bash bench/compare.sh BASE [pytest args...]}
shift
sel=("$@")
[ ${#sel[@]} -eq 0 ] && sel=(bench/test_bench_scale.py)
root=$(git rev-parse --show-toplevel)
py=${PYTHON:-$root/.venv/bin/python}
store=${BENCH_STORE:-$(mktemp -d)}
export FASTMEM_DATA=${FASTMEM_DATA:-$(cd "$root/.." && pwd)/shared/data}
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-$root/.numba_cache}
wt=$(mktemp -d)/base
git -C "$root" worktree add --detach "$wt" "$base" >/dev/null
trap 'git -C "$root" worktree remove --force "$wt"' EXIT
run() {  # run NAME DIR
    (cd "$2" && PYTHONPATH="$2" "$py" -m pytest "${sel[@]}" -q -p no:cacheprovider --benchmark-only \
        --benchmark-storage="file://$store" --benchmark-save="$1" --benchmark-columns=median,iqr,rounds)
}
echo "base: $(git -C "$wt" log --oneline -1)"
run base "$wt"
echo "head: working tree of $(git -C "$root" log --oneline -1)"
run head "$root"
"$(dirname "$py")/pytest-benchmark" --storage "file://$store" compare '*base*' '*head*' --group-by=name \
    --columns=median,iqr,rounds --sort=name
echo "runs kept in $store"
