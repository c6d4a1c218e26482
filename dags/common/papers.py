"""The papers whose bounds the families register, by the short tag each formula cites.

Every :class:`~spartition.study.formulas.Formula` of the families names its
paper by one of these tags (``Formula.source``); :data:`SOURCES` gives the
full reference.
"""

from __future__ import annotations

__all__ = ["SY", "LI", "PSZ", "HK", "ITT", "REF", "SEGMENTS", "SOURCES", "PAPER_KEYS", "every_m"]

#: The parameters the attention papers' formulas are stated in: sequence length, head
#: dimension, rank and degree of the approximations, input and Q K^T sizes.
PAPER_KEYS = ("n", "d", "r", "g", "Z_input", "Z_QK")

SY = "Saha & Ye (ICML 2024)"
LI = "Li et al. (arXiv 2410.09397)"
PSZ = "Papp, Sobczyk & Zouzias (arXiv 2605.23751)"
REF = "docs/definitions.md section 2"
HK = "Hong & Kung (STOC 1981)"
ITT = "Irony, Toledo & Tiskin (JPDC 2004)"

#: Short source tag -> the full reference.
#: The project's own proven counts (docs/definitions.md, "Segment counts").
SEGMENTS = "spartition docs/definitions.md section 3, segment counts"

SOURCES = {
    SY: "Barna Saha, Christopher Ye. I/O Complexity of Attention, or How Optimal is FlashAttention? ICML 2024",
    LI: "Xiaoyu Li, Yingyu Liang, Zhenmei Shi, Zhao Song, Song Yue, Jiahao Zhang. "
    "On Fine-Grained I/O Complexity of Attention Backward Passes. arXiv 2410.09397",
    PSZ: "Pal Andras Papp, Aleksandros Sobczyk, Anastasios Zouzias. "
    "Approaching I/O-optimality for Approximate Attention. arXiv 2605.23751",
    HK: "Jia-Wei Hong, H. T. Kung. I/O complexity: the red-blue pebble game. STOC 1981",
    ITT: "Dror Irony, Sivan Toledo, Alexander Tiskin. Communication lower bounds for distributed-memory matrix "
    "multiplication. Journal of Parallel and Distributed Computing 64(9), 2004",
    REF: "spartition docs/definitions.md section 2: the trivial bound (inputs with a successor loaded, outputs stored)",
    SEGMENTS: "spartition docs/definitions.md section 3 (segment counts): Hong & Kung's segment argument (STOC 1981) "
    "with the Loomis-Whitney count (Irony, Toledo & Tiskin 2004), proved for attention in "
    "spartition.families.attention.forward.bounds",
}


def every_m(p: dict, M: int) -> bool:
    """The regime of a bound that holds at every parameter and memory size.

    Examples
    --------
    >>> every_m({"n": 1}, 1)
    True
    """
    return True
