"""Cell sources of the research notebooks (read by ``build_notebooks.py``).

``NOTEBOOKS`` maps a notebook name to ``(title, intro, cells)`` where cells
are ``("md" | "code", source)``. The parameter and setup cells every
notebook starts with are in ``build_notebooks.py``.
"""

# ------------------------------------------------------------------ shared pieces

LARGE_HELPERS = '''
from spartition.errors import InfeasibleMemory, SpartitionError
from spartition.core.registry import algorithms as registered_algorithms

ALGORITHMS = registered_algorithms()


def closed_form(name, params, M):
    """The documented closed-form I/O of algorithm ``name`` (None where its tiling does not fit)."""
    try:
        return float(ALGORITHMS[name].io_formula(params, M))
    except (InfeasibleMemory, SpartitionError, ValueError, ZeroDivisionError):
        return None


def crossover(Ms, big_memory_io, small_memory_io):
    """The smallest M of the grid from which ``big_memory_io <= small_memory_io`` at every larger M (None: never)."""
    found = None
    for M in sorted(Ms, reverse=True):
        a, b = big_memory_io.get(M), small_memory_io.get(M)
        if a is None or b is None or a > b:
            break
        found = M
    return found


def geometric(lo, hi, per_octave=8):
    """Integers from lo to hi, about ``per_octave`` per doubling."""
    out, k = set(), 0
    while True:
        M = int(round(lo * 2 ** (k / per_octave)))
        if M > hi:
            return sorted(out)
        out.add(M)
        k += 1


def mismatches(s):
    """Verdicts saying a replayed I/O differs from the algorithm's closed form."""
    return [(r.M, v.message) for r in s.rows for v in r.verdicts if v.kind == "mismatch"]


def replayed_pairs(s):
    return sum(1 for r in s.rows for a in r.algorithms.values() if a.status == "VALID")
'''

# ------------------------------------------------------------------ 1. forward attention

FORWARD = [
    ("md", """
## Grids

`FAST` picks a tiny grid and short solver time limits (CI); the full grid runs in a few minutes.
Every computed value goes to the results store and is read back from it on a re-run."""),
    ("code", """
if FAST:
    SMALL = [({"n": 2, "d": 1}, (5, 7, 8))]
    TIME_LIMIT, BOUND_TIME_LIMIT = 3.0, 1.0
    LARGE = {"n": 16, "d": 4}
    LARGE_MS = (8, 16, 24, 32, 48, 64, 128, 256)
else:
    SMALL = [({"n": 2, "d": 1}, None), ({"n": 2, "d": 2}, (6, 9, 12))]
    TIME_LIMIT, BOUND_TIME_LIMIT = 15.0, 1.0
    LARGE = {"n": 32, "d": 8}
    LARGE_MS = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024)
CLOSED_FORM_N, CLOSED_FORM_D = 256, (4, 8, 16, 32, 64)
FAMILY = "attention-forward"
ALGS = ["flash-forward", "square-tiling-forward", "standard-forward", "greedy"]"""),
    ("md", """
## Small n, d: exact optimum, lower bounds and algorithms against M

For each M: the exact optimal I/O (CP-SAT, status recorded: a hollow square is an unproven incumbent with a bar
down to the proven bound), the computed lower bounds (trivial, Hong-Kung `M (P(2M) - 1)`, the X-partition and
class-capacity forms), and the replayed I/O of FlashAttention, Saha-Ye square tiling, the standard algorithm and
the greedy (furthest-next-use) baseline. An algorithm missing at some M does not fit in that memory."""),
    ("code", """
small = [study(FAMILY, p, Ms, TIME_LIMIT, BOUND_TIME_LIMIT, algorithms=ALGS) for p, Ms in SMALL]
fig, axes = plt.subplots(1, len(small), figsize=(6.5 * len(small), 4.5), squeeze=False)
for ax, s in zip(axes[0], small):
    plot_small(ax, s, ALGS, f"{FAMILY} n={s.spec.params['n']}, d={s.spec.params['d']}")
show(fig, "forward_small")"""),
    ("code", """
lines = ["### Findings (small n, d)", ""]
for s in small:
    lines += small_findings(s, ALGS)
say(*lines)
display(Markdown(render_rows(small[0].rows, "markdown", title="Study table")))"""),
    ("md", """
## Large n, d: the algorithms against the Saha-Ye formulas (schedules only)

No exact solver here: every schedule is generated, replayed by the checker and its I/O stored. The dotted curves
are the two Saha-Ye terms with constant 1, `n^2 d^2 / M` (FlashAttention) and `n^2 d / sqrt(M)` (square tiling),
which cross at `M = d^2` (vertical line). The right panel divides each algorithm's I/O by the Saha-Ye
`min(...)` expression: the hidden constant of the Theta bound at this size."""),
    ("code", LARGE_HELPERS),
    ("code", """
LARGE_ALGS = ["flash-forward", "square-tiling-forward", "standard-forward"]
large = study(FAMILY, LARGE, LARGE_MS, 10.0, 10.0, exact=(), bounds=False, algorithms=LARGE_ALGS)
n, d = LARGE["n"], LARGE["d"]
io = {a: {r.M: value(r, "algorithms", a) for r in large.rows} for a in LARGE_ALGS}
Ms = [r.M for r in large.rows]
sy = {r.M: formula_value(r, "sy-lower", in_regime=False) for r in large.rows}

fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.5))
for a, mk in zip(LARGE_ALGS, "osD"):
    ax.loglog(Ms, [io[a][M] or math.nan for M in Ms], "-" + mk, ms=4, label=a + " (replayed)")
    bx.semilogx([M / d**2 for M in Ms], [io[a][M] / sy[M] if io[a][M] else math.nan for M in Ms], "-" + mk, ms=4, label=a)
for name, label in (("sy-flash-upper", "n^2 d^2 / M"), ("sy-tiling-upper", "n^2 d / sqrt(M)")):
    ax.loglog(Ms, [formula_value(r, name, in_regime=False) for r in large.rows], ":", label=label)
ax.axvline(d * d, color="0.6", lw=1, label="M = d^2")
ax.set(xlabel="M", ylabel="I/O", title=f"{FAMILY} n={n}, d={d}")
bx.set_yscale("log")
ax.legend(fontsize=7)
bx.axvline(1, color="0.6", lw=1)
bx.set(xlabel="M / d^2", ylabel="I/O / min(n^2 d^2/M, n^2 d/sqrt M)", title="hidden constant of the Saha-Ye bound")
bx.legend(fontsize=7)
show(fig, "forward_large")"""),
    ("code", """
Mx = crossover(Ms, io["flash-forward"], io["square-tiling-forward"])
flash_fits = [M for M in Ms if io["flash-forward"][M] is not None]
ratio_flash = [io["flash-forward"][M] / (n * n * d * d / M) for M in Ms if M >= d * d and io["flash-forward"][M]]
ratio_tile = [io["square-tiling-forward"][M] / (n * n * d / math.sqrt(M)) for M in Ms if M < d * d and io["square-tiling-forward"][M]]
best = {M: min((io[a][M], a) for a in LARGE_ALGS if io[a][M] is not None) for M in Ms}
lines = ["### Findings (large n, d, schedules only)", "",
         f"- n = {n}, d = {d} (d^2 = {d * d}), {replayed_pairs(large)} schedules replayed; "
         f"{len(mismatches(large))} differ from their algorithm's closed form.",
         f"- FlashAttention fits from M = {min(flash_fits) if flash_fits else '-'} on (its blocks need 2 B_c d + B_r (2d+1) + 3 <= M)."]
if Mx is not None:
    lines.append(f"- FlashAttention's I/O is at most square tiling's from M = {Mx} on in this grid, i.e. at "
                 f"M = {fmt(Mx / (d * d), 2)} d^2 (the Saha-Ye terms cross at exactly M = d^2).")
else:
    lines.append("- FlashAttention never beats square tiling over the whole upper part of this grid.")
if ratio_flash:
    lines.append(f"- FlashAttention / (n^2 d^2 / M) for M >= d^2: {span(ratio_flash)}.")
if ratio_tile:
    lines.append(f"- Square tiling / (n^2 d / sqrt(M)) for M < d^2: {span(ratio_tile)}.")
lines.append("- Cheapest algorithm per M: " + ", ".join(f"{M}: {a} ({fmt(v)})" for M, (v, a) in best.items()) + ".")
say(*lines)"""),
    ("md", """
## Where is the crossover? Closed forms at larger sizes

Each generator documents the exact I/O of its schedule in closed form; the replays above match it (the
`mismatch` count). Evaluating the closed forms for `n = 256` and growing `d` locates the memory from which
FlashAttention is never worse than square tiling, against `d^2`."""),
    ("code", """
rows = []
for dd in CLOSED_FORM_D:
    p = {"n": CLOSED_FORM_N, "d": dd}
    grid = geometric(dd, CLOSED_FORM_N * dd, 16)
    fl = {M: closed_form("flash-forward", p, M) for M in grid}
    sq = {M: closed_form("square-tiling-forward", p, M) for M in grid}
    rows.append((dd, crossover(grid, fl, sq)))
fig, ax = plt.subplots(figsize=(5.5, 4))
ds = [dd for dd, Mx in rows if Mx]
ax.loglog([dd * dd for dd in ds], [Mx for dd, Mx in rows if Mx], "o-", label="crossover M (closed forms)")
ax.loglog([dd * dd for dd in ds], [dd * dd for dd in ds], "k:", label="M = d^2")
ax.set(xlabel="d^2", ylabel="M from which FlashAttention <= square tiling", title=f"n = {CLOSED_FORM_N}")
ax.legend(fontsize=8)
show(fig, "forward_crossover")
say("### Findings (crossover)", "",
    *[f"- d = {dd}: FlashAttention <= square tiling from M = {Mx}" + (f" = {fmt(Mx / dd**2, 2)} d^2." if Mx else ".")
      for dd, Mx in rows])"""),
]

# ------------------------------------------------------------------ 2. backward attention

BACKWARD = [
    ("md", """
## Grids

Two DAG families: the weight gradient of Li et al. (`attention-backward-weights`, algorithm: their small-cache
Algorithm 6) and the flash-form backward (`attention-backward-flash`, algorithm: FlashAttention's backward pass).
`FAST` picks tiny grids and short solver time limits."""),
    ("code", """
W, F = "attention-backward-weights", "attention-backward-flash"
if FAST:
    SMALL = [(W, {"n": 1, "d": 1}, (3, 4, 6, 7)), (F, {"n": 1, "d": 1}, (3, 5, 7, 13))]
    TIME_LIMIT, BOUND_TIME_LIMIT = 2.0, 1.0
    LARGE = {"n": 16, "d": 4}
    LARGE_MS = (8, 16, 64, 128, 256)  # M = 32 and 48 take a minute and a half each for the flash DAG's formulas
else:
    SMALL = [(W, {"n": 1, "d": 1}, None), (F, {"n": 1, "d": 1}, (3, 4, 5, 6, 7, 13)),
             (W, {"n": 2, "d": 1}, (4, 8, 12)), (F, {"n": 2, "d": 1}, (4, 8, 13, 17))]
    TIME_LIMIT, BOUND_TIME_LIMIT = 15.0, 1.0
    LARGE = {"n": 32, "d": 8}
    LARGE_MS = (16, 32, 64, 128, 256, 512, 1024)
CLOSED_FORM_N, CLOSED_FORM_D = 256, (4, 8, 16, 32, 64)
ALGS = {W: ["li-small-cache-backward", "greedy"], F: ["flash-backward", "greedy"]}"""),
    ("md", """
## Small n, d: exact optimum, lower bounds and algorithms against M

As in the forward notebook: exact optimum (hollow: unproven, bar down to the proven bound), trivial, Hong-Kung,
X-partition and capacity bounds, and the replayed I/O of each family's algorithm and of the greedy baseline."""),
    ("code", """
small = [study(fam, p, Ms, TIME_LIMIT, BOUND_TIME_LIMIT, algorithms=ALGS[fam]) for fam, p, Ms in SMALL]
cols = 2
fig, axes = plt.subplots((len(small) + cols - 1) // cols, cols, figsize=(13, 4.5 * ((len(small) + cols - 1) // cols)),
                         squeeze=False)
for ax, s in zip(axes.flat, small):
    plot_small(ax, s, ALGS[s.spec.family], f"{s.spec.family} n={s.spec.params['n']}, d={s.spec.params['d']}")
for ax in list(axes.flat)[len(small):]:
    ax.set_visible(False)
show(fig, "backward_small")"""),
    ("code", """
lines = ["### Findings (small n, d)", ""]
for s in small:
    lines += small_findings(s, ALGS[s.spec.family])
say(*lines)"""),
    ("md", """
## Large n, d: the algorithms against the Li et al. formulas (schedules only)

Replayed schedules only. Left: the I/O of Algorithm 6 on the weight-gradient DAG and of FlashAttention's backward
on the flash-form DAG, with the Li et al. terms (constant 1) `(n^2 d + n d^2) / sqrt(M)` (small cache) and
`(n^2 d^2 + n d^3) / M` (large cache), which cross at `M = d^2`. The two algorithms run on different DAGs (the
flash form also computes dQ, dK, dV), so their crossover is a comparison of the published strategies, not of
two schedules of one DAG. Right: each algorithm's I/O divided by its family's formula."""),
    ("code", LARGE_HELPERS),
    ("code", """
large_w = study(W, LARGE, LARGE_MS, 10.0, 10.0, exact=(), bounds=False, algorithms=["li-small-cache-backward"])
large_f = study(F, LARGE, LARGE_MS, 10.0, 10.0, exact=(), bounds=False, algorithms=["flash-backward"])
n, d = LARGE["n"], LARGE["d"]
Ms = [r.M for r in large_w.rows]
alg6 = {r.M: value(r, "algorithms", "li-small-cache-backward") for r in large_w.rows}
flash = {r.M: value(r, "algorithms", "flash-backward") for r in large_f.rows}
li_small = {M: (n * n * d + n * d * d) / math.sqrt(M) for M in Ms}
li_large = {M: (n * n * d * d + n * d**3) / M for M in Ms}
li_min = {r.M: formula_value(r, "li-lower", in_regime=False) for r in large_w.rows}
flash_formula = {M: n * n * d * d / M for M in Ms}

fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.5))
ax.loglog(Ms, [alg6[M] or math.nan for M in Ms], "-o", ms=4, label="Algorithm 6 (weights DAG, replayed)")
ax.loglog(Ms, [flash[M] or math.nan for M in Ms], "-s", ms=4, label="FlashAttention backward (flash DAG, replayed)")
ax.loglog(Ms, [li_small[M] for M in Ms], ":", label="(n^2 d + n d^2) / sqrt(M)")
ax.loglog(Ms, [li_large[M] for M in Ms], ":", label="(n^2 d^2 + n d^3) / M")
ax.axvline(d * d, color="0.6", lw=1, label="M = d^2")
ax.set(xlabel="M", ylabel="I/O", title=f"backward, n={n}, d={d}")
bx.set_yscale("log")
ax.legend(fontsize=7)
bx.semilogx([M / d**2 for M in Ms], [alg6[M] / li_min[M] if alg6[M] else math.nan for M in Ms], "-o", ms=4,
            label="Algorithm 6 / li-lower min(...)")
bx.semilogx([M / d**2 for M in Ms], [flash[M] / flash_formula[M] if flash[M] else math.nan for M in Ms], "-s", ms=4,
            label="FlashAttention backward / (n^2 d^2 / M)")
bx.axvline(1, color="0.6", lw=1)
bx.set(xlabel="M / d^2", ylabel="I/O / formula", title="hidden constants")
bx.legend(fontsize=7)
show(fig, "backward_large")"""),
    ("code", """
Mx = crossover(Ms, flash, alg6)
r6 = [alg6[M] / li_small[M] for M in Ms if M < d * d and alg6[M]]
rf = [flash[M] / flash_formula[M] for M in Ms if M >= d * d and flash[M]]
lines = ["### Findings (large n, d, schedules only)", "",
         f"- n = {n}, d = {d} (d^2 = {d * d}): {replayed_pairs(large_w) + replayed_pairs(large_f)} schedules replayed; "
         f"{len(mismatches(large_w)) + len(mismatches(large_f))} differ from their closed forms.",
         f"- FlashAttention backward fits from M = {min([M for M in Ms if flash[M]], default='-')} on; "
         f"Algorithm 6 from M = {min([M for M in Ms if alg6[M]], default='-')} on."]
if r6:
    lines.append(f"- Algorithm 6 / ((n^2 d + n d^2) / sqrt(M)) for M < d^2: {span(r6)}.")
if rf:
    lines.append(f"- FlashAttention backward / (n^2 d^2 / M) for M >= d^2: {span(rf)}.")
lines.append(f"- FlashAttention backward (flash DAG) costs at most Algorithm 6 (weights DAG) from M = {Mx} on"
             + (f" = {fmt(Mx / (d * d), 2)} d^2." if Mx else " (never in this grid)."))
say(*lines)"""),
    ("code", """
rows = []
for dd in CLOSED_FORM_D:
    p = {"n": CLOSED_FORM_N, "d": dd}
    grid = geometric(dd, CLOSED_FORM_N * dd, 16)
    fb = {M: closed_form("flash-backward", p, M) for M in grid}
    a6 = {M: closed_form("li-small-cache-backward", p, M) for M in grid}
    rows.append((dd, crossover(grid, fb, a6)))
fig, ax = plt.subplots(figsize=(5.5, 4))
ok = [(dd, Mx) for dd, Mx in rows if Mx]
ax.loglog([dd * dd for dd, _ in ok], [Mx for _, Mx in ok], "o-", label="crossover M (closed forms)")
ax.loglog([dd * dd for dd, _ in ok], [dd * dd for dd, _ in ok], "k:", label="M = d^2")
ax.set(xlabel="d^2", ylabel="M from which flash backward <= Algorithm 6", title=f"n = {CLOSED_FORM_N}")
ax.legend(fontsize=8)
show(fig, "backward_crossover")
say("### Findings (crossover, closed forms)", "",
    *[f"- d = {dd}: FlashAttention backward <= Algorithm 6 from M = {Mx}"
      + (f" = {fmt(Mx / dd**2, 2)} d^2." if Mx else " (never below n d).") for dd, Mx in rows])"""),
]

# ------------------------------------------------------------------ 3. approximate attention

APPROX = [
    ("md", """
## Grids

The approximate-attention DAG of the polynomial method (degree `g`, `r = C(d + g, g)` monomial columns). The four
published algorithms run in the `recompute` variant (they regenerate `U1`/`U2` entries); Key Lemma 3.2 and Lemma
3.3 need the DAG's sums in their tile order (`order = grouped-w`, `grouped-g`), so each (algorithm, M) is run on
the DAG built for it. The cases are those of Papp-Sobczyk-Zouzias with the project's concrete reading
(`spartition.families.approx_attention.formulas.approx_case`): I `M >= d r`; II `M < d r`, `M >= (4e)^(g+1)`; IV `M < d r`, `M <= g^2`;
III the rest."""),
    ("code", """
FAMILY = "approx-attention"
APPROX_ALGS = ["approx-case-i", "approx-lemma-3.1", "approx-key-lemma", "approx-lemma-3.3"]
if FAST:
    REPLAY = {"n": 8, "d": 4, "gs": (1, 2), "Ms": (8, 12, 16, 24, 32, 48, 64, 96, 128, 256)}
    CAPACITY = [({"n": 4, "d": 2, "g": 1}, (8,))]
    CAP_TIME_LIMIT = 5.0
else:
    REPLAY = {"n": 16, "d": 4, "gs": (1, 2, 3), "Ms": (8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)}
    CAPACITY = [({"n": 4, "d": 2, "g": 1}, (8, 12)), ({"n": 8, "d": 2, "g": 1}, (8,)), ({"n": 4, "d": 3, "g": 1}, (8, 12))]
    CAP_TIME_LIMIT = 20.0
CLOSED = {"n": 64, "d": 16, "gs": (1, 2, 3, 4)}"""),
    ("code", LARGE_HELPERS),
    ("code", """
from spartition.families.approx_attention.formulas import approx_case
from spartition.study.formulas import evaluate_formulas, paper_params_for
from spartition.families.approx_attention.schedules import paper_w


def alg_params(alg, n, d, g, M):
    \"\"\"Builder parameters of the DAG algorithm ``alg`` consumes at M (None: no Key Lemma width fits).\"\"\"
    p = {"n": n, "d": d, "g": g}
    if alg == "approx-key-lemma":
        w = paper_w(d, g, M)
        if w is None:
            return None
        p["order"] = f"grouped-{w}"
    elif alg == "approx-lemma-3.3":
        p["order"] = f"grouped-{g}"
    return p


CASE_UPPER = {"I": "psz-thm11-upper", "II": "psz-thm12-upper", "III": "psz-thm13-upper", "IV": "psz-thm14-upper"}
CASE_LOWER = {"I": "psz-thm11-lower", "II": "psz-thm12-lower", "III": "psz-thm13-lower", "IV": "psz-thm14-lower"}
EXPLICIT_LOWER = ["trivial-approx", "psz-thm11-lower", "psz-kl32-partition-lower", "psz-thm13-partition-lower",
                  "psz-thm14-partition-lower"]


def formulas_at(n, d, g, M):
    return {f.name: f for f in evaluate_formulas(FAMILY, {"n": n, "d": d, "g": g}, M)}"""),
    ("md", """
## The algorithms' I/O against the stated bounds over (g, M) (replayed schedules)

One panel per degree `g`: the replayed I/O of each algorithm where its tiling fits, the stated upper bound of the
case each M falls in (constant 1, thin black), and the explicit lower bounds (the proofs' per-class counts, `3 n d`,
`4 n d`; dashed). Shading marks the cases."""),
    ("code", """
n, d = REPLAY["n"], REPLAY["d"]
replayed = {}  # (g, alg, M) -> I/O
studies = []
for g in REPLAY["gs"]:
    for alg in APPROX_ALGS:
        by_params = {}
        for M in REPLAY["Ms"]:
            p = alg_params(alg, n, d, g, M)
            if p is not None:
                by_params.setdefault(tuple(sorted(p.items())), []).append(M)
        for key, Ms in by_params.items():
            s = compare(StudySpec(FAMILY, dict(key), Ms=tuple(Ms), variant="recompute", exact=(), bounds=False,
                                  algorithms=(alg,)), store=store)
            studies.append(s)
            for r in s.rows:
                replayed[(g, alg, r.M)] = value(r, "algorithms", alg)
print(f"{sum(replayed_pairs(s) for s in studies)} schedules replayed or read from the store; "
      f"{sum(len(mismatches(s)) for s in studies)} differ from their closed forms; "
      f"{sum(len(s.violated) for s in studies)} violated verdicts")

CASE_COLOR = {"I": "#e8f4e8", "II": "#e8e8f8", "III": "#f8f0e0", "IV": "#f8e8e8"}


def shade_cases(ax, p, Ms):
    for a, b in zip(Ms, Ms[1:] + [Ms[-1] * 1.3]):
        ax.axvspan(a, b, color=CASE_COLOR[approx_case(p, a)], lw=0)
    for case, color in CASE_COLOR.items():
        ax.fill_between([], [], color=color, label=f"Case {case}")


gs = REPLAY["gs"]
fig, axes = plt.subplots(1, len(gs), figsize=(6 * len(gs), 4.6), squeeze=False)
for ax, g in zip(axes[0], gs):
    Ms = list(REPLAY["Ms"])
    p = paper_params_for(FAMILY, {"n": n, "d": d, "g": g})
    shade_cases(ax, p, Ms)
    for alg, mk in zip(APPROX_ALGS, "osD^"):
        ax.loglog(Ms, [replayed.get((g, alg, M)) or math.nan for M in Ms], "-" + mk, ms=4, label=alg)
    F = {M: formulas_at(n, d, g, M) for M in Ms}
    ax.loglog(Ms, [F[M][CASE_UPPER[approx_case(p, M)]].value for M in Ms], "k-", lw=0.8, label="case upper bound")
    lo = [max([F[M][k].value for k in EXPLICIT_LOWER if F[M][k].applies], default=math.nan) for M in Ms]
    ax.loglog(Ms, lo, "k--", lw=0.8, label="best explicit lower bound")
    ax.set(xlabel="M", ylabel="I/O", title=f"n={n}, d={d}, g={g}, r={p['r']}")
    ax.legend(fontsize=6)
show(fig, "approx_replayed")"""),
    ("code", """
lines = ["### Findings (replayed schedules)", ""]
for g in REPLAY["gs"]:
    p = paper_params_for(FAMILY, {"n": n, "d": d, "g": g})
    by_case = {}
    for M in REPLAY["Ms"]:
        by_case.setdefault(approx_case(p, M), []).append(M)
    for case, Ms in by_case.items():
        best = []
        for M in Ms:
            got = [(replayed.get((g, a, M)), a) for a in APPROX_ALGS if replayed.get((g, a, M))]
            if got:
                best.append((M, *min(got)))
        if not best:
            lines.append(f"- g = {g}, Case {case} (M = {Ms}): no algorithm fits.")
            continue
        F = {M: formulas_at(n, d, g, M) for M, _, _ in best}
        up = [io / F[M][CASE_UPPER[case]].value for M, io, _ in best]
        lb = [io / max(F[M][k].value for k in EXPLICIT_LOWER if F[M][k].applies) for M, io, _ in best]
        winners = ", ".join(f"{M}: {a}" for M, _, a in best)
        lines.append(f"- g = {g} (r = {p['r']}), Case {case}, M = {Ms[0]}..{Ms[-1]}: cheapest algorithm I/O / stated "
                     f"upper bound ({CASE_UPPER[case]}, constant 1) = {span(up)}; / best explicit lower bound = "
                     f"{span(lb)}; cheapest per M: {winners}.")
say(*lines)"""),
    ("md", """
## Over a wider (g, M) plane: closed forms

The closed form of each generator equals its replayed I/O on the grid above (the mismatch count). For a DAG too
large to build here (`n = 64`, `d = 16`) the closed forms show all four cases: for each (g, M), the cheapest
algorithm's I/O divided by the stated upper bound of the case (colour) and the case (letter)."""),
    ("code", """
cn, cd = CLOSED["n"], CLOSED["d"]
plane = []
for g in CLOSED["gs"]:
    p = paper_params_for(FAMILY, {"n": cn, "d": cd, "g": g})
    for M in geometric(8, 4 * cd * p["r"], 3):
        got = []
        for alg in APPROX_ALGS:
            q = alg_params(alg, cn, cd, g, M)
            v = closed_form(alg, q, M) if q is not None else None
            if v is not None:
                got.append((v, alg))
        if got:
            case = approx_case(p, M)
            F = formulas_at(cn, cd, g, M)
            v, alg = min(got)
            plane.append((g, M, case, alg, v / F[CASE_UPPER[case]].value))
fig, ax = plt.subplots(figsize=(9, 3.8))
sc = ax.scatter([M for _, M, *_ in plane], [g for g, *_ in plane], c=[math.log10(x) for *_, x in plane],
                cmap="viridis", s=45, marker="s")
for g, M, case, _, _ in plane:
    ax.annotate(case, (M, g + 0.22), ha="center", va="bottom", fontsize=5)
ax.set_xscale("log")
ax.set(xlabel="M", ylabel="g", yticks=CLOSED["gs"], title=f"n={cn}, d={cd}: log10(cheapest I/O / case upper bound)")
fig.colorbar(sc, ax=ax)
show(fig, "approx_plane")
lines = ["### Findings (closed forms over (g, M))", ""]
for case in ("I", "II", "III", "IV"):
    pts = [x for x in plane if x[2] == case]
    if pts:
        rs = [x[4] for x in pts]
        algs = sorted({x[3] for x in pts})
        lines.append(f"- Case {case}: {len(pts)} (g, M) point{'s' if len(pts) > 1 else ''} (g in {sorted({x[0] for x in pts})}); cheapest algorithm "
                     f"{', '.join(algs)}; its I/O / stated upper bound (constant 1) = {span(rs)}.")
    else:
        lines.append(f"- Case {case}: no point of this plane where an algorithm fits.")
say(*lines)"""),
    ("md", """
## Class capacity against the per-class count of Key Lemma 3.2

The proof of Key Lemma 3.2 bounds the products `U1[i, a] H[a, c]` in one class of a 2M-partition by
`U = 4M + 4M^2/w + M^2/(2w)`. The measured class capacity is the largest number of such products in one node set
with a dominator and a minimum set of at most 2M nodes (CP-SAT; an interval `[found, proven upper bound]` when the
search stops early). The claim `capacity <= U` is checked with `spartition.study.claims`, which stores the runs."""),
    ("code", """
from spartition.study.claims import Claim, capacity, check_claim, expr
from spartition.families.approx_attention.formulas import kl32_width


def kl32_count(p, M):
    w = kl32_width(p["d"], p["g"], M)
    return None if w is None else 4 * M + 4 * M * M / w + M * M / (2 * w)


checks = []
for params, Ms in CAPACITY:
    claim = Claim("psz-kl32-capacity", "one 2M-class holds at most 4M + 4M^2/w + M^2/(2w) products U1 H",
                  "Papp, Sobczyk & Zouzias, Key Lemma 3.2 (Appendix A.2)", FAMILY, {k: [v] for k, v in params.items()},
                  capacity(lambda p, M: 2 * M, weight="tensor=P"), "<=", expr(kl32_count, "KL3.2 count"), Ms=Ms)
    checks += check_claim(claim, store, bound_time_limit=CAP_TIME_LIMIT, workers=1).checks

fig, ax = plt.subplots(figsize=(7, 4))
labels = [f"n={c.params['n']},d={c.params['d']},g={c.params['g']}\\nM={c.M}" for c in checks]
xs = range(len(checks))
total = [c.params["n"] * (paper_params_for(FAMILY, c.params)["r"] - 1) * c.params["d"] for c in checks]
ax.bar([x - 0.2 for x in xs], [c.lhs.lo for c in checks], 0.4, label="measured capacity (found)")
ax.errorbar([x - 0.2 for x in xs], [c.lhs.lo for c in checks],
            yerr=[[0] * len(checks), [c.lhs.hi - c.lhs.lo for c in checks]], fmt="none", ecolor="k",
            label="up to the proven upper bound")
ax.bar([x + 0.2 for x in xs], [c.rhs.lo if c.rhs else math.nan for c in checks], 0.4, label="Key Lemma 3.2 count U")
ax.plot(list(xs), total, "k_", ms=20, mew=2, label="all products n (r-1) d")
ax.set_yscale("log")
ax.set_ylim(bottom=1)
ax.set_xlim(-0.7, len(checks) - 0.3)
ax.set_xticks(list(xs), labels, fontsize=7)
ax.set(ylabel="products U1 H in one class")
ax.legend(fontsize=7)
show(fig, "approx_capacity")
lines = ["### Findings (class capacity)", ""]
for c, t in zip(checks, total):
    if c.rhs is None:
        lines.append(f"- {c.instance()}: no Key Lemma width w fits ({c.outcome}).")
        continue
    meas = fmt(c.lhs.lo) if c.lhs.lo == c.lhs.hi else f"[{fmt(c.lhs.lo)}, {fmt(c.lhs.hi)}]"
    lines.append(f"- {c.instance()}: measured capacity {meas} ({c.lhs.text}) of {t} products; Key Lemma 3.2 "
                 f"count U = {fmt(c.rhs.lo)} = {fmt(c.rhs.lo / c.lhs.hi)} x the proven upper bound; claim {c.outcome}.")
say(*lines)"""),
]

# ------------------------------------------------------------------ 4. classic kernels

CLASSIC = [
    ("md", """
## Grids

Matrix product (`matmul`, `a = b = c = n`, sums as chains) and the FFT butterfly (`fft`, `N = 2^k` points).
`FAST` picks the smallest sizes and short solver time limits."""),
    ("code", """
if FAST:
    SMALL = [("matmul", {"a": 2, "b": 2, "c": 2}, (3, 4, 5, 6, 7)), ("fft", {"k": 2}, (3, 4, 5, 6))]
    TIME_LIMIT, BOUND_TIME_LIMIT = 3.0, 1.0
else:
    SMALL = [("matmul", {"a": 2, "b": 2, "c": 2}, None), ("matmul", {"a": 3, "b": 3, "c": 3}, (6, 9, 12)),
             ("fft", {"k": 2}, None), ("fft", {"k": 3}, (4, 6, 8, 10))]
    TIME_LIMIT, BOUND_TIME_LIMIT = 15.0, 1.0


def shape(family, params, M):
    \"\"\"The classic asymptotic shape with constant 1: n^3 / sqrt(M) (matmul), N log N / log M (FFT).\"\"\"
    if family == "matmul":
        return params["a"] * params["b"] * params["c"] / math.sqrt(M)
    N = 2 ** params["k"]
    return N * math.log2(N) / math.log2(M)


def label(family, params):
    return f"matmul n={params['a']}" if family == "matmul" else f"fft N={2 ** params['k']}\""""),
    ("md", """
## Exact optima and computed lower bounds against the classic shapes

Left of each pair: the exact optimum (hollow: unproven, bar to the proven bound), the computed lower bounds and the
greedy baseline against M, with the classic shape (constant 1, dotted). Right: the constants at these sizes, each
value divided by the shape: the optimum where it is proven, else the interval [proven bound, best schedule] (hollow,
with a bar; the panel says so when no M is proven), the best computed lower bound (the largest of the trivial,
Hong-Kung, X-partition and capacity bounds) and the Hong-Kung bound.

Why the Hong-Kung bound M (P(2M) - 1) is 0 at most of these memories: P(2M) = 1 as soon as the whole DAG is one
class of a 2M-partition, i.e. when its inputs (a dominator of everything) and its sinks (its minimum set) number
at most 2M each. matmul n = 2 has 8 inputs and 4 outputs, so P(2M) = 1 for every M >= 4; fft N = 4 has 4 and 4
(M >= 2). At these sizes the memory is a large fraction of the DAG, so the bound only speaks at the smallest M; the
X-partition and capacity bounds, which choose X > M freely, are positive at more M, and the trivial bound (every
input loaded, every output stored) is the best computed one."""),
    ("code", """
from matplotlib.ticker import MaxNLocator

small = [study(fam, p, Ms, TIME_LIMIT, BOUND_TIME_LIMIT, algorithms=["greedy"]) for fam, p, Ms in SMALL]
fig, axes = plt.subplots(len(small), 2, figsize=(14, 4 * len(small)), squeeze=False)
for (ax, bx), s in zip(axes, small):
    fam, p = s.spec.family, s.spec.params
    plot_small(ax, s, ["greedy"], label(fam, p))
    Ms = [r.M for r in s.rows]
    ax.plot(Ms, [shape(fam, p, M) for M in Ms], "k:", label="classic shape")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # outside the data
    proven = [r for r in s.rows if r.optimum]
    bx.plot([r.M for r in proven], [r.optimum / shape(fam, p, r.M) for r in proven], "ks", label="optimum / shape")
    for r in s.rows:
        e = r.exact.get("cpsat") or r.exact.get("brute")
        if r.optimum or e is None or e.value is None:
            continue
        bx.plot([r.M], [e.value / shape(fam, p, r.M)], "ks", mfc="none")
        if e.bound is not None:
            bx.vlines(r.M, e.bound / shape(fam, p, r.M), e.value / shape(fam, p, r.M), colors="k", lw=1)
    if any(not r.optimum for r in s.rows):
        bx.plot([], [], "ks", mfc="none", label="unproven: [bound, schedule] / shape")
    if not proven:
        bx.text(0.5, 0.95, "optimum unproven at every M of the grid", transform=bx.transAxes, ha="center",
                va="top", fontsize=8)
    best = [max((value(r, "bounds", k) or 0) for k in BOUND_STYLE) / shape(fam, p, r.M) for r in s.rows]
    hk = [(value(r, "bounds", "hong-kung") or 0) / shape(fam, p, r.M) for r in s.rows]
    bx.plot(Ms, best, "-", color="tab:pink", marker="o", ms=4, label="best computed lower bound / shape")
    bx.plot(Ms, hk, "r--o", ms=4, label="Hong-Kung bound / shape (0: P(2M) = 1)")
    bx.set(xlabel="M", ylabel="ratio to the shape", title=label(fam, p) + ": constants")
    bx.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    for a in (ax, bx):
        a.xaxis.set_major_locator(MaxNLocator(integer=True))  # M is an integer
show(fig, "classic")"""),
    ("code", """
lines = ["### Findings", ""]
for s in small:
    fam, p = s.spec.family, s.spec.params
    lines += small_findings(s, ["greedy"])
    opt = [(r.M, r.optimum / shape(fam, p, r.M)) for r in s.rows if r.optimum]
    hk = [(r.M, value(r, "bounds", "hong-kung")) for r in s.rows]
    nz = [(M, v) for M, v in hk if v]
    triv = [value(r, "bounds", "trivial") / shape(fam, p, r.M) for r in s.rows if value(r, "bounds", "trivial")]
    if opt:
        lines.append(f"  - {label(fam, p)}: optimum / shape = {span([x for _, x in opt])} over M = {[M for M, _ in opt]}"
                     + (f"; the trivial bound alone is {span(triv)} x shape at these sizes." if triv else "."))
    else:
        lines.append(f"  - {label(fam, p)}: the optimum is proven at no M of the grid within {fmt(TIME_LIMIT)} s; "
                     "the constants panel shows the intervals [proven bound, best schedule] / shape instead.")
    lines.append(f"  - {label(fam, p)}: the computed Hong-Kung bound M (P(2M) - 1) is positive at "
                 f"{len(nz)} of {len(hk)} memories"
                 + (f" ({', '.join(f'M={M}: {fmt(v)} = {fmt(v / shape(fam, p, M))} x shape' for M, v in nz)})" if nz else "")
                 + "; elsewhere P(2M) = 1 (the whole DAG is one 2M-partition class) and the bound is 0.")
say(*lines)"""),
]

# ------------------------------------------------------------------ 5. the partial-computation game

PARTIAL = [
    ("md", """
## Grids

Each family's small instance, in three games (docs/definitions.md sections 2 and 2.1): the **partial** game on the
DAG with every sum one node (`sums=node`, aggregated one in-edge at a time in any order) and on the family's binary
build, and the standard games **recompute** and **oneshot** on the binary build. Exact optima: the partial game's
exact search (`brute`), CP-SAT for the standard games; an unproven value is shown as `<=U` with the solver's
proven bound. `FAST` keeps the instances whose searches finish in a few seconds."""),
    ("code", """
from spartition.study.tables import render_table

# (label, family, parameters, the parameters of its sums-as-nodes build or None, memories)
if FAST:
    SMALL = [("fft k=1", "fft", {"k": 1}, None, (2, 3)),
             ("reduction k=4 tree", "reduction", {"k": 4, "shape": "tree"}, None, (2, 3, 4)),
             ("matmul 2x3x1", "matmul", {"a": 2, "b": 3, "c": 1}, {"sums": "node"}, (3, 4, 5))]
    TIME_LIMIT = 10.0
    APPROX_GRID = [(16, 4, 2, (24, 32, 48))]
else:
    SMALL = [("fft k=2", "fft", {"k": 2}, None, (3, 4, 5, 6)),
             ("reduction k=4 tree", "reduction", {"k": 4, "shape": "tree"}, None, (2, 3, 4)),
             ("matmul 2x2x2", "matmul", {"a": 2, "b": 2, "c": 2}, {"sums": "node"}, (3, 4, 5, 6, 8)),
             ("matmul 2x3x1", "matmul", {"a": 2, "b": 3, "c": 1}, {"sums": "node"}, (3, 4, 5)),
             ("attention-forward n=2 d=1", "attention-forward", {"n": 2, "d": 1}, {"sums": "node"}, (5, 6, 8)),
             ("approx-attention n=2 d=1 g=1", "approx-attention", {"n": 2, "d": 1, "g": 1}, {"sums": "node"},
              (3, 4, 5, 6))]
    TIME_LIMIT = 60.0
    APPROX_GRID = [(16, 4, 2, (24, 32, 48, 64, 96)), (16, 6, 2, (24, 32, 48, 64, 96, 128)),
                   (32, 6, 2, (24, 48, 96, 128)), (16, 6, 3, (24, 48, 96, 200))]


def exact_cell(row):
    \"\"\"(text, proven value or None) of a study row's exact result.\"\"\"
    e = next(iter(row.exact.values()), None)
    if e is None or e.value is None:
        return "-", None
    if row.optimum is not None:
        return fmt(row.optimum), row.optimum
    return f"<={fmt(e.value)} (>={fmt(e.bound)})" if e.bound is not None else f"<={fmt(e.value)}", None"""),
    ("md", """
## The partial optimum against the standard optima

One study per game and instance (stored, so a second run reads them back). The ratio is the partial optimum on
the binary build over the recompute optimum, where both are proven."""),
    ("code", """
table, ratios = [], {}
for label, fam, p, node_sums, Ms in SMALL:
    games = {"partial/sum": study(fam, {**p, **(node_sums or {})}, Ms, TIME_LIMIT, 1.0, variant="partial",
                                  exact=("brute",), algorithms=["greedy"]),
             "partial/bin": study(fam, p, Ms, TIME_LIMIT, 1.0, variant="partial", exact=("brute",),
                                  algorithms=["greedy"]),
             "recompute": study(fam, p, Ms, TIME_LIMIT, 1.0, variant="recompute", algorithms=["greedy"]),
             "oneshot": study(fam, p, Ms, TIME_LIMIT, 1.0, variant="oneshot", algorithms=["greedy"])}
    for k, M in enumerate(Ms):
        cells = {g: exact_cell(s.rows[k]) for g, s in games.items()}
        part, rec = cells["partial/bin"][1], cells["recompute"][1]
        ratio = part / rec if part is not None and rec else None
        if ratio is not None:
            ratios.setdefault(label, []).append((M, ratio))
        if node_sums is None:  # no sums parameter: the family's DAG is the only build
            cells["partial/sum"] = ("= bin", None)
        table.append([label, M, *(cells[g][0] for g in games), fmt(ratio, 2)])
display(Markdown(render_table(["instance", "M", "partial/sum", "partial/bin", "recompute", "oneshot",
                               "partial / recompute"], table, markdown=True)))

fig, ax = plt.subplots(figsize=(8, 4))
for k, (label, pts) in enumerate(ratios.items()):
    ax.plot([M for M, _ in pts], [r for _, r in pts], "-", marker="osD^v<>"[k % 7], label=label)
ax.axhline(1.0, color="0.5", ls=":", lw=1)
ax.axhline(0.9, color="tab:red", ls="--", lw=1, label="10% saved")
ax.set(xlabel="fast memory M", ylabel="partial optimum / recompute optimum",
       title="What partial computation saves (proven optima only)")
ax.legend(fontsize=7)
show(fig, "partial_ratio")"""),
    ("md", """
## Approximate attention: the grouped tilings against the `lex` summation tree

Papp, Sobczyk & Zouzias's Key Lemma 3.2 and Lemma 3.3 group U1's columns, which a fixed binary summation tree
allows only if the groups are sub-trees; the tool builds each on the DAG whose sums run in its own order
(`grouped-w`), the other tilings on `lex`. Both are schedules of the **standard (recompute) game**: where their
output has several column blocks (every Case III row here) the grouped tilings regenerate U1 entries, which the
one-shot partial game forbids, so they have no partial-game schedule there.
In the partial game with sums as nodes every order is allowed, so the best grouped tiling is what the partial
model would let a lex-built tree gain."""),
    ("code", """
from spartition.core.game import replay
from spartition.core.registry import algorithm
from spartition.errors import SpartitionError
from spartition.families.approx_attention.formulas import approx_case
from spartition.families.approx_attention.schedules import dag_for

TILINGS = ["approx-case-i", "approx-lemma-3.1", "approx-tiled", "approx-key-lemma", "approx-lemma-3.3"]
grouping = []
for n, d, g, Ms in APPROX_GRID:
    for M in Ms:
        best = {}
        for name in TILINGS:
            try:
                G = dag_for(name, M, n, d, g)
                io = replay(G, algorithm(name).schedule(G, M, "recompute")).io
            except SpartitionError:
                continue  # the tiling does not fit this M
            order = "lex" if G.graph["params"]["order"] == "lex" else "grouped"
            if io < best.get(order, (math.inf,))[0]:
                best[order] = (io, name)
        if "lex" in best and "grouped" in best:
            case = approx_case({"n": n, "d": d, "g": g, "r": math.comb(d + g, g)}, M)
            grouping.append((n, d, g, M, case, *best["lex"], *best["grouped"]))
display(Markdown(render_table(
    ["instance", "M", "case", "best lex tiling", "best grouped tiling", "grouped / lex"],
    [[f"n={n} d={d} g={g}", M, case, f"{lex} ({ln})", f"{grp} ({gn})", fmt(grp / lex, 2)]
     for n, d, g, M, case, lex, ln, grp, gn in grouping], markdown=True)))"""),
    ("code", """
lines = ["### Findings", ""]
proven = [(label, M, r) for label, pts in ratios.items() for M, r in pts]
saving = [(label, M, r) for label, M, r in proven if r < 0.9]
above = [(label, M) for label, M, r in proven if r > 1]
lines.append(f"- Partial / recompute optimum over {len(proven)} proven pairs: {span([r for _, _, r in proven], 2)}; "
             f"above 1 at {len(above)} of them" + (f" ({above})" if above else "")
             + ": the partial game needs two values red at a time, the standard one all operands and the result.")
if saving:
    lines.append("- Partial computation saves more than 10% at " +
                 ", ".join(f"{label} M={M} ({fmt(r, 2)})" for label, M, r in saving) + ".")
lines.append("- The paper's claim that the partial game keeps the standard bounds for matmul, FFT and FlashAttention "
             "is asymptotic: these constant-size gaps neither confirm nor refute it.")
if grouping:
    worse = [row for row in grouping if row[7] > row[5]]
    lines.append(f"- Approximate attention: at {len(grouping)} (instance, M) pairs where both fit, the best grouped "
                 f"tiling costs {span([row[7] / row[5] for row in grouping], 2)} x the best lex tiling "
                 f"(worse at {len(worse)}): at these sizes grouping U1's columns saves nothing against `lex`.")
say(*lines)"""),
]

NOTEBOOKS = {
    "forward_attention": (
        "Forward attention: exact I/O, bounds and FlashAttention",
        "The exact optimal I/O of the attention-forward DAG, the computed Hong-Kung and capacity lower bounds, "
        "FlashAttention, Saha-Ye square tiling and the greedy baseline against the fast-memory size M for small "
        "n, d; then the replayed algorithms against the Saha-Ye formulas for larger n, d, and where FlashAttention "
        "overtakes square tiling relative to M = d^2. Reference: Saha & Ye, *I/O Complexity of Attention, or How "
        "Optimal is FlashAttention?* (ICML 2024).",
        FORWARD,
    ),
    "backward_attention": (
        "Backward attention: the weight gradient and the flash-form backward",
        "The same study for the backward passes: the weight gradient of Li et al. with their small-cache "
        "Algorithm 6, and the flash-form backward with FlashAttention's backward pass; exact optima, computed "
        "bounds and the greedy baseline for small n, d, and the replayed algorithms against the Li et al. "
        "formulas for larger n, d. Reference: Li, Liang, Shi, Song, Yue, Zhang, *On Fine-Grained I/O Complexity "
        "of Attention Backward Passes* (arXiv 2410.09397), Theorem 1.1.",
        BACKWARD,
    ),
    "approximate_attention": (
        "Approximate attention: Papp-Sobczyk-Zouzias Cases I-IV",
        "The four published algorithms for polynomial-method approximate attention against the bounds stated for "
        "each case, over the degree g and the memory M, and the measured class capacity against the per-class "
        "count in the proof of Key Lemma 3.2. Reference: Papp, Sobczyk, Zouzias, *Approaching I/O-optimality for "
        "Approximate Attention* (arXiv 2605.23751).",
        APPROX,
    ),
    "classic_kernels": (
        "Classic kernels: matrix product and FFT",
        "Exact optimal I/O and computed Hong-Kung bounds of the matrix product and the FFT butterfly against the "
        "classic shapes n^3 / sqrt(M) and N log N / log M, and what the constants look like at small sizes. "
        "Reference: Hong & Kung, *I/O complexity: the red-blue pebble game* (STOC 1981).",
        CLASSIC,
    ),
    "partial_game": (
        "The partial-computation game: what aggregating one edge at a time saves",
        "Exact optima of the partial-computation red-blue pebble game (sums aggregated one in-edge at a time) against "
        "the standard games' on each family's small instance, and, for approximate attention, the grouped tilings "
        "against the lex summation tree. References: Papp, Sobczyk & Yzelman, *The impact of partial computations on "
        "the red-blue pebble game* (SPAA 2025); Papp, Sobczyk, Zouzias, *Approaching I/O-optimality for Approximate "
        "Attention*, last section.",
        PARTIAL,
    ),
}
