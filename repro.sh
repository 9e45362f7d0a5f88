#!/usr/bin/env bash
# One entry point for the README's two commands:
#   bash repro.sh book   create .venv, install, execute the notebooks (cpu profile), write _build/html
#   bash repro.sh test   create .venv, install, ruff (lint, format), pytest and nbval (smoke profile), on every core
#   bash repro.sh lab    create .venv, install, open the notebooks in JupyterLab (cpu profile)
# Each first checks that the datasets are readable (python -m tools.preflight): book and test stop
# at once, naming every missing one and how to supply it; lab says so and opens anyway.
# All fail loudly: every step runs under `set -euo pipefail`, with no pipelines that hide a status.
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3.11}
VENV=${VENV:-.venv}

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  # Re-install only when pyproject.toml changed since the last successful install.
  local stamp="$VENV/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    "$VENV/bin/pip" install --quiet --upgrade pip
    "$VENV/bin/pip" install --quiet -e ".[test]"
    "$VENV/bin/python" -m ipykernel install --prefix "$VENV" --name python3 >/dev/null
    touch "$stamp"
  fi
  # The offline data mirror beside the checkout (CI and this project's machines) when present.
  if [ -z "${REPRO_DATA_DIR:-}" ] && [ -d ../shared/data ]; then
    REPRO_DATA_DIR="$(cd ../shared/data && pwd)"
    export REPRO_DATA_DIR
  fi
}

preflight() {
  "$VENV/bin/python" -m tools.preflight
}

case "${1:-}" in
  book)
    setup
    preflight
    export REPRO_PROFILE="${REPRO_PROFILE:-cpu}"
    "$VENV/bin/python" scripts/build_book.py .   # jupyter-book build . -n -W --keep-going, pages in parallel
    echo "book written to _build/html/index.html"
    ;;
  test)
    setup
    preflight
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    "$VENV/bin/ruff" check --isolated --select F401,F811 notebooks  # a page imports what it uses, nothing else
    # the report, computed once for these inputs and stored (.cache/report/): pytest, nbval and
    # the book read it; computing it here keeps one pytest worker from waiting on it alone
    tr=$(date +%s)
    "$VENV/bin/python" -c "from helpers.claims import report_claims; print(len(report_claims()), 'report rows')"
    echo "== report computed or read in $(( $(date +%s) - tr )) s"
    t0=$(date +%s)
    # one worker per core (pytest-xdist, at most 8); a notebook runs whole on one worker
    "$VENV/bin/pytest" tests -p no:nbval -m "not browser" -n auto --maxprocesses 8 --dist worksteal --durations=15
    t1=$(date +%s)
    echo "== pytest took $(( t1 - t0 )) s"
    REPRO_PROFILE=smoke "$VENV/bin/pytest" --nbval-lax -p no:cacheprovider notebooks -n auto --maxprocesses 8 --dist loadfile
    echo "== nbval took $(( $(date +%s) - t1 )) s"
    ;;
  lab)
    setup
    preflight || echo "opening JupyterLab anyway: cells that load a missing dataset will fail" >&2
    export REPRO_PROFILE="${REPRO_PROFILE:-cpu}"
    shift
    as_root=()
    if [ "$(id -u)" = 0 ]; then as_root=(--allow-root); fi  # containers often run as root
    exec "$VENV/bin/jupyter" lab notebooks/ "${as_root[@]}" "$@"
    ;;
  *)
    echo "usage: bash repro.sh book|test|lab" >&2
    exit 2
    ;;
esac
