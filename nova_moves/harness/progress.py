"""A tqdm progress bar per phase with accepted / done / failed counts;
silent when quiet or when stderr is not a terminal."""
import sys
import threading

import tqdm


class PhaseBar:

    def __init__(self, name, total, quiet=False):
        self.accepted = self.done = self.failed = 0
        self._lock = threading.Lock()
        self._bar = tqdm.tqdm(total=total, desc=name, unit='op',
                              file=sys.stderr, leave=True,
                              disable=quiet or not sys.stderr.isatty())

    def update_counts(self, record, accepted=False, finished=False):
        with self._lock:
            if accepted:
                self.accepted += 1
                return
            if record['outcome'] == 'ok':
                self.done += 1
            else:
                self.failed += 1
            self._bar.update(1)
            self._bar.set_postfix(accepted=self.accepted, done=self.done,
                                  failed=self.failed, refresh=False)

    def close(self):
        self._bar.close()
