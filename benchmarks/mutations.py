"""Mutation check: do ``spartition claims`` and the tests see a transcription error in the papers' formulas, counts and schedules?

Each mutation below is one realistic slip made while transcribing Papp, Sobczyk &
Zouzias, Saha & Ye or Li et al. into ``dags/``: a constant, an exponent, a
factor, a rounding. For each, the source tree (``git ls-files``, uncommitted
edits included) is copied to a temporary directory, the one edit is applied
(its text must occur exactly once), and in that copy

* ``python -m spartition claims SET --store FRESH`` runs (a fresh store, so no
  verdict of the unmutated code answers; exit 1 = killed), and
* ``python -m pytest TESTS --doctest-modules MODULE`` runs on the tests that
  cover the edited file (exit 1 = killed),

both with the copy first on ``sys.path`` (its ``spartition`` is the one
imported; the entry points of the installed distribution name modules, not
paths, so they resolve into the copy too). The table gives, per mutation,
``killed`` or ``survived`` for each side (``error`` for a crash, counted as
killed, ``timeout`` as survived) and the seconds it took; the last rows give
the kill scores. An unmutated copy is run first (``--no-baseline`` skips it):
a kill means something only if the baseline passes.

Run::

    python benchmarks/mutations.py                       # everything: about 40 min on 2 shared cores
    python benchmarks/mutations.py --list
    python benchmarks/mutations.py --only thm12-4e2,case-i-height --no-claims
    python benchmarks/mutations.py --only flash-bc-floor --timeout 240

Cost: ``spartition claims -x`` stops at the first failing claim (the claim sets check
their quick transcription claims first), so a killed mutation costs seconds and a
survivor a whole cold run (1-2.5 min); the tests of one mutation take 5-80 s
(test_formulas.py is the slow one). ``--no-claims`` / ``--no-tests`` and ``--only``
select; ``--strict`` runs ``spartition claims --strict``. One process at a time.

Measured (2 cores shared with other work, load 4-6, December 2026), ``--no-baseline``, all
37 mutations (18 from before the transcription checks of issue 23, 19 added with them):

* claims kill 36 of 37 (97%), the tests 32 of 37 (86%), either 37 of 37; 40 min in all.
  The claims' survivor was ``paper-w-m2`` (the schedule's w chosen with M/2: the Key
  Lemma tiling then does not fit, and its claims skip those instances), and
  ``kl32-upper-dg`` counted as killed by a crash (a ratio divided by the mutated formula,
  0 there); the tests' survivors were ``qk-weight``, ``li-la2-weight`` and
  ``b3-count-claim`` (test_claim_checks.py was not in their list) and ``thm14-lower-sqrt``,
  ``thm14-upper-d`` (no test evaluated a Case IV formula).
* After ``psz-kl32-w`` (the schedule's w against the formulas'), ratios that divide by the
  typed expression, a Case IV test in test_formulas.py and test_claim_checks.py in the
  claim-set mutations' lists, ``--only`` those 7 with the baseline (every claim set exits 0
  and every test selection passes on the unmutated copy): claims and tests each kill 7 of 7,
  1-6 s and 6-54 s each, 12 min with the baseline. Over the list: claims 37 of 37, tests
  37 of 37.
* Before issue 23's transcription checks, ``spartition claims`` killed 0 of the 5 of the
  first 18 tried (``qk-weight``, ``flash-bc-floor``, ``square-tiling-side``,
  ``li-la2-weight``, ``li-flash-upper``); it now kills all 18. The 19 added mutations were
  written beside the checks that kill them, so their score says less than the first 18's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    """One single-point edit of a file of the source tree.

    Attributes
    ----------
    name : str
        Short label.
    path : str
        File, relative to the repository root.
    old, new : str
        The text replaced (must occur exactly once) and its replacement.
    claimset : str
        The ``spartition claims`` set that states what the file encodes.
    tests : tuple of str
        Test files (or node ids) that cover the file.
    why : str
        The paper's text and the slip.
    """

    name: str
    path: str
    old: str
    new: str
    claimset: str
    tests: tuple
    why: str


MUTATIONS = (
    Mutation("thm12-4e2", "dags/approx_attention/formulas.py", '(4 * math.e**2) ** p["g"]', '(4 * math.e) ** p["g"]',
             "psz", ("tests/study/test_formulas.py",), "PSZ Theorem 1.2's upper bound (4e^2)^g written (4e)^g"),
    Mutation("thm13-g", "dags/approx_attention/formulas.py", 'p["n"] * p["r"] * p["d"] * p["g"] / M, _case("III"',
             'p["n"] * p["r"] * p["d"] / M, _case("III"', "psz", ("tests/study/test_formulas.py",),
             "PSZ Theorem 1.3's lower bound n r d g / M without its factor g"),
    Mutation("case-i-height", "dags/approx_attention/plans.py", "h0, b0 = M // (4 * d), min(D, M // (4 * r))",
             "h0, b0 = M // (2 * d), min(D, M // (4 * r))", "psz", ("tests/families/approx_attention/test_approx_schedules.py",),
             "PSZ Section 3.3: Case I's tile height M/4d written M/2d"),
    Mutation("lemma31-square", "dags/approx_attention/plans.py", "t = math.isqrt(M // 4)", "t = math.isqrt(M // 2)",
             "psz", ("tests/families/approx_attention/test_approx_schedules.py",), "PSZ Lemma 3.1: square tiles of side sqrt(M/4) written sqrt(M/2)"),
    Mutation("trivial-approx", "dags/approx_attention/formulas.py", 'lambda p, M: 4.0 * p["n"] * p["d"], lambda p, M: p["g"] >= 1',
             'lambda p, M: 3.0 * p["n"] * p["d"], lambda p, M: p["g"] >= 1', "psz", ("tests/study/test_formulas.py",),
             "the trivial bound 4nd (Q, K, V loaded, the output stored) written 3nd"),
    Mutation("kl32-capacity", "dags/approx_attention/formulas.py", "4 * M + 4 * M * M / w + M * M / (2 * w)",
             "4 * M + 4 * M * M / w + M * M / w", "psz", ("tests/study/test_formulas.py",),
             "PSZ Appendix A.2: the class capacity's M^2/(2w) term written M^2/w"),
    Mutation("lem33-subtile", "dags/approx_attention/plans.py", "s = M // (4 * g)", "s = M // (2 * g)", "psz",
             ("tests/families/approx_attention/test_approx_schedules.py",), "PSZ Appendix B.2: Lemma 3.3's sub-tile height M/4g written M/2g"),
    Mutation("kl32-lower-w", "dags/approx_attention/formulas.py", 'p["n"] * p["r"] * p["d"] * w / M', 'p["n"] * p["r"] * p["d"] / M',
             "psz", ("tests/study/test_formulas.py",), "PSZ Key Lemma 3.2's lower bound n r d w / M without its w"),
    Mutation("case-ii-threshold", "dags/approx_attention/formulas.py", "if M >= (4 * math.e) ** (g + 1):",
             "if M >= (4 * math.e) ** g:", "psz", ("tests/study/test_formulas.py",),
             "PSZ Case II from M >= (4e)^(g+1) written (4e)^g"),
    Mutation("case-iv-boundary", "dags/approx_attention/formulas.py", "if M <= g * g:", "if M < g * g:", "psz",
             ("tests/study/test_formulas.py",), "PSZ Case IV: g = Omega(sqrt M) read M <= g^2, written M < g^2"),
    Mutation("b1-delta", "dags/approx_attention/claims.py", "DELTA = math.sqrt(3) / 2", "DELTA = 3 / 4", "psz",
             ("tests/study/test_claim_statements.py", "tests/study/test_claim_checks.py"), "PSZ Lemma B.1: delta = sqrt(3)/2 written 3/4"),
    Mutation("w0-2e", "dags/approx_attention/claims.py", '(p["g"] * M ** (1 / (p["g"] + 1)) / (4 * math.e))',
             '(p["g"] * M ** (1 / (p["g"] + 1)) / (2 * math.e))', "psz", ("tests/study/test_claim_statements.py", "tests/study/test_claim_checks.py"),
             "PSZ Theorem 1.2: w0 = g M^(1/(g+1)) / (4e) written with 2e"),
    Mutation("qk-weight", "dags/attention/claims.py", '_derived_claim("sy-qk-lower", FWD, "QK", "S", lambda p: p["n"] ** 2 * p["d"],',
             '_derived_claim("sy-qk-lower", FWD, "QK", "S", lambda p: p["n"] ** 2 * p["d"] ** 2,', "saha-ye",
             ("tests/study/test_claim_statements.py", "tests/study/test_claim_checks.py"), "Saha & Ye: the n^2 d products of QK^T counted n^2 d^2"),
    Mutation("lw-count", "dags/attention/claims.py", "return 2 * X + X**1.5 / 2", "return 2 * X + X**1.5 / 4", "saha-ye",
             ("tests/study/test_claim_statements.py", "tests/study/test_claim_checks.py"), "the Loomis-Whitney one-class count 2X + X^(3/2)/2 with X^(3/2)/4"),
    Mutation("flash-bc-floor", "dags/attention/tiling.py", "bc = ceil_div(M, 4 * d)", "bc = M // (4 * d)", "saha-ye",
             ("tests/families/attention/test_attention_schedules.py",), "FlashAttention's B_c = ceil(M / 4d) written floor"),
    Mutation("square-tiling-side", "dags/attention/forward/square_tiling.py", "b = max(1, math.isqrt(M // 4))",
             "b = max(1, math.isqrt(M // 2))", "saha-ye", ("tests/families/attention/test_attention_schedules.py",),
             "Saha & Ye's square tiling: side sqrt(M/4) written sqrt(M/2)"),
    Mutation("li-la2-weight", "dags/attention/claims.py", '_derived_claim("li-la2-lower", BW, "LA2", "S", lambda p: p["n"] ** 2 * p["d"],',
             '_derived_claim("li-la2-lower", BW, "LA2", "S", lambda p: p["n"] ** 2 * p["d"] ** 2,', "li",
             ("tests/study/test_claim_statements.py", "tests/study/test_claim_checks.py"), "Li et al. Theorem 1.1: the n^2 d products of (A1 X) A2^T counted n^2 d^2"),
    Mutation("li-flash-upper", "dags/attention/formulas.py", 'p["n"] * p["d"] ** 3) / M', 'p["n"] * p["d"] ** 2) / M',
             "li", ("tests/study/test_formulas.py",), "Li et al.: FlashAttention backward's (n^2 d^2 + n d^3) / M with n d^2"),
    # Papp et al.: the other formulas, counts and tile sizes
    Mutation("thm12-lower-g", "dags/approx_attention/formulas.py",
             'p["n"] * p["r"] * p["d"] * p["g"] / M ** (p["g"] / (p["g"] + 1)), _case("II", whole=True)',
             'p["n"] * p["r"] * p["d"] / M ** (p["g"] / (p["g"] + 1)), _case("II", whole=True)', "psz",
             ("tests/study/test_formulas.py",), "PSZ Theorem 1.2's lower bound n r d g / M^(g/(g+1)) without its g"),
    Mutation("thm14-lower-sqrt", "dags/approx_attention/formulas.py",
             'lambda p, M: p["n"] * p["r"] * p["d"] / math.sqrt(M), _case("IV", d5g=True, whole=True)',
             'lambda p, M: p["n"] * p["r"] * p["d"] / M, _case("IV", d5g=True, whole=True)', "psz",
             ("tests/study/test_formulas.py",), "PSZ Theorem 1.4's lower bound n r d / sqrt(M) written n r d / M"),
    Mutation("thm14-upper-d", "dags/approx_attention/formulas.py", 'lambda p, M: p["n"] * p["r"] * p["d"] / math.sqrt(M), _case("IV"),',
             'lambda p, M: p["n"] * p["r"] / math.sqrt(M), _case("IV"),', "psz", ("tests/study/test_formulas.py",),
             "PSZ Theorem 1.4's upper bound n r d / sqrt(M) without its d"),
    Mutation("lem31-d2", "dags/approx_attention/formulas.py", "return min(n * r * d * d / M, n * r * d / math.sqrt(M))",
             "return min(n * r * d / M, n * r * d / math.sqrt(M))", "psz", ("tests/study/test_formulas.py",),
             "PSZ Lemma 3.1's n r d^2 / M written n r d / M"),
    Mutation("b3-capacity", "dags/approx_attention/formulas.py", 'return 4 * M + 8 * M * M / p["g"] + p["g"] * M',
             'return 4 * M + 4 * M * M / p["g"] + p["g"] * M', "psz", ("tests/study/test_formulas.py",),
             "PSZ Appendix B.3's class count 4M + 8M^2/g + gM with 4M^2/g"),
    Mutation("c-capacity", "dags/approx_attention/formulas.py", 'return 4 * M + 8 * M * M / p["g"] + 6 * M * math.sqrt(M)',
             'return 4 * M + 8 * M * M / p["g"] + 4 * M * math.sqrt(M)', "psz", ("tests/study/test_formulas.py",),
             "PSZ Appendix C's class count 4M + 8M^2/g + 6M sqrt(M) with 4M sqrt(M) (its 2M sqrt(M) part left out)"),
    Mutation("restricted-floor", "dags/approx_attention/formulas.py", "lo = math.ceil(g / 2)", "lo = math.floor(g / 2)", "psz",
             ("tests/study/test_formulas.py",), "PSZ Appendix B.3: monomials with at least g/2 variables, rounded down"),
    Mutation("kl32-width-m2", "dags/approx_attention/formulas.py", "if 4 * w * tau(w, g) <= M:\n            best = w\n        else:",
             "if 2 * w * tau(w, g) <= M:\n            best = w\n        else:", "psz", ("tests/study/test_formulas.py",),
             "PSZ Key Lemma 3.2: w tau(w) <= M/4 written M/2 (the formulas' w)"),
    Mutation("kl32-upper-dg", "dags/approx_attention/formulas.py", 'binom(p["d"] * p["g"] / w, p["g"])', 'binom(p["d"] / w, p["g"])',
             "psz", ("tests/study/test_formulas.py",), "PSZ Key Lemma 3.2's C(dg/w, g) written C(d/w, g)"),
    Mutation("lem33-upper-g", "dags/approx_attention/formulas.py", '(math.comb(p["d"], p["g"]) + 4 * p["r"] * p["g"] / M),',
             '(math.comb(p["d"], p["g"]) + 4 * p["r"] / M),', "psz", ("tests/study/test_formulas.py",),
             "PSZ Lemma 3.3's C(d, g) + 4rg/M written C(d, g) + 4r/M"),
    Mutation("key-lemma-height", "dags/approx_attention/plans.py", "M // (4 * W), b0, wmax, b0, tiles, tiles)",
             "M // (2 * W), b0, wmax, b0, tiles, tiles)", "psz", ("tests/families/approx_attention/test_approx_schedules.py",),
             "PSZ Appendix A.1: the output tiles' M/4w rows written M/2w"),
    Mutation("lemma31-strip", "dags/approx_attention/plans.py", "t = M // (4 * d)", "t = M // (2 * d)", "psz",
             ("tests/families/approx_attention/test_approx_schedules.py",), "PSZ Lemma 3.1: strips of M/4d rows written M/2d"),
    Mutation("paper-w-m2", "dags/approx_attention/plans.py", "if 4 * w * tau(w, g) <= M:", "if 2 * w * tau(w, g) <= M:", "psz",
             ("tests/families/approx_attention/test_approx_schedules.py",), "PSZ Key Lemma 3.2: the schedule's w with w tau(w) <= M/2"),
    Mutation("b3-count-claim", "dags/approx_attention/claims.py", 'return 4 * M + 8 * M * M / p["g"] + p["g"] * M',
             'return 4 * M + 8 * M * M / p["g"] + M', "psz", ("tests/study/test_claim_statements.py", "tests/study/test_claim_checks.py"),
             "PSZ Appendix B.3's count 4M + 8M^2/g + gM transcribed with M for gM in the claim set"),
    # Saha & Ye, Li et al.: the registered formulas
    Mutation("sy-min-sqrt", "dags/attention/formulas.py", "return min(n * n * d * d / M, n * n * d / math.sqrt(M))",
             "return min(n * n * d * d / M, n * n * d / M)", "saha-ye", ("tests/study/test_formulas.py",),
             "Saha & Ye's min(N^2 d^2/M, N^2 d/sqrt(M)) with N^2 d/M"),
    Mutation("sy-tiling-d", "dags/attention/formulas.py", 'lambda p, M: p["n"] ** 2 * p["d"] / math.sqrt(M), _small,',
             'lambda p, M: p["n"] ** 2 / math.sqrt(M), _small,', "saha-ye", ("tests/study/test_formulas.py",),
             "Saha & Ye's square tiling O(N^2 d / sqrt(M)) without its d"),
    Mutation("trivial-forward", "dags/attention/formulas.py", 'lambda p, M: 4.0 * p["n"] * p["d"], every_m,',
             'lambda p, M: 3.0 * p["n"] * p["d"], every_m,', "saha-ye", ("tests/study/test_formulas.py",),
             "the forward trivial bound 4nd (Q, K, V loaded, O stored) written 3nd"),
    Mutation("li-min-nd2", "dags/attention/formulas.py",
             "return min((n * n * d * d + n * d**3) / M, (n * n * d + n * d * d) / math.sqrt(M))",
             "return min((n * n * d * d + n * d**3) / M, (n * n * d + n * d) / math.sqrt(M))", "li",
             ("tests/study/test_formulas.py",), "Li et al. Theorem 1.1's (n^2 d + n d^2)/sqrt(M) with n d"),
    Mutation("li-alg6-sqrt", "dags/attention/formulas.py",
             'lambda p, M: (p["n"] ** 2 * p["d"] + p["n"] * p["d"] ** 2) / math.sqrt(M), _small,',
             'lambda p, M: (p["n"] ** 2 * p["d"] + p["n"] * p["d"] ** 2) / M, _small,', "li",
             ("tests/study/test_formulas.py",), "Li et al.'s Algorithm 6 O((n^2 d + n d^2)/sqrt(M)) divided by M"),
)


def copy_tree(dest: Path) -> Path:
    """Copy the files git tracks (as they are in the work tree, symlinks kept) to ``dest``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src, dst = ROOT / rel, dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        elif src.is_file():
            shutil.copy2(src, dst)
    return dest


def apply(tree: Path, mutation: Mutation) -> None:
    """Apply ``mutation`` in ``tree``; its ``old`` text must occur exactly once."""
    path = tree / mutation.path
    text = path.read_text()
    count = text.count(mutation.old)
    if count != 1:
        raise SystemExit(f"mutation {mutation.name}: {mutation.old!r} occurs {count} times in {mutation.path}")
    path.write_text(text.replace(mutation.old, mutation.new))


def _run(tree: Path, args: list, timeout: float) -> tuple[str, float]:
    """Run ``python ARGS`` in ``tree`` (its sources first on the path); ``("killed" | "survived" | ..., seconds)``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1",
           "SPARTITION_STORE": str(tree / "tests-store.sqlite")}
    t = time.perf_counter()
    try:
        rc = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t
    outcome = {0: "survived", 1: "killed"}.get(rc, f"error (exit {rc})")
    return outcome, time.perf_counter() - t


def run_claims(tree: Path, claimset: str, timeout: float, strict: bool = False) -> tuple[str, float]:
    """``spartition claims CLAIMSET`` (``--strict`` when asked) on a fresh store in ``tree``."""
    store = tree / f"claims-{time.monotonic_ns()}.sqlite"
    # -x: the exit status (all that is read) is known at the first failing claim; a survivor runs everything
    return _run(tree, ["-m", "spartition", "claims", claimset, "-x", "--store", str(store),
                       *(["--strict"] if strict else [])], timeout)


def doctest_target(path: str) -> list:
    """The pytest arguments that run the doctests of source file ``path``.

    The families' folder ``dags/`` refuses to be imported as ``dags`` (a
    collection error, exit 2, which is no kill): its modules' examples run
    in tests/test_family_doctests.py under their package name.

    Examples
    --------
    >>> doctest_target("dags/attention/tiling.py")
    ['tests/test_family_doctests.py::test_doctests[spartition.families.attention.tiling]']
    >>> doctest_target("spartition/study/claims.py")
    ['--doctest-modules', 'spartition/study/claims.py']
    """
    if path.startswith("dags/"):
        return [f"tests/test_family_doctests.py::test_doctests[spartition.families.{Path(path).stem}]"]
    return ["--doctest-modules", path]


def run_tests(tree: Path, mutation: Mutation, timeout: float) -> tuple[str, float]:
    """The tests covering ``mutation``'s file, and that module's doctests, in ``tree``."""
    return _run(tree, ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutation.tests,
                       *doctest_target(mutation.path)], timeout)


def _row(cells):
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def _killed(outcome):
    return outcome == "killed" or outcome.startswith("error")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="comma-separated mutation names")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--no-claims", action="store_true", help="do not run spartition claims")
    ap.add_argument("--no-tests", action="store_true", help="do not run the tests")
    ap.add_argument("--no-baseline", action="store_true", help="do not check the unmutated copy first")
    ap.add_argument("--strict", action="store_true", help="run spartition claims --strict")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per claims or test run (default 600)")
    args = ap.parse_args(argv)
    chosen = list(MUTATIONS)
    if args.only:
        names = args.only.split(",")
        unknown = sorted(set(names) - {m.name for m in MUTATIONS})
        if unknown:
            ap.error(f"unknown mutation(s) {', '.join(unknown)}; known: {', '.join(m.name for m in MUTATIONS)}")
        chosen = [m for m in MUTATIONS if m.name in names]
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:20} {m.path:28} {m.claimset:8} {m.why}")
        return 0
    for m in chosen:  # every edit applies before anything runs
        text = (ROOT / m.path).read_text()
        if text.count(m.old) != 1:
            ap.error(f"mutation {m.name}: its text occurs {text.count(m.old)} times in {m.path}")
    with tempfile.TemporaryDirectory(prefix="mutations-") as tmp:
        if not args.no_baseline:
            base = copy_tree(Path(tmp) / "baseline")
            bad = []
            # each claim set and each test selection once: the baseline is the same tree for all
            if not args.no_tests:
                for m in {(m.tests, m.path): m for m in chosen}.values():
                    if _killed(run_tests(base, m, args.timeout)[0]):
                        bad.append("tests " + " ".join(m.tests) + " " + " ".join(doctest_target(m.path)))
            if not args.no_claims:
                for cs in dict.fromkeys(m.claimset for m in chosen):
                    if _killed(run_claims(base, cs, args.timeout, args.strict)[0]):
                        bad.append(f"claims {cs}")
            if bad:
                print(f"baseline fails ({'; '.join(bad)}): fix that first", file=sys.stderr)
                return 1
            shutil.rmtree(base)
        _row(["mutation", "file", "slip", "claims", "s", "tests", "s"])
        _row(["---"] * 7)
        score = {"claims": [0, 0], "tests": [0, 0], "either": [0, 0]}
        for m in chosen:
            tree = copy_tree(Path(tmp) / m.name)
            apply(tree, m)
            c, ct = ("-", 0.0) if args.no_claims else run_claims(tree, m.claimset, args.timeout, args.strict)
            t, tt = ("-", 0.0) if args.no_tests else run_tests(tree, m, args.timeout)
            _row([m.name, m.path, m.why, c, f"{ct:.0f}", t, f"{tt:.0f}"])
            for side, outcome in (("claims", c), ("tests", t)):
                if outcome != "-":
                    score[side][1] += 1
                    score[side][0] += _killed(outcome)
            score["either"][1] += 1
            score["either"][0] += _killed(c) or _killed(t)
            shutil.rmtree(tree)
        print()
        for side, (killed, total) in score.items():
            if total:
                print(f"{side}: killed {killed} of {total} ({100 * killed / total:.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
