"""Seeded streams shaped like the five data sets of SWOOP's Table 3 (Section 7.1),
their statistics next to the table's, and Figure 14's stream panels (c, d).

    python -m streamspec.bench.simjoin.table3            # table3-streams.csv, one row a stream
    python -m streamspec.bench.simjoin.table3 --fig14    # + dblp-window.csv and table3-fig14.png
    python -m streamspec.bench.simjoin.table3 --fit      # refit the vocabularies (about a minute)

Table 3 gives, per data set, the stream length L, the average set size m and
the universe size U.  What each generator keeps, fits or assumes:

- **Length, scaled.**  ``SCALE`` (TWEET 1/10, FLICKR 1, DBLP 1, ENRON 1,
  INDUSTRY 1/20): the streams are 3.4e6, 1.2e6, 5.5e6, 2.5e5 and 2.45e6 sets,
  4.6e7, 1.2e7, 6.7e7, 7.6e7 and 3.2e7 tokens, at most ~0.6 GB as int64 arrays
  (24 GB hold any of them with an engine's state; the 2 cores bound the time:
  TWEET and INDUSTRY are cut so that one engine's pass is minutes).  DBLP keeps
  its full length because Figure 14's effect grows with the absolute size of its
  window spikes (338,199 sets): at scale 1/10 swoop-noheap's extra work per set
  is a tenth, and the gap with swoop shrinks with it.  A generator called with ``n`` returns the first ``n``
  sets of its scaled stream (the throughput harness asks for ``max(w) + sets``).
- **Average set size: the paper's.**  Set sizes are ``1 + Poisson(m - 1)``
  (ENRON: ``1 + lognormal``, sigma 1, the heavy tail of e-mail lengths); a set's
  tokens are distinct (drawn again on a repeat), so the size is the set's.  DBLP
  mixes two kinds of sets (below) whose sizes are solved so the mean is 12.10.
- **Token skew: Zipf, fitted.**  A token's rank is ``floor(x)`` of a power law
  ``x ~ x^-s`` on ``[1, V + 1)`` (closed-form inverse CDF, so ``V`` may be 1e8).
  The exponent ``s = 1.10`` is fitted on the real text stream
  (``loaders.fortunes``: least squares of log set frequency on log rank over
  ranks 10..1e4; 0.97 over ranks 1..1e3), and is used for all five.
  ``V`` is then fitted per stream by bisection so that the *expected number of
  distinct tokens* in ``L * m`` draws (the paper's full length) equals U:
  ``sum_i 1 - exp(-L m p_i)``, exactly for ranks up to 2e6 and as an integral
  beyond (``expected_universe``).  So the model has the paper's universe at the
  paper's length; a scaled stream has fewer distinct tokens (TWEET's 3.7e7 is
  more than a 1/10 stream's 4.6e7 draws could hold) and the CSV shows both.
  INDUSTRY's 1.1e4 pairs of workflow activities are all drawn: ``V = U``.
- **Arrivals** (the time unit is set so the mean rate is 1 set a unit, so a
  window of duration ``w`` holds ``|W| = w`` sets on average, the harness's
  convention; Table 3 has no timing, so only FLICKR's and DBLP's follow the
  paper and the others are assumptions, stated): TWEET a Poisson process whose
  rate follows a day (``1 + 0.5 sin``, one day = the scaled stream over 89 days,
  February to April 2017); FLICKR uniform random times sorted (the paper: random
  timestamps in 0..10,000 s); ENRON a renewal process with Weibull gaps, shape
  0.5 (bursts of e-mail, gap CV 2.2); INDUSTRY Poisson.
- **DBLP** (Section 7.4, Figure 14): the timestamp is a modification *day*
  (every set of a day shares it, as DBLP's ``mdate``), 5,500 days (15 years,
  assumed).  30 bulk-update days hold ``M / i`` sets (i = 1..30) with
  ``M = 338,199 * scale``, the paper's largest window for w = 1 day, so with
  w = 1 day the window size runs from 0 (a new day) up to M; the other sets
  spread over the days with Gamma(0.5) day weights.  Two tokens, "page"
  (``HOME_PAGE[1]``) and "home", appear first at positions 2,018 and 9,764 as in
  the paper (so first-appearance numbering makes them look rare), then come in
  homepage sets {home, page, 1 + Poisson(1.2) name tokens}: 10-50% of a normal
  day's sets (uniform per day) and 97% of a bulk day's, so the late tokens
  become the most frequent and peak (almost 100%) in the window-size spikes,
  the two effects Figure 14 (c, d) shows.  Publication sets take the rest of
  the mean size.  The bulk days lie after position 9,764.
"""
from __future__ import annotations

import argparse
import csv
import math
import os

import numpy as np
from streamspec.spec._numba import njit

from streamspec.spec.simjoin import RecordBatch

# Section 7.1, Table 3: stream length, average set size, universe size
TABLE3 = {"tweet": (3.4e7, 13.44, 3.7e7), "flickr": (1.2e6, 10.05, 8.1e5),
          "dblp": (5.5e6, 12.10, 1.7e6), "enron": (2.5e5, 302.2, 7.3e5),
          "industry": (4.9e7, 13.07, 1.1e4)}
SCALE = {"tweet": 0.1, "flickr": 1.0, "dblp": 1.0, "enron": 1.0, "industry": 0.05}
ZIPF_S = 1.10                  # fitted on loaders.fortunes, ranks 10..1e4 (module docstring)
# V fitted by ``fit_vocab`` (``--fit``) so that expected_universe(L * m, s, V) = U
VOCAB = {"tweet": 373_404_000, "flickr": 1_723_000, "dblp": 1_954_000, "enron": 733_000,
         "industry": 11_000}
TWEET_DAYS = 89
DBLP_DAYS, DBLP_BULK, DBLP_PEAK = 5500, 30, 338_199
DBLP_FIRST = (2018, 9764)      # first positions of "page" and "home" (Section 7.4)
HEAD = 2_000_000


# -- the token model ------------------------------------------------------------------
def _cdf(x, s: float, v: float):
    """P(rank < x - 1) of the power law on [1, v + 1): the rank is floor(x) - 1."""
    if s == 1.0:
        return np.log(x) / math.log(v + 1.0)
    return (x ** (1.0 - s) - 1.0) / ((v + 1.0) ** (1.0 - s) - 1.0)


def expected_universe(draws: float, s: float, v: float) -> float:
    """Expected distinct tokens in ``draws`` independent draws of the token model."""
    h = int(min(v, HEAD))
    i = np.arange(1, h + 1, dtype=np.float64)
    total = float(-np.expm1(-draws * (_cdf(i + 1, s, v) - _cdf(i, s, v))).sum())
    if v > h:
        x = np.exp(np.linspace(math.log(h + 1.0), math.log(v + 1.0), 20001))
        dens = (1.0 / (x * math.log(v + 1.0)) if s == 1.0
                else (1.0 - s) * x ** (-s) / ((v + 1.0) ** (1.0 - s) - 1.0))
        g = -np.expm1(-draws * dens)
        total += float(((g[1:] + g[:-1]) * np.diff(x)).sum() / 2)
    return total


def fit_vocab(name: str, s: float = ZIPF_S) -> int:
    """The vocabulary V whose expected universe over Table 3's length is Table 3's U."""
    length, mean, universe = TABLE3[name]
    draws = length * mean
    lo, hi = math.log(universe), math.log(universe * 1e3)
    if expected_universe(draws, s, universe) >= 0.999 * universe:
        return int(universe)                 # saturated: every token is drawn
    for _ in range(40):
        mid = (lo + hi) / 2
        if expected_universe(draws, s, math.exp(mid)) < universe:
            lo = mid
        else:
            hi = mid
    return int(round(math.exp(hi), -3 if universe > 1e5 else 0))


@njit(cache=True)
def _draw_sets(sizes, s, v, seed):
    """Distinct token ranks for each set (``sizes[i]`` of them; a repeat is drawn
    again), ranks from the power law on [1, v + 1); CSR ``tok``."""
    np.random.seed(seed)
    out = np.empty(sizes.sum(), np.int64)
    a = (v + 1.0) ** (1.0 - s) - 1.0 if s != 1.0 else 0.0
    lv = math.log(v + 1.0)
    at = 0
    table = np.full(64, -1, np.int64)
    for i in range(sizes.size):
        n = sizes[i]
        cap = 64
        while cap < 4 * n:
            cap *= 2
        if cap > table.size:
            table = np.full(cap, -1, np.int64)
        mask = cap - 1
        got = 0
        while got < n:
            u = np.random.random()
            x = math.exp(u * lv) if s == 1.0 else (a * u + 1.0) ** (1.0 / (1.0 - s))
            r = min(int(x) - 1, int(v) - 1)
            h = (r * 0x9E3779B1) & mask
            while table[h] != -1 and table[h] != r:
                h = (h + 1) & mask
            if table[h] == r:
                continue
            table[h] = r
            out[at + got] = r
            got += 1
        for q in range(n):                  # clear the slots used
            h = (out[at + q] * 0x9E3779B1) & mask
            while table[h] != -1:
                table[h] = -1
                h = (h + 1) & mask
        at += n
    return out


def _batch(sizes, tok, ts) -> RecordBatch:
    ptr = np.zeros(sizes.size + 1, np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return RecordBatch(np.arange(sizes.size, dtype=np.int64), np.asarray(ts, np.float64), ptr, tok)


def _scaled(name: str, n: int | None, scale: float | None) -> tuple[int, float]:
    scale = SCALE[name] if scale is None else scale
    full = int(round(TABLE3[name][0] * scale))
    if n is None:
        n = full
    if n > full:
        raise ValueError(f"table3-{name} at scale {scale} has {full} sets, {n} asked")
    return n, scale


def _sizes(rng, n: int, mean: float, heavy: bool = False) -> np.ndarray:
    if heavy:          # lognormal, sigma 1, mean m - 1
        sigma = 1.0
        mu = math.log(mean - 1.0) - sigma ** 2 / 2
        return 1 + np.round(rng.lognormal(mu, sigma, n)).astype(np.int64)
    return 1 + rng.poisson(mean - 1.0, n).astype(np.int64)


def _stream(name: str, n, seed, scale, ts_fn, heavy=False) -> RecordBatch:
    n, scale = _scaled(name, n, scale)
    # one generator per part, each drawn in stream order: a shorter stream is a prefix
    s_size, s_tok, s_ts = np.random.default_rng(seed).integers(2 ** 31, size=3)
    sizes = np.minimum(_sizes(np.random.default_rng(s_size), n, TABLE3[name][1], heavy), VOCAB[name])
    tok = _draw_sets(sizes, ZIPF_S, float(VOCAB[name]), int(s_tok))
    return _batch(sizes, tok, ts_fn(np.random.default_rng(s_ts), n, scale))


# -- arrivals (mean rate 1 set per time unit) ------------------------------------------
def _poisson(rng, n, scale):
    return np.cumsum(rng.exponential(1.0, n))


def _diurnal(rng, n, scale, amplitude=0.5):
    """Poisson with rate 1 + a sin(2 pi t / P), P = one day of the scaled stream:
    unit-rate arrivals in operational time mapped through the inverse of the
    cumulative rate."""
    period = TABLE3["tweet"][0] * scale / TWEET_DAYS
    tau = np.cumsum(rng.exponential(1.0, n))
    grid = np.arange(0.0, tau[-1] + 2 * period, period / 256)
    cum = grid + amplitude * period / (2 * math.pi) * (1 - np.cos(2 * math.pi * grid / period))
    return np.interp(tau, cum, grid)


def _uniform(rng, n, scale):
    """The first n of the scaled stream's sorted uniform times."""
    full = int(round(TABLE3["flickr"][0] * scale))
    return np.sort(rng.uniform(0.0, full, full))[:n]


def _weibull(rng, n, scale, shape=0.5):
    return np.cumsum(rng.weibull(shape, n) / math.gamma(1 + 1 / shape))


# -- the five streams ----------------------------------------------------------------
def tweet(n=None, seed=0, scale=None):
    return _stream("tweet", n, seed, scale, _diurnal)


def flickr(n=None, seed=0, scale=None):
    return _stream("flickr", n, seed, scale, _uniform)


def enron(n=None, seed=0, scale=None):
    return _stream("enron", n, seed, scale, _weibull, heavy=True)


def industry(n=None, seed=0, scale=None):
    return _stream("industry", n, seed, scale, _poisson)


def dblp_days(full: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Per day: sets, and of them the bulk-update ones (module docstring)."""
    peak = round(DBLP_PEAK * full / TABLE3["dblp"][0])
    bulk = np.round(peak / np.arange(1, DBLP_BULK + 1)).astype(np.int64)
    weights = rng.gamma(0.5, 1.0, DBLP_DAYS)
    counts = rng.multinomial(full - int(bulk.sum()), weights / weights.sum()).astype(np.int64)
    first = int(np.searchsorted(np.cumsum(counts), DBLP_FIRST[1], side="right")) + 1
    days = rng.choice(np.arange(first, DBLP_DAYS), DBLP_BULK, replace=False)
    extra = np.zeros(DBLP_DAYS, np.int64)
    extra[days] = bulk
    return counts + extra, extra


def dblp(n=None, seed=0, scale=None):
    n, scale = _scaled("dblp", n, scale)
    full = int(round(TABLE3["dblp"][0] * scale))
    rng = np.random.default_rng(seed)
    day, home, sizes = dblp_layout(full, rng)
    v = VOCAB["dblp"]
    drawn = _draw_sets(sizes[:n], ZIPF_S, float(v), int(rng.integers(2 ** 31)))
    hot_home, hot_page = v, v + 1
    extra = np.where(home[:n], 2, 0)
    if n > DBLP_FIRST[0]:
        extra[DBLP_FIRST[0]] += 1              # "page" first, in a publication
    out = np.empty(drawn.size + int(extra.sum()), np.int64)
    _add_hot(sizes[:n], extra, drawn, out, hot_home, hot_page)
    ts = day[:n] * (full / DBLP_DAYS)          # one day = full / DAYS units: mean rate 1
    return _batch(sizes[:n] + extra, out, ts)


def dblp_layout(full: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each set's day, whether it is a homepage set, and its size without the hot tokens."""
    per_day, bulk = dblp_days(full, rng)
    day = np.repeat(np.arange(DBLP_DAYS), per_day)
    # within a day the background sets first, then the bulk update
    in_bulk = np.arange(full) >= np.repeat(np.cumsum(per_day) - bulk, per_day)
    share = np.where(in_bulk, 0.97, rng.uniform(0.1, 0.5, DBLP_DAYS)[day])
    home = (rng.random(full) < share) & (np.arange(full) >= DBLP_FIRST[1])
    home[min(DBLP_FIRST[1], full - 1)] = True
    h = home.mean()
    names = 1 + rng.poisson(1.2, full)
    pub_mean = (TABLE3["dblp"][1] - h * (2 + 1 + 1.2)) / (1 - h)
    sizes = np.where(home, names, _sizes(rng, full, pub_mean))
    return day, home, sizes


@njit(cache=True)
def _add_hot(sizes, extra, drawn, out, hot_home, hot_page):
    a = b = 0
    for i in range(sizes.size):
        if extra[i] == 1:
            out[b] = hot_page
        elif extra[i] == 2:
            out[b] = hot_home
            out[b + 1] = hot_page
        b += extra[i]
        out[b:b + sizes[i]] = drawn[a:a + sizes[i]]
        a += sizes[i]
        b += sizes[i]


GENERATORS = {f"table3-{name}": fn for name, fn in
              (("tweet", tweet), ("flickr", flickr), ("dblp", dblp), ("enron", enron),
               ("industry", industry))}


def dblp_day(scale: float | None = None) -> float:
    """One day in the DBLP-like stream's time units."""
    return TABLE3["dblp"][0] * (SCALE["dblp"] if scale is None else scale) / DBLP_DAYS


# -- statistics ------------------------------------------------------------------------
def window_sizes(ts: np.ndarray, w: float) -> np.ndarray:
    """|W| just after each set arrives (valid while t < ts + w), itself included."""
    return np.arange(ts.size) - np.searchsorted(ts, ts - w, side="right") + 1


def zipf_fit(b: RecordBatch, lo: int = 10, hi: int = 10_000) -> float:
    """Least-squares slope of log set frequency on log rank over ranks lo..hi."""
    freq = np.sort(np.bincount(b.tok))[::-1]
    freq = freq[freq > 0]
    r = np.arange(1, freq.size + 1)
    m = (r >= lo) & (r <= hi)
    return float(-np.polyfit(np.log(r[m]), np.log(freq[m]), 1)[0])


def stats(name: str, b: RecordBatch, scale: float | None, w: float) -> dict:
    sizes = np.diff(b.tok_ptr)
    counts = np.bincount(b.tok)
    ws = window_sizes(b.ts, w)
    gaps = np.diff(b.ts)
    row = {"stream": name, "scale": scale, "sets": len(b), "avg_set_size": round(float(sizes.mean()), 2),
           "universe": int((counts > 0).sum()), "tokens": int(sizes.sum()),
           "top_token_share": round(float(counts.max() / len(b)), 3),
           "zipf_s_fit_10_1e4": round(zipf_fit(b), 3),
           "gap_cv": round(float(gaps.std() / gaps.mean()), 2) if gaps.mean() > 0 else "",
           "w": round(w, 2), "mean_W": round(float(ws.mean()), 1), "max_W": int(ws.max())}
    if name in TABLE3:
        length, mean, universe = TABLE3[name]
        row.update(paper_sets=length, paper_avg_set_size=mean, paper_universe=universe,
                   zipf_s=ZIPF_S, vocab=VOCAB[name],
                   model_universe_at_paper_length=int(expected_universe(length * mean, ZIPF_S, VOCAB[name])))
    return row


def hot_window_share(b: RecordBatch, w: float, token: int) -> np.ndarray:
    """Share of the window's sets (just after each arrival) that hold ``token``."""
    has = np.zeros(len(b), np.int64)
    owner = np.repeat(np.arange(len(b)), np.diff(b.tok_ptr))
    has[owner[b.tok == token]] = 1
    cum = np.concatenate([[0], np.cumsum(has)])
    lo = np.searchsorted(b.ts, b.ts - w, side="right")
    i = np.arange(len(b))
    return (cum[i + 1] - cum[lo]) / (i - lo + 1)


def fig14(out: str, seed: int = 0) -> None:
    """Panels (c) window size for w = 1 day and (d) the late tokens' share of the
    window, on the DBLP-like stream; (a) and (b), swoop against swoop-noheap, from
    the throughput harness's ``throughput-table3-dblp-k10.csv`` if it is there."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    b = dblp(seed=seed)
    day = dblp_day()
    ws = window_sizes(b.ts, day)
    v = VOCAB["dblp"]
    home, page = hot_window_share(b, day, v), hot_window_share(b, day, v + 1)
    first = [int(np.argmax(b.tok == t)) for t in (v + 1, v)]
    first = [int(np.searchsorted(b.tok_ptr, p, side="right") - 1) for p in first]
    step = max(1, len(b) // 4000)
    with open(os.path.join(out, "dblp-window.csv"), "w", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["position", "day", "window_w1day", "home_share", "page_share"])
        for i in range(0, len(b), step):
            wr.writerow([i, int(b.ts[i] / day + 0.5), int(ws[i]), round(home[i], 4), round(page[i], 4)])
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    ax_a, ax_b, ax_c, ax_d = axes.ravel()
    path = os.path.join(out, "throughput-table3-dblp-k10.csv")
    if os.path.exists(path):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        last = {}
        for r in rows:
            last[(r["engine"], float(r["w"]))] = r
        for engine in ("swoop", "swoop-noheap"):
            mine = sorted((w, r) for (e, w), r in last.items() if e == engine)
            xs = [w / day for w, _ in mine]
            ax_a.plot(xs, [float(r["sets_per_s"]) for _, r in mine], marker="o", label=engine)
            ax_b.plot(xs, [float(r["precandidates_per_set"]) for _, r in mine], marker="o", label=engine)
        for ax, label in ((ax_a, "sets / s (CPU)"), (ax_b, "pre-candidates / set")):
            ax.set_xscale("log"), ax.set_yscale("log"), ax.set_xlabel("window w (days)")
            ax.set_ylabel(label), ax.legend(fontsize=8)
    ax_a.set_title("(a) set rate, k = 10"), ax_b.set_title("(b) pre-candidates")
    pos = np.arange(0, len(b), step)
    ax_c.plot(pos, ws[pos], lw=0.6)
    ax_c.set_title(f"(c) |W| for w = 1 day (max {int(ws.max()):,})")
    ax_c.set_xlabel("stream position"), ax_c.set_ylabel("|W|")
    ax_d.plot(pos, page[pos], lw=0.6, color="tab:blue", label=f"'page' (first at {first[0]:,})")
    ax_d.plot(pos, home[pos], lw=0.6, color="tab:red", alpha=0.7, label=f"'home' (first at {first[1]:,})")
    ax_d.set_title("(d) share of the window's sets holding the token, w = 1 day")
    ax_d.set_xlabel("stream position"), ax_d.set_ylabel("share"), ax_d.legend(fontsize=8)
    fig.suptitle(f"Figure 14 on the DBLP-like stream (table3-dblp, {len(b):,} sets)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "table3-fig14.png"), dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", default="tweet,flickr,dblp,enron,industry,fortunes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--w", type=float, default=1000.0,
                    help="window for the |W| columns (DBLP-like: one day instead)")
    ap.add_argument("--out", default=os.path.join("bench", "results", "simjoin"))
    ap.add_argument("--fit", action="store_true", help="refit VOCAB (prints it)")
    ap.add_argument("--fig14", action="store_true", help="also draw Figure 14 (c, d) (+ (a, b))")
    args = ap.parse_args(argv)
    if args.fit:
        print({name: fit_vocab(name) for name in TABLE3}, flush=True)
    rows = []
    for name in args.streams.split(","):
        if name == "fortunes":
            from streamspec.bench.simjoin.loaders import fortunes
            row = stats(name, fortunes(), None, args.w)
        else:
            b = GENERATORS[f"table3-{name}"](seed=args.seed)
            row = stats(name, b, SCALE[name], dblp_day() if name == "dblp" else args.w)
            if name == "dblp":
                row["paper_max_W_1day_scaled"] = round(DBLP_PEAK * SCALE[name])
        print(row, flush=True)
        rows.append(row)
    os.makedirs(args.out, exist_ok=True)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(os.path.join(args.out, "table3-streams.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields, restval="", lineterminator="\n")
        wr.writeheader()
        wr.writerows(rows)
    if args.fig14:
        fig14(args.out, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
