#!/usr/bin/env bash
# tempest's compute API tests against a nova_moves stack with a real
# Keystone (tools/run_tempest.py; doc/tempest.md). Default: the move
# modules; --set eleven | lifecycle (what CI runs) | all for more.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure-env.sh
exec "$VENV/bin/python" tools/run_tempest.py "$@"
