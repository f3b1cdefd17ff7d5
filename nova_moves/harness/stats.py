"""The tests ``harness compare`` decides "changed" with, on the
per-request samples of two runs (pure Python: the harness's base
install has no numpy).

- the median (p50 metrics): the Mann-Whitney U test, normal
  approximation with the tie correction (RPC samples come bucketed,
  hence many ties) and a continuity correction;
- a tail percentile (p95, p99): Mood's quantile test -- the pooled
  samples' percentile splits each run into above/below, and Fisher's
  exact test asks whether the two runs put different shares above it.
  With few samples in the tail it has little power, which is the honest
  answer: a p99 from 40 requests cannot show a change;
- many metrics at once: Holm's step-down correction, so the chance that
  two runs of the same code show any "changed" metric stays at
  ``alpha`` however many metrics are compared.
"""
import math


def _ranks(values):
    """Average ranks (1-based) of ``values`` and the tie term
    sum(t^3 - t) over groups of equal values."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    ties = 0.0
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and \
                values[order[j + 1]] == values[order[i]]:
            j += 1
        rank = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[order[k]] = rank
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    return ranks, ties


def mann_whitney_p(a, b):
    """Two-sided p-value that ``a`` and ``b`` come from one
    distribution (against a shift of one of them)."""
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    ranks, ties = _ranks(list(a) + list(b))
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0  # every sample equal
    z = max(0.0, abs(u1 - n1 * n2 / 2.0) - 0.5) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2.0))


def _log_comb(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_p(a_in, a_out, b_in, b_out):
    """Two-sided Fisher exact test of the 2x2 table [[a_in, a_out],
    [b_in, b_out]]: the probability, given the margins, of a table at
    most as likely as this one."""
    row_a, row_b = a_in + a_out, b_in + b_out
    col_in = a_in + b_in
    total = row_a + row_b
    low, high = max(0, col_in - row_b), min(row_a, col_in)
    denominator = _log_comb(total, col_in)

    def prob(x):
        return math.exp(_log_comb(row_a, x) + _log_comb(row_b, col_in - x)
                        - denominator)
    observed = prob(a_in)
    p = sum(prob(x) for x in range(low, high + 1)
            if prob(x) <= observed * (1 + 1e-7))
    return min(1.0, p)


def percentile(values, pct):
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, int(math.ceil(len(ordered) * pct / 100.0)))
    return ordered[rank - 1]


def quantile_p(a, b, pct):
    """Mood's test for the ``pct`` percentile: do the runs put different
    shares of their samples above the pooled percentile?"""
    if not a or not b:
        return 1.0
    threshold = percentile(list(a) + list(b), pct)
    a_in = sum(1 for v in a if v > threshold)
    b_in = sum(1 for v in b if v > threshold)
    return fisher_p(a_in, len(a) - a_in, b_in, len(b) - b_in)


def test_p(a, b, pct):
    """The p-value for a change of the ``pct`` percentile."""
    if pct == 50:
        return mann_whitney_p(a, b)
    return quantile_p(a, b, pct)


def sign_test_p(up, down):
    """Two-sided sign test: how likely ``up`` of ``up + down`` moves in
    one direction (or a split as uneven) if each went either way at
    random."""
    n = up + down
    if not n:
        return 1.0
    k = min(up, down)
    tail = sum(math.exp(_log_comb(n, i) - n * math.log(2))
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
