"""Small helpers the harness's report sections share: a percentile and a
plain-text table (a leaf: report.py and phases.py both import it)."""
import math


def percentile(values, pct):
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, int(math.ceil(len(ordered) * pct / 100.0)))
    return ordered[rank - 1]


def table(headers, rows):
    """Rows under headers, columns padded to their widest cell."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows
              else len(str(h)) for i, h in enumerate(headers)]
    line = '  '.join('%-*s' % (w, h) for w, h in zip(widths, headers))
    out = [line, '  '.join('-' * w for w in widths)]
    for row in rows:
        out.append('  '.join('%-*s' % (w, c) for w, c in zip(widths, row)))
    return '\n'.join(out)
