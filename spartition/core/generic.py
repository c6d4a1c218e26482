"""The engine's own kernel: a DAG read from a file (family ``file``) and the greedy schedule of any DAG."""

from spartition.core.dag import dag_file
from spartition.core.greedy import GREEDY
from spartition.core.registry import Kernel

__all__ = ["KERNEL"]

KERNEL = Kernel(name="generic", families={"file": dag_file}, algorithms=(GREEDY,))
