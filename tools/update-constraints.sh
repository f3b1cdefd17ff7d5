#!/usr/bin/env bash
# Rewrite upper-constraints.txt from the working venv (.venv): what the
# tests last passed with becomes what tox installs by default.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ensure-env.sh
{
    sed -n '/^#/p' upper-constraints.txt
    "$VENV/bin/pip" freeze --exclude-editable | grep -v -i -E '^nova.moves|@ file'
} > upper-constraints.txt.new
mv upper-constraints.txt.new upper-constraints.txt
