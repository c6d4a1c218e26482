"""The classic kernels' one registration: their families, the blocked product, and the matmul and FFT bounds."""

from spartition.core.registry import Kernel
from spartition.families.classic.blocked import BLOCKED_MATMUL
from spartition.families.classic.dag import chain, fft, matmul, pyramid, random_dag, random_layered, reduction, stencil
from spartition.families.classic.formulas import FFT, MATMUL
from spartition.families.classic.matmul_chain import matmul_chain

__all__ = ["KERNEL"]

KERNEL = Kernel(
    name="classic",
    families={"chain": chain, "reduction": reduction, "matmul": matmul, "fft": fft, "pyramid": pyramid,
              "stencil": stencil, "random-layered": random_layered, "random-dag": random_dag,
              "matmul-chain": matmul_chain},
    algorithms=(BLOCKED_MATMUL,),
    formulas=(FFT, MATMUL),
)
