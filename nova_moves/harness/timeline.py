"""Pictures of a run (matplotlib, Agg backend, no display needed).

timeline(): one labelled row per server (its name and the moves it
made), a coloured segment per status, each move's source -> destination
written where it happened, the phases and the faults on a lane of their
own above the servers (labels stacked so they never overlap), and a
legend. latency(): per operation, the distributions (box and points) of
API latency and end-to-end time per microversion, and of each phase of
the moves' breakdown."""
import random
import re

try:
    import matplotlib
except ImportError:  # the nova_moves[harness] extra: require() says so
    matplotlib = mlines = patches = pyplot = None
else:
    matplotlib.use('Agg')
    from matplotlib import lines as mlines
    from matplotlib import patches
    from matplotlib import pyplot


def require():
    """ImportError when matplotlib (the [harness] extra) is missing; the
    callers print how to install it and go on without pictures."""
    if matplotlib is None:
        raise ImportError('matplotlib is not installed')


COLOURS = {
    'BUILD': '#bdbdbd', 'ACTIVE': '#4caf50', 'RESIZE': '#ff9800',
    'VERIFY_RESIZE': '#ffd54f', 'REVERT_RESIZE': '#ce93d8',
    'MIGRATING': '#2196f3', 'REBUILD': '#00bcd4', 'SHUTOFF': '#607d8b',
    'ERROR': '#e53935', 'DELETED': '#ffffff', 'UNKNOWN': '#000000',
}
MOVES = ('resize', 'migrate', 'live-migrate', 'evacuate')
FAULT_COLOUR = '#d50000'
MAX_ROWS = 150
# Rows up to this many get every label; beyond, every n-th.
LABELLED_ROWS = 40


def _natural(name):
    """'vm-10' after 'vm-9': digits compare as numbers."""
    return [int(part) if part.isdigit() else part
            for part in re.split(r'(\d+)', name)]


def _short(host):
    return host or '?'


def _moves_by_server(report):
    moves = {}
    for rec in report.get('records', []):
        if rec['operation'] in MOVES and rec.get('server'):
            moves.setdefault(rec['server'], []).append(rec)
    return moves


def _row_label(name, moves):
    kinds = []
    for rec in moves:
        kind = rec['operation']
        if rec.get('microversion') and kind == 'live-migrate':
            kind += ' ' + rec['microversion']
        if kind not in kinds:
            kinds.append(kind)
    return '%s  %s' % (name, ', '.join(kinds)) if kinds else name


def _stack_labels(items, width_per_char, start_level=0):
    """(x, text) -> level so that labels on one level do not overlap: a
    label goes on the lowest level whose last label ends before it."""
    ends, out = [], []
    for x, text in sorted(items, key=lambda i: i[0]):
        width = (len(text) + 2) * width_per_char
        for level, end in enumerate(ends):
            if end <= x:
                ends[level] = x + width
                out.append((x, text, level + start_level))
                break
        else:
            ends.append(x + width)
            out.append((x, text, len(ends) - 1 + start_level))
    return out, len(ends)


def timeline(report, path, title=None):
    require()
    history = report['timeline']
    names = report.get('server_names', {})
    moves = _moves_by_server(report)
    ids = sorted(history, key=lambda s: (history[s][0][0] if history[s]
                                         else 0, _natural(names.get(s, s))))
    if len(ids) > MAX_ROWS:
        step = len(ids) / float(MAX_ROWS)
        ids = [ids[int(i * step)] for i in range(MAX_ROWS)]
    end = max([t for h in history.values() for t, _ in h] +
              [f['t'] for f in report['faults']] +
              [p['end'] for p in report['phases']] + [1.0]) * 1.02 + 0.2
    width_in = 12.0
    # Text width in data units, for stacking the lane's labels.
    char = end / (width_in * 0.78 * 72 / 6.2)
    lane_items = [(p['start'], p['name'] if p.get('operation') in (
        None, p['name']) else '%s (%s)' % (p['name'], p['operation']))
        for p in report['phases']]
    phase_labels, phase_levels = _stack_labels(lane_items, char)
    fault_labels, fault_levels = _stack_labels(
        [(f['t'], '%s %s' % (f['action'], f['target']))
         for f in report['faults']], char, start_level=phase_levels)
    levels = max(1, phase_levels + fault_levels)
    rows = len(ids)
    row_h = 0.22 if rows <= LABELLED_ROWS else 0.08
    main_h = max(2.0, min(14.0, row_h * rows + 1.0))
    lane_h = 0.25 * levels + 0.35
    fig, (lane, ax) = pyplot.subplots(
        2, 1, sharex=True, figsize=(width_in, main_h + lane_h + 1.3),
        dpi=80, gridspec_kw={'height_ratios': [lane_h, main_h],
                             'hspace': 0.04})
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
        if rows <= LABELLED_ROWS:
            for rec in moves.get(sid, []):
                before, after = rec.get('host_before'), rec.get('host_after')
                if not before or rec.get('sent') is None:
                    continue
                if after and after != before:
                    text = '%s\u2192%s' % (_short(before), _short(after))
                else:
                    text = '%s: %s, stayed' % (before, rec['outcome'])
                ax.text(rec['sent'], row + 0.5, ' ' + text, fontsize=6.5,
                        va='center', ha='left', color='#212121',
                        clip_on=True)
    for phase in report['phases']:
        for axis in (lane, ax):
            axis.axvline(phase['start'], color='#9e9e9e', linestyle=':',
                         linewidth=0.8)
    for fault in report['faults']:
        for axis in (lane, ax):
            axis.axvline(fault['t'], color=FAULT_COLOUR, linewidth=1.0,
                         alpha=0.8)
    for x, text, level in phase_labels:
        lane.text(x, level + 0.5, ' ' + text, fontsize=7, color='#424242',
                  va='center')
    for x, text, level in fault_labels:
        lane.plot([x], [level + 0.5], marker='v', color=FAULT_COLOUR,
                  markersize=5)
        lane.text(x, level + 0.5, '  ' + text, fontsize=7,
                  color=FAULT_COLOUR, va='center')
    lane.set_ylim(levels, 0)
    lane.set_yticks([])
    lane.set_ylabel('phases\nfaults', fontsize=7, rotation=0, ha='right',
                    va='center')
    for side in ('top', 'right', 'left'):
        lane.spines[side].set_visible(False)
    lane.tick_params(axis='x', length=0)
    ax.set_xlim(0, end)
    ax.set_ylim(rows, 0)
    every = max(1, rows // LABELLED_ROWS + (rows % LABELLED_ROWS > 0))
    ticks = list(range(0, rows, every))
    ax.set_yticks([r + 0.5 for r in ticks])
    ax.set_yticklabels([_row_label(names.get(ids[r], ids[r][:8]),
                                   moves.get(ids[r], [])) for r in ticks],
                       fontsize=7 if rows <= LABELLED_ROWS else 5)
    ax.tick_params(axis='y', length=0)
    ax.set_xlabel('seconds since the stack was up')
    lane.set_title(title or 'Scenario %s: %d servers, one row each%s' % (
        report['scenario'], len(history),
        '' if len(history) <= MAX_ROWS else ' (%d shown)' % rows))
    handles = [patches.Patch(color=COLOURS.get(s, '#9e9e9e'), label=s)
               for s in COLOURS if s in seen]
    if report['faults']:
        handles.append(mlines.Line2D([], [], color=FAULT_COLOUR, marker='v',
                                     label='fault'))
    handles.append(mlines.Line2D([], [], color='#9e9e9e', linestyle=':',
                                 label='phase start'))
    if rows <= LABELLED_ROWS:
        handles.append(mlines.Line2D([], [], color='none',
                                     label='a\u2192b: moved from a to b'))
    ax.legend(handles=handles, loc='upper left', bbox_to_anchor=(1.005, 1.0),
              fontsize=7, frameon=False, title='status', title_fontsize=7)
    fig.subplots_adjust(left=0.2, right=0.86, top=0.95, bottom=0.08)
    fig.savefig(path, bbox_inches='tight')
    pyplot.close(fig)
    return path


def _groups(report):
    """{operation: {microversion: {'api': [ms], 'e2e': [s],
    'phases': {phase: [s]}}}} of the run's requests (boots left out)."""
    out = {}
    for rec in report['records']:
        if rec.get('api_s') is None or rec['operation'] == 'boot':
            continue
        group = out.setdefault(rec['operation'], {}).setdefault(
            rec['microversion'], {'api': [], 'e2e': [], 'phases': {}})
        group['api'].append(rec['api_s'] * 1000.0)
        if rec.get('e2e_s') is not None:
            group['e2e'].append(rec['e2e_s'])
        for phase, seconds in (rec.get('phases') or {}).items():
            group['phases'].setdefault(phase, []).append(seconds)
    return out


def _distribution(ax, series, colours, positions, ticks):
    """Boxes (median, quartiles, 5-95% whiskers) with every point
    jittered on top, so the shape and the outliers both show. ``ticks``
    is [(position, label)]."""
    present = [(s, c, x) for s, c, x in zip(series, colours, positions)
               if s]
    if not present:
        ax.text(0.5, 0.5, 'no data', ha='center', va='center',
                transform=ax.transAxes, fontsize=8, color='#9e9e9e')
        return
    box = ax.boxplot([s for s, _, _ in present], whis=(5, 95),
                     positions=[x for _, _, x in present],
                     showfliers=False, patch_artist=True, widths=0.6)
    for patch, (_, colour, _) in zip(box['boxes'], present):
        patch.set_facecolor(colour)
        patch.set_alpha(0.35)
    for median in box['medians']:
        median.set_color('#212121')
    rng = random.Random(0)  # the same picture for the same report
    for values, colour, x in present:
        ax.scatter([x + rng.uniform(-0.2, 0.2) for _ in values], values,
                   s=6, color=colour, alpha=0.7, linewidths=0)
    ax.set_xticks([x for x, _ in ticks])
    ax.set_xticklabels([label for _, label in ticks], fontsize=7)
    ax.set_xlim(min(positions) - 0.7, max(positions) + 0.7)
    # From zero: a narrow range would make small differences look big.
    ax.set_ylim(bottom=0)
    ax.grid(axis='y', color='#eeeeee')


def latency_histogram(report, path):
    """Per operation (a row of panels): API latency and end-to-end time
    per microversion, then the moves' phases side by side per
    microversion. Returns None when there is nothing to draw."""
    require()
    from nova_moves.harness import phases as nm_phases
    groups = _groups(report)
    if not groups:
        return None
    ops = list(groups)  # in the order the run did them
    palette = ['#1e88e5', '#fb8c00', '#43a047', '#8e24aa', '#e53935']
    fig, axes = pyplot.subplots(
        len(ops), 3, figsize=(13, 3.2 * len(ops)), dpi=80, squeeze=False,
        gridspec_kw={'width_ratios': [1, 1, 2.4]})
    for row, op in enumerate(ops):
        versions = sorted(groups[op], key=lambda v: tuple(
            map(int, v.split('.'))))
        colours = [palette[i % len(palette)] for i in range(len(versions))]
        for col, (key, label) in enumerate((('api', 'API latency, ms'),
                                            ('e2e', 'end to end, s'))):
            ax = axes[row, col]
            series = [groups[op][v][key] for v in versions]
            _distribution(ax, series, colours, range(len(versions)),
                          [(i, '%s\nn=%d' % (v, len(series[i])))
                           for i, v in enumerate(versions)])
            ax.set_title('%s: %s' % (op, label), fontsize=9)
        ax = axes[row, 2]
        phase_names = [p for p in nm_phases.ALL_PHASES if any(
            any(groups[op][v]['phases'].get(p, [])) for v in versions)]
        if not phase_names:
            ax.text(0.5, 0.5, 'no phase breakdown for %s (only moves have '
                    'one)' % op, ha='center', va='center', fontsize=8,
                    color='#9e9e9e', transform=ax.transAxes)
            ax.axis('off')
            continue
        # One group per phase, the microversions side by side in it.
        series, cols, positions, ticks = [], [], [], []
        slot = len(versions) + 0.8
        for i, phase in enumerate(phase_names):
            for j, (v, colour) in enumerate(zip(versions, colours)):
                series.append(groups[op][v]['phases'].get(phase, []))
                cols.append(colour)
                positions.append(i * slot + j)
            ticks.append((i * slot + (len(versions) - 1) / 2.0, phase))
        _distribution(ax, series, cols, positions, ticks)
        ax.set_title('%s: where the time went, per phase, s' % op,
                     fontsize=9)
        if len(versions) > 1:
            ax.legend(handles=[patches.Patch(color=c, alpha=0.5, label=v)
                               for v, c in zip(versions, colours)],
                      title='microversion', fontsize=7, title_fontsize=7,
                      loc='upper left')
    fig.suptitle('Scenario %s: distributions (box 25-75%%, whiskers '
                 '5-95%%, every request a dot)' % report['scenario'],
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    pyplot.close(fig)
    return path
