"""The :class:`~spartition.core.algorithm.Algorithm` record, where the family modules have always imported it from.

The record is the engine's (:mod:`spartition.core.algorithm`, public in
:mod:`spartition.plugins`): a package of its own registers algorithms with
the same type as the built-ins.
"""

from spartition.core.algorithm import Algorithm

__all__ = ["Algorithm"]
