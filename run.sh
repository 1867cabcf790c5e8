#!/usr/bin/env bash
# ./run.sh test   create .venv if missing, install the package with its test extra, lint and type-check
#                 ivm_core and the adapter (ruff, mypy), run all tests in two pytest-xdist workers
# ./run.sh demo   create .venv if missing, install the package, run the sample project demo
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv

ensure_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    local py
    py="$(command -v python3.11 || command -v python3)"
    "$py" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]'
}

cmd="${1:-test}"
shift || true
case "$cmd" in
  test)
    ensure_venv
    "$VENV/bin/ruff" check ivm_core dbt/adapters/spark_ivm
    "$VENV/bin/mypy" -p ivm_core -p dbt.adapters.spark_ivm
    # two workers (tests/conftest.py: a file, and the thrift tier, stay in one worker)
    exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider -n 2 --dist loadgroup --no-loadscope-reorder tests "$@"
    ;;
  demo)
    ensure_venv
    exec "$VENV/bin/python" sample_project/run_demo.py "$@"
    ;;
  *)
    echo "usage: $0 {test|demo} [args...]" >&2
    exit 2
    ;;
esac
