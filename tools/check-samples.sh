#!/bin/bash
# Regenerate the configuration and policy samples into a temporary
# directory and compare them with the checked-in ones in etc/nova_moves.
# Exits 1 (and shows the diff) when a checked-in sample is stale.
#
#   tools/check-samples.sh          check both
#   tools/check-samples.sh config   check nova_moves.conf.sample only
#   tools/check-samples.sh policy   check policy.yaml.sample only
#   tools/check-samples.sh --update [config|policy]
#                                   rewrite the checked-in samples
#
# BINDIR, when set, is where the oslo generator scripts are (else $PATH).
# SAMPLES_DIR replaces etc/nova_moves (the tests use a copy).
set -eu

update=0
if [[ ${1:-} == --update ]]; then
    update=1
    shift
fi
which=${1:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
etc=${SAMPLES_DIR:-$root/etc/nova_moves}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Our module code, not an installed copy's, goes into the samples.
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"

find_tool() {
    if [[ -n "${BINDIR:-}" && -x "$BINDIR/$1" ]]; then
        echo "$BINDIR/$1"
    else
        command -v "$1"
    fi
}

stale=0

check() {
    local name=$1 generator=$2 genconf=$3 toxenv=$4
    local tool
    tool=$(find_tool "$generator") || {
        echo "check-samples: $generator not found" >&2
        exit 2
    }
    "$tool" --config-file "$etc/$genconf" --output-file "$tmp/$name" \
        2>"$tmp/$name.err" || {
        cat "$tmp/$name.err" >&2
        echo "check-samples: $generator failed" >&2
        exit 2
    }
    if [[ $update == 1 ]]; then
        cp "$tmp/$name" "$etc/$name"
        echo "check-samples: wrote etc/nova_moves/$name"
    elif ! diff -u "$etc/$name" "$tmp/$name"; then
        echo "check-samples: etc/nova_moves/$name is stale;" \
            "regenerate it with: tox -e $toxenv -- --update" >&2
        stale=1
    fi
}

case $which in
    all|config|policy) ;;
    *)
        echo "usage: $0 [all|config|policy]" >&2
        exit 2 ;;
esac
if [[ $which != policy ]]; then
    check nova_moves.conf.sample oslo-config-generator \
        nova-moves-config-generator.conf genconfig
fi
if [[ $which != config ]]; then
    check policy.yaml.sample oslopolicy-sample-generator \
        nova-moves-policy-generator.conf genpolicy
fi

if [[ $update == 0 && $stale == 0 ]]; then
    echo "check-samples: samples are up to date"
fi
exit $stale
