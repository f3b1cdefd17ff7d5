"""Compare runs: ``nova-moves-harness compare A.json B.json [...]``.

Every report is flattened into named metrics (``resize.api.p99``,
``live-migrate@2.33.e2e.p50``, ``resize.phase.transfer.p50``,
``rpc.compute.prep_resize.handle.p99``, ...). The first report is the
baseline; each other one is shown beside it with the ratio, and marked
when the difference is larger than the run-to-run noise: the relative
spread ((max - min) / median) of that metric over the repeats of either
run (``run --repeat N``), or ``--noise`` (default 20%) when a run was not
repeated. Budgets (``--fail-if "resize.api.p99 > 1.2x"``) turn the
comparison into a pass/fail for CI."""
import fnmatch
import json
import re
import statistics

DEFAULT_NOISE = 0.2
# Metrics where bigger is better: a budget or marker reads them inverted.
HIGHER_IS_BETTER = ('.throughput',)


class CompareError(ValueError):
    pass


def _put(out, name, value):
    if value is not None:
        out[name] = float(value)


def metrics(report):
    """{name: value} of one report: latencies in ms (API, RPC) or s
    (end-to-end, per-phase), throughput in requests/s."""
    out = {}
    versions = {}
    for row in report.get('operations', []):
        versions.setdefault(row['operation'], set()).add(row['microversion'])
    for row in report.get('operations', []):
        op = row['operation']
        key = op if len(versions[op]) == 1 else '%s@%s' % (
            op, row['microversion'])
        for pct in ('p50', 'p95', 'p99'):
            _put(out, '%s.api.%s' % (key, pct), row.get('api_%s_ms' % pct))
            _put(out, '%s.e2e.%s' % (key, pct), row.get('e2e_%s_s' % pct))
        _put(out, '%s.throughput' % key, row.get('requests_per_s'))
        for phase, stats in (row.get('breakdown') or {}).items():
            for pct in ('p50', 'p95'):
                _put(out, '%s.phase.%s.%s' % (key, phase, pct),
                     stats.get('%s_s' % pct))
    for row in report.get('rpc', []):
        for kind in ('call', 'cast', 'handle'):
            stat = row.get(kind)
            if not stat:
                continue
            for pct in ('p50', 'p95', 'p99'):
                _put(out, 'rpc.%s.%s.%s' % (row['method'], kind, pct),
                     stat.get('%s_ms' % pct))
    return out


def load(path):
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as exc:
        raise CompareError('%s: not a readable report.json: %s' % (path, exc))
    if not isinstance(report, dict) or 'operations' not in report:
        raise CompareError('%s: not a nova-moves-harness report (no '
                           '"operations")' % path)
    return report


def summary(report):
    """(value per metric, relative spread per metric or {}): the median
    over the report's repeats when it has them."""
    repeats = report.get('repeats') or []
    if len(repeats) < 2:
        return report.get('metrics') or metrics(report), {}
    values, spread = {}, {}
    for name in set().union(*repeats):
        seen = [r[name] for r in repeats if name in r]
        mid = statistics.median(seen)
        values[name] = mid
        if len(seen) > 1 and mid:
            spread[name] = (max(seen) - min(seen)) / abs(mid)
    return values, spread


def _floor(name):
    """The smallest difference worth a marker, in the metric's unit: the
    clock and the buckets (12%) make sub-millisecond RPC changes noise."""
    if name.endswith('.throughput'):
        return 0.1
    if '.e2e.' in name or '.phase.' in name:
        return 0.01
    return 1.0


def compare(base, other, noise=DEFAULT_NOISE):
    """Rows {metric, a, b, ratio, noise, marker} for the metrics both
    reports have; marker '+' worse beyond noise, '-' better beyond noise,
    '' within noise."""
    (va, sa), (vb, sb) = summary(base), summary(other)
    rows = []
    for name in sorted(set(va) & set(vb)):
        a, b = va[name], vb[name]
        ratio = b / a if a else None
        # A run that was not repeated has an unknown noise: assume ``noise``.
        band = max(sa.get(name, 0.0) if sa else noise,
                   sb.get(name, 0.0) if sb else noise)
        marker = ''
        if ratio is not None and abs(ratio - 1.0) > band and \
                abs(b - a) > _floor(name):
            worse = ratio > 1.0
            if name.endswith(HIGHER_IS_BETTER):
                worse = not worse
            marker = '+' if worse else '-'
        rows.append({'metric': name, 'a': a, 'b': b, 'ratio': ratio,
                     'noise': band, 'marker': marker})
    return rows


_BUDGET = re.compile(r'^\s*(?P<metric>[^\s<>]+)\s*(?P<op>[<>])\s*'
                     r'(?P<limit>[0-9]+(\.[0-9]*)?)\s*(?P<x>x?)\s*$')


def parse_budget(text, where='--fail-if'):
    """'resize.api.p99 > 1.2x' (ratio to the baseline) or
    'resize.api.p99 > 800' (absolute, in the metric's unit)."""
    match = _BUDGET.match(text)
    if not match:
        raise CompareError(
            '%s: %r is not a budget; write METRIC > LIMIT or METRIC < LIMIT, '
            'LIMIT a number (absolute) or a number followed by x (ratio to '
            'the first report), e.g. "resize.api.p99 > 1.2x"' % (where, text))
    return {'text': text.strip(), 'metric': match.group('metric'),
            'op': match.group('op'), 'limit': float(match.group('limit')),
            'ratio': bool(match.group('x'))}


def read_budget_file(path):
    budgets = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise CompareError('budget file %s: %s' % (path, exc))
    for number, line in enumerate(lines, 1):
        line = line.split('#', 1)[0].strip()
        if line:
            budgets.append(parse_budget(line, '%s line %d' % (path, number)))
    return budgets


def check_budgets(budgets, rows):
    """Violations as readable lines; a budget that matches no metric is
    a violation too, so a typo cannot pass silently."""
    failures = []
    for budget in budgets:
        matched = [r for r in rows
                   if fnmatch.fnmatchcase(r['metric'], budget['metric'])]
        if not matched:
            failures.append('%s: no such metric in both reports'
                            % budget['text'])
            continue
        for row in matched:
            value = row['ratio'] if budget['ratio'] else row['b']
            if value is None:
                continue
            broken = value > budget['limit'] if budget['op'] == '>' \
                else value < budget['limit']
            if broken:
                failures.append('%s: %s is %s (baseline %.4g, now %.4g)' % (
                    budget['text'], row['metric'],
                    '%.2fx' % value if budget['ratio'] else '%.4g' % value,
                    row['a'], row['b']))
    return failures


def render(names, reports_rows, show_all=False):
    """A table: metric, baseline, then per other report its value, ratio
    and marker. Unchanged metrics are left out unless ``show_all``."""
    by_metric = {}
    for i, rows in enumerate(reports_rows):
        for row in rows:
            by_metric.setdefault(row['metric'], {})[i] = row
    header = ['metric', names[0]]
    for name in names[1:]:
        header += [name, 'ratio', '']
    lines = []
    for metric in sorted(by_metric):
        cells = by_metric[metric]
        if not show_all and not any(c['marker'] for c in cells.values()):
            continue
        first = next(iter(cells.values()))
        line = [metric, '%.4g' % first['a']]
        for i in range(len(names) - 1):
            row = cells.get(i)
            if row is None:
                line += ['-', '-', '']
                continue
            line += ['%.4g' % row['b'],
                     '-' if row['ratio'] is None else '%.2fx' % row['ratio'],
                     {'+': 'WORSE', '-': 'better', '': ''}[row['marker']]]
        lines.append(line)
    widths = [max(len(str(r[i])) for r in [header] + lines)
              for i in range(len(header))]
    out = ['  '.join('%-*s' % (w, c) for w, c in zip(widths, r)).rstrip()
           for r in [header] + lines]
    out.insert(1, '  '.join('-' * w for w in widths))
    return '\n'.join(out)


def plot(names, reports_rows, path, limit=40):
    """Horizontal bars of the ratio to the baseline per metric (log
    scale), the noise band shaded, worse in red and better in green."""
    from nova_moves.harness import timeline  # matplotlib, Agg
    timeline.require()
    pyplot = timeline.pyplot
    # The operations' own numbers first, then the RPC methods that moved
    # beyond the noise: a picture of every bucket of every method is noise.
    ops, rpc = [], []
    for rows in reports_rows:
        for row in rows:
            name = row['metric']
            if not row['ratio'] or name in ops or name in rpc:
                continue
            if not name.startswith('rpc.') and not name.endswith('.p95'):
                ops.append(name)
            elif name.startswith('rpc.') and row['marker']:
                rpc.append(name)
    metrics_shown = (sorted(ops) + sorted(rpc))[:limit]
    if not metrics_shown:
        return None
    height = max(3.0, 0.28 * len(metrics_shown) * max(
        1, len(reports_rows)) ** 0.5 + 1.5)
    fig, ax = pyplot.subplots(figsize=(10, height), dpi=80)
    bar = 0.8 / len(reports_rows)
    for i, rows in enumerate(reports_rows):
        by = {r['metric']: r for r in rows}
        for y, metric in enumerate(metrics_shown):
            row = by.get(metric)
            if row is None or not row['ratio']:
                continue
            pos = y - 0.4 + bar * (i + 0.5)
            colour = {'+': '#e53935', '-': '#43a047', '': '#9e9e9e'}[
                row['marker']]
            ax.barh(pos, row['ratio'] - 1.0, left=1.0, height=bar * 0.9,
                    color=colour, alpha=0.4 + 0.6 * (i + 1) /
                    len(reports_rows))
            ax.plot([1 - row['noise'], 1 + row['noise']], [pos, pos],
                    color='#616161', linewidth=0.6)
    ax.axvline(1.0, color='#212121', linewidth=0.8)
    ax.set_yticks(range(len(metrics_shown)))
    ax.set_yticklabels(metrics_shown, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale('log')
    from matplotlib import ticker
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(
        lambda v, _: '%gx' % v))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xticks([t for t in (0.1, 0.25, 0.5, 0.8, 1, 1.25, 2, 4, 10)
                   if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]])
    ax.set_xlabel('ratio to %s (log scale; grey line = noise band)'
                  % names[0])
    ax.set_title('%s compared with %s' % (', '.join(names[1:]), names[0]))
    from matplotlib import patches
    ax.legend(handles=[
        patches.Patch(color='#e53935', label='worse beyond noise'),
        patches.Patch(color='#43a047', label='better beyond noise'),
        patches.Patch(color='#9e9e9e', label='within noise')],
        loc='lower right', fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    pyplot.close(fig)
    return path
