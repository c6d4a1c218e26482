"""Published I/O bounds of the classic kernels (Hong & Kung), registered for the ``fft`` and ``matmul`` families.

Hong & Kung state both bounds as orders of growth, so they are registered
with ``constants="asymptotic"``: the value is the bare expression, and a
study reads it as a shape (the ratio of an exact optimum to it is the
constant at that size), never as a bound a schedule must respect. The
trivial bounds (every input with a successor loaded once, every output
stored once) are explicit.

* FFT on ``N = 2^k`` points (the ``fft`` family): ``Theta(N log N / log M)``;
  the lower bound is Hong & Kung's FFT theorem, the upper the blocked FFT
  (passes of ``log2 M`` levels). Read for ``2 <= M <= N``: below, the
  logarithm vanishes; above, one load and one store per point suffice.
* Matrix product of an ``a x b`` by a ``b x c`` matrix (``matmul``):
  ``Theta(a b c / sqrt(M))``; Hong & Kung prove it for square matrices,
  Irony, Toledo & Tiskin for rectangular ones; blocked products with
  ``sqrt(M/3)``-sided tiles attain it. Read for ``M <= ab + bc + ac``
  (above, the trivial bound is attained).

References
----------
Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981),
the FFT and matrix-product theorems. Irony, Toledo & Tiskin,
"Communication lower bounds for distributed-memory matrix multiplication"
(JPDC 2004).
"""

from __future__ import annotations

import math

from spartition.families.common.papers import HK, ITT, REF, every_m
from spartition.families.classic.partial_bounds import MATMUL_PARTIAL_FORMULA
from spartition.families.classic.recompute_bounds import MATMUL_SEGMENT_FORMULA
from spartition.study.formulas import FamilyBounds, Formula

__all__ = ["CLASSIC_FORMULAS", "FFT", "MATMUL", "fft_paper_params", "matmul_paper_params"]


def fft_paper_params(params: dict) -> dict:
    """``N`` (points) and ``k`` (levels) of the ``fft`` family at builder ``params``.

    Examples
    --------
    >>> fft_paper_params({"k": 3})
    {'N': 8, 'k': 3}
    """
    k = int(params["k"])
    if k > FLOAT_BITS:
        # 2^k of k = 10^13 alone ran for minutes, for formulas that evaluate in floats
        raise ValueError(f"fft k={k}: N = 2^k points is beyond a float (k <= {FLOAT_BITS})")
    return {"N": 2**k, "k": k}


#: The largest exponent of 2 a float holds: N = 2^k beyond it makes every formula inf.
FLOAT_BITS = 1023


def matmul_paper_params(params: dict) -> dict:
    """``a, b, c`` of the ``matmul`` family (``a x b`` times ``b x c``) at builder ``params``.

    Examples
    --------
    >>> matmul_paper_params({"a": 2, "b": 3, "c": 4, "shape": "tree"})
    {'a': 2, 'b': 3, 'c': 4}
    """
    return {key: int(params[key]) for key in ("a", "b", "c")}


def _fft_shape(p, M):
    return p["N"] * p["k"] / math.log2(M) if M >= 2 else math.nan


def _fft_range(p, M):
    return 2 <= M <= p["N"]


def _matmul_shape(p, M):
    return p["a"] * p["b"] * p["c"] / math.sqrt(M)


def _matmul_range(p, M):
    return M <= p["a"] * p["b"] + p["b"] * p["c"] + p["a"] * p["c"]


CLASSIC_FORMULAS = (
    Formula(
        name="hk-fft-lower",
        families=("fft",),
        kind="lower",
        expression="N log2 N / log2 M",
        source=HK,
        where="the FFT theorem (Omega)",
        constants="asymptotic",
        regime="N = 2^k points; read for 2 <= M <= N",
        func=_fft_shape,
        holds=_fft_range,
    ),
    Formula(
        name="hk-fft-upper",
        families=("fft",),
        kind="upper",
        expression="N log2 N / log2 M",
        source=HK,
        where="blocked FFT, log2 M levels per pass (O)",
        constants="asymptotic",
        regime="N = 2^k points; read for 2 <= M <= N",
        func=_fft_shape,
        holds=_fft_range,
    ),
    Formula(
        name="trivial-fft",
        families=("fft",),
        kind="lower",
        expression="2 N",
        source=REF,
        where="inputs loaded, outputs stored",
        constants="explicit",
        regime="every M",
        func=lambda p, M: 2.0 * p["N"],
        holds=every_m,
    ),
    Formula(
        name="hk-matmul-lower",
        families=("matmul",),
        kind="lower",
        expression="a b c / sqrt(M)",
        source=ITT,
        where="matrix product, every summation order (Omega; Hong & Kung for a = b = c)",
        constants="asymptotic",
        regime="classical products (all a b c multiplications); read for M <= ab + bc + ac",
        func=_matmul_shape,
        holds=_matmul_range,
    ),
    Formula(
        name="hk-matmul-upper",
        families=("matmul",),
        kind="upper",
        expression="a b c / sqrt(M)",
        source=HK,
        where="blocked product, sqrt(M/3)-sided tiles (O)",
        constants="asymptotic",
        regime="read for M <= ab + bc + ac",
        func=_matmul_shape,
        holds=_matmul_range,
    ),
    Formula(
        name="trivial-matmul",
        families=("matmul",),
        kind="lower",
        expression="ab + bc + ac",
        source=REF,
        where="inputs A, B loaded, outputs C stored",
        constants="explicit",
        regime="every M",
        func=lambda p, M: float(p["a"] * p["b"] + p["b"] * p["c"] + p["a"] * p["c"]),
        holds=every_m,
    ),
    MATMUL_SEGMENT_FORMULA,
    MATMUL_PARTIAL_FORMULA,
)

#: The registrations (entry-point group ``spartition.formulas``).
FFT = FamilyBounds("fft", tuple(f for f in CLASSIC_FORMULAS if "fft" in f.families), fft_paper_params)
MATMUL = FamilyBounds("matmul", tuple(f for f in CLASSIC_FORMULAS if "matmul" in f.families), matmul_paper_params)
