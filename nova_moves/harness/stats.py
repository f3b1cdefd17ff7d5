"""The statistics ``harness compare`` decides "changed" with (pure
Python: the harness's base install has no numpy).

"Changed" is a minimum-effect test: not "the two runs differ" (two runs
of one commit always differ a little: the machine, the interleaving),
but "the metric moved by more than ``delta`` (10%), with confidence".
Its null hypothesis is |log ratio| <= log(1 + delta); the estimate's
standard error comes from the runs' own samples:

- per-request samples (API latency, end to end, per-phase) in the order
  they were sent: a circular **block bootstrap** (blocks of about
  sqrt(n) consecutive requests), because requests sent together share
  the machine's load of that moment and are not independent -- an
  i.i.d. test on them finds "significant" differences between two runs
  of the same code;
- RPC latency histograms (no order): the distribution-free
  order-statistic interval of the percentile (the binomial ranks around
  n*q);
- one value per run (throughput, CPU, counts) repeated with ``run
  --repeat N``: Welch's t-test over the runs' logs;
- many metrics at once: Holm's step-down correction (family-wise error
  ``alpha``) or Benjamini-Hochberg (false discovery rate ``alpha``; the
  same guarantee when nothing changed).
"""
import math
import random
import statistics
import zlib

Z95 = 1.959963984540054
BLOCK_SCALE = 1.0


def percentile(values, pct):
    """Nearest-rank percentile (the report's)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, int(math.ceil(len(ordered) * pct / 100.0)))
    return ordered[rank - 1]


def _sorted_percentile(ordered, pct):
    rank = max(1, int(math.ceil(len(ordered) * pct / 100.0)))
    return ordered[rank - 1]


def tail_size(n, pct):
    """How many of ``n`` samples lie beyond the ``pct`` percentile (on
    its smaller side): what a test of that percentile rests on."""
    q = pct / 100.0
    return n * min(q, 1.0 - q)


def _rng(name):
    # Seeded by the family's name: the same reports give the same answer.
    return random.Random(zlib.crc32(name.encode()))


def block_bootstrap_se(values, pcts, eps, name, reps=200):
    """{pct: standard error of log(percentile + eps)} of time-ordered
    ``values`` by the circular block bootstrap (block ~ sqrt(n))."""
    n = len(values)
    block = max(1, int(round(BLOCK_SCALE * math.sqrt(n))))
    blocks = -(-n // block)
    ring = list(values) + list(values[:block])
    rng = _rng(name)
    logs = {p: [] for p in pcts}
    for _ in range(reps):
        sample = []
        for _ in range(blocks):
            start = rng.randrange(n)
            sample.extend(ring[start:start + block])
        sample = sorted(sample[:n])
        for p in pcts:
            logs[p].append(math.log(_sorted_percentile(sample, p) + eps))
    return {p: statistics.pstdev(v) for p, v in logs.items()}


def order_stat_se(ordered, pct, eps):
    """Standard error of log(percentile + eps) of sorted i.i.d. samples:
    the 95% distribution-free interval of the percentile (order
    statistics at ranks n*q -/+ 1.96 sqrt(n q (1-q))), over 2 x 1.96."""
    n = len(ordered)
    q = pct / 100.0
    half = Z95 * math.sqrt(n * q * (1.0 - q))
    lo = min(n - 1, max(0, int(math.floor(n * q - half)) - 1))
    hi = min(n - 1, max(0, int(math.ceil(n * q + half)) - 1))
    return (math.log(ordered[hi] + eps) - math.log(ordered[lo] + eps)) / (
        2 * Z95)


def normal_sf(z):
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def min_effect_p(theta, se, delta):
    """p-value of "|theta| > delta" (theta a log ratio, ``se`` its
    standard error) against the null |theta| <= delta: small only when
    the change is both beyond delta and beyond the noise."""
    excess = abs(theta) - delta
    if se <= 0:
        return 0.0 if excess > 0 else 1.0
    return normal_sf(excess / se)


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 3e-12:
            break
    return h


def _betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t, df):
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t > 0 else 1.0 - tail


def welch_min_effect(a_logs, b_logs, delta):
    """(theta, se, p) of the minimum-effect test over repeated runs:
    theta the difference of the runs' mean logs, Welch's standard error
    and degrees of freedom."""
    na, nb = len(a_logs), len(b_logs)
    theta = statistics.fmean(b_logs) - statistics.fmean(a_logs)
    va, vb = statistics.variance(a_logs), statistics.variance(b_logs)
    se2 = va / na + vb / nb
    if se2 <= 0:
        return theta, 0.0, min_effect_p(theta, 0.0, delta)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1)) \
        if va or vb else na + nb - 2
    se = math.sqrt(se2)
    return theta, se, t_sf((abs(theta) - delta) / se, max(1.0, df))


def sign_test_p(up, down):
    """Two-sided sign test: how likely ``up`` of ``up + down`` moves in
    one direction (or a split as uneven) if each went either way at
    random."""
    n = up + down
    if not n:
        return 1.0
    k = min(up, down)
    tail = sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1)
                        - math.lgamma(n - i + 1) - n * math.log(2))
               for i in range(k + 1))
    return min(1.0, 2 * tail)


def holm(pvalues, alpha):
    """The names whose null hypothesis Holm's step-down procedure
    rejects at family-wise error ``alpha``; ``pvalues`` {name: p}."""
    ordered = sorted(pvalues.items(), key=lambda item: (item[1], item[0]))
    m = len(ordered)
    rejected = set()
    for i, (name, p) in enumerate(ordered):
        if p > alpha / (m - i):
            break
        rejected.add(name)
    return rejected


def benjamini_hochberg(pvalues, alpha):
    """The names Benjamini-Hochberg rejects at false discovery rate
    ``alpha``."""
    ordered = sorted(pvalues.items(), key=lambda item: (item[1], item[0]))
    m = len(ordered)
    cut = 0
    for i, (_, p) in enumerate(ordered, 1):
        if p <= alpha * i / m:
            cut = i
    return {name for name, _ in ordered[:cut]}


CORRECTIONS = {'holm': holm, 'bh': benjamini_hochberg}


def table(headers, rows):
    """Rows under headers, columns padded to their widest cell (the
    report's and the phase breakdown's tables)."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows
              else len(str(h)) for i, h in enumerate(headers)]
    line = '  '.join('%-*s' % (w, h) for w, h in zip(widths, headers))
    out = [line, '  '.join('-' * w for w in widths)]
    for row in rows:
        out.append('  '.join('%-*s' % (w, c) for w, c in zip(widths, row)))
    return '\n'.join(out)
