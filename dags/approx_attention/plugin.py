"""Approximate attention's one registration: its family, the four published tilings and the searched one, formulas, claims."""

from spartition.core.registry import Kernel
from spartition.families.approx_attention.dag import approx_attention
from spartition.families.approx_attention.formulas import APPROX_ATTENTION
from spartition.families.approx_attention.schedules import (
    APPROX_CASE_I,
    APPROX_KEY_LEMMA,
    APPROX_LEMMA_3_1,
    APPROX_LEMMA_3_3,
    APPROX_TILED,
)

__all__ = ["KERNEL", "psz_claims"]



def psz_claims():
    """The claim set ``psz`` (:mod:`spartition.families.approx_attention.claims`), built on first use: its
    claims look formulas up by name."""
    from spartition.families.approx_attention.claims import CLAIMS

    return CLAIMS


KERNEL = Kernel(
    name="approx-attention",
    families={"approx-attention": approx_attention},
    algorithms=(APPROX_CASE_I, APPROX_LEMMA_3_1, APPROX_KEY_LEMMA, APPROX_LEMMA_3_3, APPROX_TILED),
    formulas=(APPROX_ATTENTION,),
    claims={"psz": psz_claims},
)
