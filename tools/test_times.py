"""Test durations that let stestr balance its workers on a fresh clone.

stestr deals tests it has no recorded time for round-robin to its
workers; the functional modules (grouped per module by .stestr.conf)
differ by minutes, so on a clean checkout one worker could get most of
them (a 6 / 21 minute split was seen). tools/run-tests.sh seeds a new
.stestr repository from tools/test-times.json, so the first run is
balanced too; later runs use their own recorded times.

  python tools/test_times.py record   # after a full run: rewrite the json
  python tools/test_times.py seed     # load the json into .stestr
"""
import datetime
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TIMES = os.path.join(HERE, 'test-times.json')
# setUpClass (a whole stack started) is not part of any test's own time:
# charge it to each class's first test so modules weigh what they cost.
CLASS_SETUP_SECONDS = 8.0


def record():
    import subunit
    import testtools
    out = subprocess.run([sys.prefix + '/bin/stestr', 'last', '--subunit'],
                         capture_output=True, check=True).stdout
    times, seen_classes = {}, set()

    class Collect(testtools.StreamResult):
        starts = {}

        def status(self, test_id=None, test_status=None, timestamp=None,
                   **kw):
            if test_status == 'inprogress' and timestamp:
                self.starts[test_id] = timestamp
            elif test_status == 'success' and test_id in self.starts:
                seconds = (timestamp - self.starts[test_id]).total_seconds()
                cls = test_id.rsplit('.', 1)[0]
                if cls not in seen_classes and '.functional.' in test_id:
                    seen_classes.add(cls)
                    seconds += CLASS_SETUP_SECONDS
                times[test_id] = round(seconds, 2)

    stream = subunit.ByteStreamToStreamResult(io.BytesIO(out))
    result = Collect()
    result.startTestRun()
    stream.run(result)
    result.stopTestRun()
    with open(TIMES, 'w') as f:
        json.dump(times, f, indent=0, sort_keys=True)
        f.write('\n')
    print('%d test times written to %s' % (len(times), TIMES))


def seed():
    import subunit
    with open(TIMES) as f:
        times = json.load(f)
    buf = io.BytesIO()
    out = subunit.StreamResultToBytes(buf)
    t = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    for test_id, seconds in sorted(times.items()):
        out.status(test_id=test_id, test_status='inprogress', timestamp=t)
        t += datetime.timedelta(seconds=seconds)
        out.status(test_id=test_id, test_status='success', timestamp=t)
    subprocess.run([sys.prefix + '/bin/stestr', 'load', '--force-init'],
                   input=buf.getvalue(), stdout=subprocess.DEVNULL,
                   check=True)


if __name__ == '__main__':
    {'record': record, 'seed': seed}[sys.argv[1]]()
