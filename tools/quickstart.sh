#!/usr/bin/env bash
# Quickstart, command 1: install into .venv, make sure RabbitMQ is up, then
# start api + conductor + scheduler + 2 computes, boot a server, cold
# migrate it, confirm, and print the timeline. Extra args go to the
# script (--keep leaves the stack running).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure-env.sh
exec "$VENV/bin/python" -m nova_moves.harness.quickstart "$@"
