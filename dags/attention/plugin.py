"""Exact attention's one registration: three DAG families, eleven algorithms, formulas, claims, symmetry, the default study."""

from spartition.core.registry import Kernel
from spartition.families.attention.backward.dag import attention_backward_flash, attention_backward_weights
from spartition.families.attention.backward.flash import FLASH_BACKWARD
from spartition.families.attention.backward.li_small_cache import LI_SMALL_CACHE_BACKWARD
from spartition.families.attention.backward.materialised import MATERIALISED_BACKWARD
from spartition.families.attention.backward.small_memory import SMALL_MEMORY_BACKWARD
from spartition.families.attention.backward.tiled import TILED_BACKWARD
from spartition.families.attention.formulas import (
    ATTENTION_BACKWARD_FLASH,
    ATTENTION_BACKWARD_WEIGHTS,
    ATTENTION_FORWARD,
)
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.forward.flash import FLASH_FORWARD
from spartition.families.attention.forward.small_memory import SMALL_MEMORY_FORWARD
from spartition.families.attention.forward.square_tiling import SQUARE_TILING_FORWARD
from spartition.families.attention.forward.standard import STANDARD_FORWARD
from spartition.families.attention.forward.symmetry import symmetry_blocks
from spartition.families.attention.forward.tiled import ROW_SUMS_FIRST_FORWARD, TILED_FORWARD
from spartition.study.studies import StudySpec

__all__ = ["BUILTIN", "KERNEL", "li_claims", "partial_claims", "saha_ye_claims", "segment_claims"]

#: The README's main job: exact-attention forward with n = 2, d = 1 over its whole M range,
#: the CP-SAT optimum cross-checked by the exhaustive state search.
BUILTIN = StudySpec(
    family="attention-forward", params={"n": 2, "d": 1}, Ms=None, variant="oneshot",
    exact=("cpsat", "brute"), time_limit=60.0, bound_time_limit=20.0, workers=1,
)



# The claim sets look formulas up by name as they are built: built on first use, once the kernels are loaded.
def saha_ye_claims():
    """The claim set ``saha-ye`` (:mod:`spartition.families.attention.claims`)."""
    from spartition.families.attention.claims import SY_CLAIMS

    return SY_CLAIMS


def li_claims():
    """The claim set ``li`` (:mod:`spartition.families.attention.claims`)."""
    from spartition.families.attention.claims import LI_CLAIMS

    return LI_CLAIMS


def segment_claims():
    """The claim set ``segments`` (:mod:`spartition.families.attention.segment_claims`)."""
    from spartition.families.attention.segment_claims import SEGMENT_CLAIMS

    return SEGMENT_CLAIMS


def partial_claims():
    """The claim set ``partial`` (:mod:`spartition.families.attention.partial_claims`)."""
    from spartition.families.attention.partial_claims import PARTIAL_CLAIMS

    return PARTIAL_CLAIMS


KERNEL = Kernel(
    name="attention",
    families={"attention-forward": attention_forward, "attention-backward-weights": attention_backward_weights,
              "attention-backward-flash": attention_backward_flash},
    algorithms=(STANDARD_FORWARD, SQUARE_TILING_FORWARD, SMALL_MEMORY_FORWARD, FLASH_FORWARD, TILED_FORWARD,
                ROW_SUMS_FIRST_FORWARD, FLASH_BACKWARD,
                LI_SMALL_CACHE_BACKWARD, TILED_BACKWARD, MATERIALISED_BACKWARD, SMALL_MEMORY_BACKWARD),
    formulas=(ATTENTION_FORWARD, ATTENTION_BACKWARD_WEIGHTS, ATTENTION_BACKWARD_FLASH),
    claims={"saha-ye": saha_ye_claims, "li": li_claims, "segments": segment_claims, "partial": partial_claims},
    symmetry={"attention-forward": symmetry_blocks},
    studies={"default": BUILTIN},
)
