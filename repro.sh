#!/usr/bin/env bash
# One entry point for the README's two commands:
#   bash repro.sh book   create .venv, install, execute the notebooks (cpu profile), write _build/html
#   bash repro.sh test   create .venv, install, run pytest and nbval (smoke profile)
# Both fail loudly: every step runs under `set -euo pipefail`, with no pipelines that hide a status.
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

case "${1:-}" in
  book)
    setup
    export REPRO_PROFILE="${REPRO_PROFILE:-cpu}"
    "$VENV/bin/jupyter-book" build . -n -W --keep-going
    echo "book written to _build/html/index.html"
    ;;
  test)
    setup
    "$VENV/bin/pytest" tests -m "not browser"
    REPRO_PROFILE=smoke "$VENV/bin/pytest" --nbval-lax -p no:cacheprovider notebooks
    ;;
  *)
    echo "usage: bash repro.sh book|test" >&2
    exit 2
    ;;
esac
