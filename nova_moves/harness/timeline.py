"""Pictures of a run (matplotlib, Agg backend, no display needed):
a timeline with one row per server and a coloured segment per status,
faults and phase starts marked; and a histogram of API latency per
operation and microversion (sync 2.33 versus async 2.34 side by side)."""
import matplotlib

matplotlib.use('Agg')
from matplotlib import patches  # noqa: E402
from matplotlib import pyplot  # noqa: E402

COLOURS = {
    'BUILD': '#bdbdbd', 'ACTIVE': '#4caf50', 'RESIZE': '#ff9800',
    'VERIFY_RESIZE': '#ffd54f', 'REVERT_RESIZE': '#ce93d8',
    'MIGRATING': '#2196f3', 'REBUILD': '#00bcd4', 'SHUTOFF': '#607d8b',
    'ERROR': '#e53935', 'DELETED': '#ffffff', 'UNKNOWN': '#000000',
}
MAX_ROWS = 150


def timeline(report, path, title=None):
    history = report['timeline']
    names = report.get('server_names', {})
    ids = sorted(history, key=lambda s: (history[s][0][0] if history[s]
                                         else 0, names.get(s, s)))
    if len(ids) > MAX_ROWS:
        step = len(ids) / float(MAX_ROWS)
        ids = [ids[int(i * step)] for i in range(MAX_ROWS)]
    end = max([t for h in history.values() for t, _ in h] +
              [f['t'] for f in report['faults']] +
              [p['end'] for p in report['phases']] + [1.0])
    end += 0.5
    height = max(3.0, min(12, 0.12 * len(ids) + 2.0))
    fig, ax = pyplot.subplots(figsize=(10, height), dpi=80)
    seen = set()
    for row, sid in enumerate(ids):
        hist = history[sid]
        for i, (t, status) in enumerate(hist):
            stop = hist[i + 1][0] if i + 1 < len(hist) else end
            if status == 'DELETED':
                continue
            seen.add(status)
            ax.broken_barh([(t, stop - t)], (row + 0.1, 0.8),
                           facecolors=COLOURS.get(status, '#9e9e9e'),
                           linewidth=0)
    for i, phase in enumerate(report['phases']):
        ax.axvline(phase['start'], color='#9e9e9e', linestyle=':',
                   linewidth=0.8)
        ax.text(phase['start'], len(ids) + 0.1 + 0.6 * (i % 2),
                ' ' + phase['name'], fontsize=7, color='#616161',
                va='bottom')
    for i, fault in enumerate(report['faults']):
        ax.axvline(fault['t'], color='#d50000', linewidth=1.2)
        # Faults often come in pairs (kill + force-down): stagger labels.
        ax.text(fault['t'], -0.3 - 0.9 * (i % 2), ' %s %s' % (
            fault['action'], fault['target']), fontsize=7, color='#d50000',
            va='top')
    ax.set_xlim(0, end)
    ax.set_ylim(-2.2, len(ids) + 1.5)
    ax.set_yticks([])
    ax.set_xlabel('seconds since start')
    ax.set_ylabel('%d servers' % len(ids))
    ax.set_title(title or 'Scenario %s' % report['scenario'])
    handles = [patches.Patch(color=COLOURS.get(s, '#9e9e9e'), label=s)
               for s in COLOURS if s in seen]
    ax.legend(handles=handles, loc='upper left', bbox_to_anchor=(1.0, 1.0),
              fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    pyplot.close(fig)
    return path


def latency_histogram(report, path):
    """API latency (left) and end-to-end time (right) per (operation,
    microversion); an operation run at several microversions (live
    migration at 2.33 and 2.34) shares its axes so the paths compare."""
    groups = {}
    for rec in report['records']:
        if rec.get('api_s') is None or rec['operation'] == 'boot':
            continue
        group = groups.setdefault((rec['operation'], rec['microversion']),
                                  ([], []))
        group[0].append(rec['api_s'] * 1000.0)
        if rec.get('e2e_s') is not None:
            group[1].append(rec['e2e_s'])
    if not groups:
        return None
    ops = sorted({op for op, _ in groups})
    fig, axes = pyplot.subplots(len(ops), 2, figsize=(11, 2.8 * len(ops)),
                                dpi=80, squeeze=False)
    for row, op in enumerate(ops):
        versions = sorted((v for o, v in groups if o == op),
                          key=lambda v: tuple(map(int, v.split('.'))))
        for col, (label, unit) in enumerate((('API latency', 'ms'),
                                             ('end to end', 's'))):
            ax = axes[row, col]
            values = {v: groups[(op, v)][col] for v in versions}
            top = max([max(vals) for vals in values.values() if vals] + [0])
            bins = [top * i / 40.0 for i in range(41)] if top > 0 else 10
            for version in versions:
                if values[version]:
                    ax.hist(values[version], bins=bins, alpha=0.6,
                            label='%s (n=%d)' % (version,
                                                 len(values[version])))
            ax.set_title('%s: %s' % (op, label), fontsize=9)
            ax.set_xlabel(unit)
            ax.set_ylabel('requests')
            if any(values.values()):
                ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    pyplot.close(fig)
    return path
