#!/usr/bin/env bash
# tempest's compute API tests against a nova_moves stack with a real
# Keystone (tools/run_tempest.py; doc/tempest.md). Default: the move
# modules, as CI runs them; --set lifecycle | all for more.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure-env.sh
exec "$VENV/bin/python" tools/run_tempest.py "$@"
