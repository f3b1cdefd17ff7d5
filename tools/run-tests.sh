#!/usr/bin/env bash
# Quickstart, command 2: every test, unit and functional (the functional
# ones start the real processes on the local RabbitMQ, one vhost each).
# Prints a closing "N passed, N failed" line. Args go to stestr's filter.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/ensure-env.sh
# A fresh checkout has no recorded test times: seed them so stestr's
# workers get equal shares of the functional modules. Three workers on
# this 2-core machine kind: the functional tests mostly wait on their
# processes (27 min for the whole suite, against 50+ with two).
if [ ! -d .stestr ]; then "$VENV/bin/python" tools/test_times.py seed; fi
"$VENV/bin/stestr" --test-path tests run --concurrency "${TEST_CONCURRENCY:-3}" "$@"
rc=$?
"$VENV/bin/python" - <<'PY'
import subprocess, sys
out = subprocess.run([sys.prefix + '/bin/stestr', 'last', '--subunit'],
                     capture_output=True).stdout
import subunit, testtools
stream = subunit.ByteStreamToStreamResult(__import__('io').BytesIO(out))
summary = testtools.StreamSummary()
summary.startTestRun(); stream.run(summary); summary.stopTestRun()
# CI keeps only the tail of this output: name what failed, and the end
# of each traceback, right above the totals.
for test, detail in summary.errors + summary.failures:
    print('FAILED: %s' % test.id())
    print('\n'.join('    ' + l for l in detail.splitlines()[-25:]))
failed = len(summary.errors) + len(summary.failures)
skipped = len(summary.skipped) if hasattr(summary, 'skipped') else 0
passed = summary.testsRun - failed - skipped
print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
PY
exit $rc
