"""A tqdm progress bar per phase with accepted / done / failed counts;
silent when quiet, when stderr is not a terminal, or without tqdm (the
``nova_moves[harness]`` extra)."""
import sys
import threading

try:
    import tqdm
except ImportError:  # the bars are a nicety; the run does not need them
    tqdm = None


class _NoBar:
    def update(self, n):
        pass

    def set_postfix(self, **kwargs):
        pass

    def close(self):
        pass


class PhaseBar:

    def __init__(self, name, total, quiet=False):
        self.accepted = self.done = self.failed = 0
        self._lock = threading.Lock()
        if tqdm is None:
            self._bar = _NoBar()
            return
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
