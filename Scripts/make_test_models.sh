#!/bin/sh
# Regenerates TestModels/ (and, with --benchmark-models, Benchmarks/Models/) with the pinned
# TensorFlow / LiteRT versions of Scripts/requirements.txt.
#
#   Scripts/make_test_models.sh                      # rebuild all of TestModels/
#   Scripts/make_test_models.sh --only 'conv2d'      # regenerate matching cases, merge into the manifest
#   Scripts/make_test_models.sh --benchmark-models   # also write the full-size benchmark networks
#   VENV=/path/to/venv Scripts/make_test_models.sh   # use an existing virtual environment
set -eu

SCRIPTS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$SCRIPTS")
VENV=${VENV:-$SCRIPTS/.venv}

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV from Scripts/requirements.txt" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet -r "$SCRIPTS/requirements.txt"
fi

cd "$SCRIPTS"
exec "$VENV/bin/python" -m testmodels --out "$ROOT/TestModels" "$@"
