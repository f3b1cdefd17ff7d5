"""Which metrics of two runs changed: the tests ``harness compare``
applies (compare.py flattens the reports into metrics and samples;
stats.py holds the statistics).

A metric ``FAMILY.pNN`` is tested on FAMILY's samples of both runs,
relative to the run-wide factor (run_wide), with a minimum-effect test
whose standard error comes from the runs' own samples (sample_tests),
widened by what the two runs differ by beyond their samples
(between_runs); or, when both reports were repeated, over the runs
(repeat_tests)."""
import math
import re
import statistics

from nova_moves.harness import stats as nm_stats

# Fewer samples than this on either side: no test (nothing is "changed").
MIN_SAMPLES = 5
# A percentile is tested only when at least this many samples of each
# run lie beyond it (a p95 needs 100 requests, a p99 500).
MIN_TAIL = 5
# The run-wide factor needs this many sampled families.
MIN_FAMILIES = 6


def floor(name):
    """The smallest difference worth a marker, in the metric's unit: the
    clock and the buckets (12%) make sub-millisecond RPC changes noise.
    Also what a log ratio adds to both values (so 1 ms -> 2 ms is not
    "2x")."""
    if name.endswith('.throughput'):
        return 0.1
    if '.e2e' in name or '.phase.' in name:
        return 0.01
    return 1.0


def family_of(name):
    """'resize.api.p99' -> ('resize.api', 99); (None, None) otherwise."""
    family, _, last = name.rpartition('.')
    if re.match(r'^p\d+$', last):
        return family, int(last[1:])
    return None, None


def testable(xa, xb):
    return sorted(f for f in set(xa) & set(xb)
                  if min(len(xa[f]), len(xb[f])) >= MIN_SAMPLES)


def run_wide(xa, xb):
    """How much slower (>1) or faster the whole second run is: the median
    over the sampled families of the ratio of their medians, and a sign
    test of whether the families moved together. Two runs of the same
    code on a machine whose load changed differ by such a factor in every
    metric at once; a change of the code shows as metrics that move
    beyond it. ``xa``, ``xb``: the runs' samples (compare.samples)."""
    logs = []
    for family in testable(xa, xb):
        a, b = statistics.median(xa[family]), statistics.median(xb[family])
        if a > 0 and b > 0:
            logs.append(math.log(b / a))
    if len(logs) < MIN_FAMILIES:
        # Too few families to tell the machine from the code: no factor.
        return {'factor': 1.0, 'se': 0.0, 'families': len(logs), 'up': 0,
                'down': 0, 'p': 1.0}
    up = sum(1 for v in logs if v > 0)
    down = sum(1 for v in logs if v < 0)
    # The factor is a median too: its own standard error (log scale)
    # widens every relative test.
    return {'factor': math.exp(statistics.median(logs)),
            'se': 1.2533 * statistics.stdev(logs) / math.sqrt(len(logs)),
            'families': len(logs), 'up': up, 'down': down,
            'p': nm_stats.sign_test_p(up, down)}


def design_effect(x):
    """How much more a median of this run varies than i.i.d. samples
    would: the median over its request families (in send order, at least
    20 requests) of (block bootstrap / order-statistic standard error)^2,
    at least 1. RPC histograms have no order to measure it on."""
    ratios = []
    for family, values in x.items():
        if family.startswith('rpc.') or len(values) < 20:
            continue
        eps = floor(family + '.')
        iid = nm_stats.order_stat_se(sorted(values), 50, eps)
        if iid > 0:
            boot = nm_stats.block_bootstrap_se(values, [50], eps,
                                               family + '/deff')[50]
            ratios.append((boot / iid) ** 2)
    return max(1.0, statistics.median(ratios)) if ratios else 1.0


def sample_tests(names, xa, xb, factor, delta, factor_se=0.0):
    """{metric: (theta, se, p)} of the sampled metrics that can be
    tested: the second run's samples divided by the run-wide factor, the
    standard error from each run's own samples (block bootstrap in send
    order for requests, order statistics for RPC histograms)."""
    wanted = {}
    for name in names:
        family, pct = family_of(name)
        if family not in xa or family not in xb:
            continue
        if min(len(xa[family]), len(xb[family])) < MIN_SAMPLES or min(
                nm_stats.tail_size(len(xa[family]), pct),
                nm_stats.tail_size(len(xb[family]), pct)) < MIN_TAIL:
            continue  # a percentile resting on a handful of requests
        wanted.setdefault(family, []).append((name, pct))
    out = {}
    deff_a, deff_b = design_effect(xa), design_effect(xb)
    for family, metrics_ in wanted.items():
        eps = floor(family + '.')
        a, b = xa[family], [v / factor for v in xb[family]]
        pcts = [pct for _, pct in metrics_]
        sa, sb = sorted(a), sorted(b)
        se_a = {p: nm_stats.order_stat_se(sa, p, eps) for p in pcts}
        se_b = {p: nm_stats.order_stat_se(sb, p, eps) for p in pcts}
        if family.startswith('rpc.'):
            # The RPC calls are made by the run's requests, as bunched
            # as they are: the same inflation.
            se_a = {p: v * math.sqrt(deff_a) for p, v in se_a.items()}
            se_b = {p: v * math.sqrt(deff_b) for p, v in se_b.items()}
        else:
            # Requests in send order: the block bootstrap sees what
            # requests sent together share; the order statistics are the
            # steadier figure when they share nothing. The larger counts.
            boot_a = nm_stats.block_bootstrap_se(a, pcts, eps, family + '/a')
            boot_b = nm_stats.block_bootstrap_se(b, pcts, eps, family + '/b')
            se_a = {p: max(se_a[p], boot_a[p]) for p in pcts}
            se_b = {p: max(se_b[p], boot_b[p]) for p in pcts}
        for name, pct in metrics_:
            theta = math.log(nm_stats.percentile(b, pct) + eps) - math.log(
                nm_stats.percentile(a, pct) + eps)
            se = math.sqrt(se_a[pct] ** 2 + se_b[pct] ** 2 + factor_se ** 2)
            out[name] = (theta, se)
    return {name: (theta, se, nm_stats.min_effect_p(theta, se, delta))
            for name, (theta, se) in between_runs(out).items()}


def between_runs(tests):
    """{metric: (theta, se)} with the scatter between two runs added.

    Two runs of the same code differ by more than their samples say: a
    handler that sometimes waits for the database's lock does so more in
    one run than in the other, for reasons no per-request test sees. The
    metrics of a comparison show how much: their log ratios (relative to
    the run-wide factor) scatter around 0 by more than their standard
    errors. That extra scatter (tau^2), per group of like metrics (RPC or
    request, median or tail), is added to every metric's variance -- a
    random-effects model: a metric is changed when it stands out of what
    all the others did. tau^2 is the robust Paule-Mandel estimate: the
    smallest value for which the median of (theta - median theta)^2 /
    (se^2 + tau^2) is at most that of a chi-square with 1 degree of
    freedom (0.455); medians, so the few metrics a real change moves do
    not count."""
    groups = {}
    for name in tests:
        _, pct = family_of(name)
        groups.setdefault((name.startswith('rpc.'), pct == 50),
                          []).append(name)
    out = {}
    for names in groups.values():
        alike = names if len(names) >= MIN_FAMILIES else list(tests)
        tau2 = between_run_variance([tests[n] for n in alike]) \
            if len(alike) >= MIN_FAMILIES else 0.0
        for name in names:
            theta, se = tests[name]
            out[name] = (theta, math.sqrt(se ** 2 + tau2))
    return out


CHI2_1_MEDIAN = 0.4549364231195724


def between_run_variance(pairs):
    """Robust Paule-Mandel between-run variance of [(theta, se)]."""
    centre = statistics.median(theta for theta, _ in pairs)
    dev = [((theta - centre) ** 2, se ** 2) for theta, se in pairs]

    def spread(tau2):
        return statistics.median(d / (v + tau2) if v + tau2 > 0 else
                                 (math.inf if d else 0.0) for d, v in dev)
    if spread(0.0) <= CHI2_1_MEDIAN:
        return 0.0
    low, high = 0.0, max(d for d, _ in dev)
    for _ in range(60):
        mid = (low + high) / 2
        if spread(mid) > CHI2_1_MEDIAN:
            low = mid
        else:
            high = mid
    return high


def repeat_tests(names, base, other, delta):
    """{metric: (theta, se, p)} over the runs of two ``--repeat``
    reports: each run one value, Welch's test on their logs."""
    out = {}
    ra, rb = base.get('repeats') or [], other.get('repeats') or []
    for name in names:
        eps = floor(name)
        a = [math.log(r[name] + eps) for r in ra if r.get(name) is not None
             and r[name] + eps > 0]
        b = [math.log(r[name] + eps) for r in rb if r.get(name) is not None
             and r[name] + eps > 0]
        if len(a) >= 2 and len(b) >= 2:
            out[name] = nm_stats.welch_min_effect(a, b, delta)
    return out
