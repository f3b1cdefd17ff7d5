"""Compare runs: ``nova-moves-harness compare A.json B.json [...]``.

Every report is flattened into named metrics (``resize.api.p99``,
``live-migrate@2.33.e2e.p50``, ``resize.phase.transfer.p50``,
``rpc.compute.prep_resize.handle.p99``, ...). The first report is the
baseline; each other one is shown beside it with the ratio, and marked
changed (WORSE or better) only when it moved by more than ``min_effect``
(10%) with confidence (harness/changes.py: a minimum-effect test on the
runs' own samples, relative to the run-wide factor, with Holm's or
Benjamini-Hochberg's correction over all the tested metrics), or
"differs" when it has one value per run and nothing to test it on.
Budgets (``--fail-if "resize.api.p99 > 1.2x"``) turn the comparison
into a pass/fail for CI."""
import fnmatch
import json
import math
import os
import re
import statistics

from nova_moves.harness import changes
from nova_moves.harness import stats as nm_stats
from nova_moves import rpcstats

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_EFFECT = 0.1
DEFAULT_NOISE = DEFAULT_MIN_EFFECT  # the option's old name
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


def samples(report):
    """{family: [sample, ...]} of one report: ``resize.api`` (ms) and
    ``resize.e2e`` (s) per request and ``resize.phase.transfer`` (s) per
    move, in the order the requests were sent; ``rpc.compute.prep_resize.
    handle`` (ms) from the histogram's buckets, each bucket's count
    spread evenly over its width. A metric ``FAMILY.pNN`` is tested on
    FAMILY's samples."""
    out = {}
    records = sorted(report.get('records') or [],
                     key=lambda rec: rec.get('sent') or 0.0)
    versions = {}
    for rec in records:
        versions.setdefault(rec['operation'], set()).add(rec['microversion'])
    for rec in records:
        op = rec['operation']
        key = op if len(versions[op]) == 1 else '%s@%s' % (
            op, rec['microversion'])
        if rec.get('api_s') is not None:
            out.setdefault(key + '.api', []).append(rec['api_s'] * 1000.0)
        if rec.get('e2e_s') is not None:
            out.setdefault(key + '.e2e', []).append(rec['e2e_s'])
        for phase, seconds in (rec.get('phases') or {}).items():
            if seconds is not None:
                out.setdefault('%s.phase.%s' % (key, phase), []).append(
                    seconds)
    for row in report.get('rpc', []):
        for kind in ('call', 'cast', 'handle'):
            stat = row.get(kind) or {}
            if not stat.get('buckets'):
                continue
            cap = stat.get('max_ms')
            values = []
            for k, n in sorted(stat['buckets'].items(),
                               key=lambda kv: int(kv[0])):
                upper = rpcstats.bucket_upper_ms(int(k))
                lower = rpcstats.bucket_upper_ms(int(k) - 1)
                # Where in its 12% bucket a duration was is unknown:
                # evenly spread, a percentile falls inside the bucket
                # instead of on its edge (one bucket apart is not 12%).
                for i in range(n):
                    value = lower * (upper / lower) ** ((i + 0.5) / n)
                    values.append(min(value, cap) if cap else value)
            out['rpc.%s.%s' % (row['method'], kind)] = values
    return out


def run_wide(base, other):
    """The run-wide factor of ``other`` against ``base``
    (changes.run_wide on their samples)."""
    return changes.run_wide(samples(base), samples(other))


def repeated(report):
    return len(report.get('repeats') or []) >= 2


def compare(base, other, min_effect=DEFAULT_MIN_EFFECT, alpha=DEFAULT_ALPHA,
            correction='holm'):
    """Rows {metric, a, b, ratio, relative, ci, p, test, marker} for the
    metrics both reports have. marker '+' changed for the worse, '-' for
    the better (a minimum-effect test says the metric moved by more than
    ``min_effect`` with confidence, after ``correction`` over all the
    tested metrics), '~' differs by more than ``min_effect`` but could
    not be tested (one value per run, or too few samples), '' neither.

    When both reports were repeated (``run --repeat N``) the runs are the
    samples: every metric is tested over them. Otherwise the sampled
    metrics are tested on the per-request samples relative to the
    run-wide factor (``relative`` = ratio / factor)."""
    (va, _), (vb, _) = summary(base), summary(other)
    names = sorted(set(va) & set(vb))
    delta = math.log(1.0 + min_effect)
    factor = 1.0
    xa, xb = samples(base), samples(other)
    if repeated(base) and repeated(other):
        tests, kind = changes.repeat_tests(names, base, other, delta), \
            'repeats'
    else:
        wide = changes.run_wide(xa, xb)
        factor = wide['factor']
        tests, kind = changes.sample_tests(names, xa, xb, factor, delta,
                                    wide['se']), 'samples'
    significant = nm_stats.CORRECTIONS[correction](
        {name: t[2] for name, t in tests.items()}, alpha)
    sampled = set(xa) & set(xb)
    rows = []
    for name in names:
        a, b = va[name], vb[name]
        ratio = b / a if a else None
        test = tests.get(name)
        has_samples = changes.family_of(name)[0] in sampled
        relative = ratio / factor if ratio is not None and \
            kind == 'samples' and has_samples else ratio
        marker = ''
        beyond = relative is not None and abs(relative - 1.0) > \
            min_effect and abs(b - a) > changes.floor(name)
        if test and name in significant and beyond:
            worse = test[0] > 0
            if name.endswith(HIGHER_IS_BETTER):
                worse = not worse
            marker = '+' if worse else '-'
        elif not test and not has_samples and beyond:
            # One value per run (throughput, CPU, counts): nothing to
            # test it on; shown, never called changed.
            marker = '~'
        rows.append({
            'metric': name, 'a': a, 'b': b, 'ratio': ratio,
            'relative': relative, 'noise': min_effect,
            'p': test[2] if test else None,
            'ci': [math.exp(test[0] - nm_stats.Z95 * test[1]),
                   math.exp(test[0] + nm_stats.Z95 * test[1])]
            if test else None,
            'test': kind if test else None, 'marker': marker})
    return rows


CHANGED = ('+', '-')
MARKERS = {'+': 'WORSE', '-': 'better', '~': 'differs', '': ''}


def summary_lines(names, reports, all_rows, alpha=DEFAULT_ALPHA,
                  min_effect=DEFAULT_MIN_EFFECT, correction='holm'):
    """What the table's markers rest on, after the table."""
    out = []
    for name, other in zip(names[1:], reports[1:]):
        if repeated(reports[0]) and repeated(other):
            continue
        wide = run_wide(reports[0], other)
        if wide['families'] >= changes.MIN_FAMILIES:
            out.append(
                'run-wide: %s is %.2fx %s over %d sampled families (%d up, '
                '%d down, sign test p %.2g); sampled metrics are judged '
                'relative to it (a busier machine, or a change that slows '
                'everything, moves them all)' % (
                    name, wide['factor'], names[0], wide['families'],
                    wide['up'], wide['down'], wide['p']))
    rows = [r for rows in all_rows for r in rows]
    changed = sum(1 for r in rows if r['marker'] in CHANGED)
    differs = sum(1 for r in rows if r['marker'] == '~')
    tested = sum(1 for r in rows if r['test'])
    out.append(
        '%d of %d metrics changed (%d tested: moved by more than %d%% with '
        'confidence, %s over the tested metrics at alpha %g; per-request '
        'samples by block bootstrap, RPC histograms by order statistics, '
        'repeated runs by Welch); %d with one value per run differ by more '
        'than %d%% but cannot be tested (run --repeat N on both sides); '
        'percentiles with fewer than %d samples beyond them are not tested; '
        '--all shows every metric' % (changed, len(rows), tested,
                                      min_effect * 100,
                    {'holm': 'Holm', 'bh': 'Benjamini-Hochberg'}[correction],
                    alpha, differs, min_effect * 100,
                    changes.MIN_TAIL))
    for name, report in zip(names, reports):
        if repeated(report):
            out.append('%s: %d repeats: every metric is tested over the '
                       'runs' % (name, len(report['repeats'])))
        elif not report.get('records'):
            out.append('%s: no per-request samples (an older report): only '
                       'repeats can show a change' % name)
    return out


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
        header += [name, 'ratio', 'p', '']
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
                line += ['-', '-', '-', '']
                continue
            p = row.get('p')
            line += ['%.4g' % row['b'],
                     '-' if row['ratio'] is None else '%.2fx' % row['ratio'],
                     '%.2g' % p if p is not None else
                     ('rep' if row.get('test') == 'repeats' else '-'),
                     MARKERS[row['marker']]]
        lines.append(line)
    widths = [max(len(str(r[i])) for r in [header] + lines)
              for i in range(len(header))]
    out = ['  '.join('%-*s' % (w, c) for w, c in zip(widths, r)).rstrip()
           for r in [header] + lines]
    out.insert(1, '  '.join('-' * w for w in widths))
    return '\n'.join(out)


def _page_path(path, page):
    if page == 1:
        return path
    root, ext = os.path.splitext(path)
    return '%s-%d%s' % (root, page, ext or '.png')


def plot(names, reports_rows, path, per_page=40):
    """Every metric, as horizontal bars of its ratio to the baseline (log
    scale), changed for the worse in red, for the better in green, the
    rest grey, on as many pages as it takes (``path``, then
    ``NAME-2.png``, ...): the operations' own numbers first, then the
    RPC methods. Returns the files written."""
    from nova_moves.harness import timeline  # matplotlib, Agg
    timeline.require()
    shown = []
    for rows in reports_rows:
        for row in rows:
            if row['ratio'] and row['metric'] not in shown:
                shown.append(row['metric'])
    shown.sort(key=lambda name: (name.startswith('rpc.'), name))
    pages = [shown[i:i + per_page] for i in range(0, len(shown), per_page)]
    return [_plot_page(timeline.pyplot, names, reports_rows, page,
                       _page_path(path, n), n, len(pages))
            for n, page in enumerate(pages, 1)]


def _plot_page(pyplot, names, reports_rows, metrics_shown, path, page,
               pages):
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
            colour = {'+': '#e53935', '-': '#43a047', '~': '#ffb300',
                      '': '#9e9e9e'}[row['marker']]
            ax.barh(pos, row['ratio'] - 1.0, left=1.0, height=bar * 0.9,
                    color=colour, alpha=0.4 + 0.6 * (i + 1) /
                    len(reports_rows))
    ax.axvline(1.0, color='#212121', linewidth=0.8)
    ax.set_yticks(range(len(metrics_shown)))
    ax.set_yticklabels(metrics_shown, fontsize=7)
    ax.set_ylim(len(metrics_shown) - 0.5, -0.5)
    ax.set_xscale('log')
    from matplotlib import ticker
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(
        lambda v, _: '%gx' % v))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xticks([t for t in (0.1, 0.25, 0.5, 0.8, 1, 1.25, 2, 4, 10)
                   if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]])
    ax.set_xlabel('ratio to %s (log scale)' % names[0])
    ax.set_title('%s compared with %s%s' % (
        ', '.join(names[1:]), names[0],
        ' (page %d of %d)' % (page, pages) if pages > 1 else ''))
    from matplotlib import patches
    ax.legend(handles=[
        patches.Patch(color='#e53935', label='changed: worse'),
        patches.Patch(color='#43a047', label='changed: better'),
        patches.Patch(color='#ffb300', label='differs, not testable'),
        patches.Patch(color='#9e9e9e', label='no change shown')],
        loc='lower right', fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    pyplot.close(fig)
    return path
