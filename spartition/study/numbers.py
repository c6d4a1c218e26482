"""How every table, report and message prints a number."""

from __future__ import annotations

import math

__all__ = ["format_number"]


def format_number(x, digits: int = 3, missing: str = "-") -> str:
    """An integer-valued number without a point, any other to ``digits`` significant digits.

    ``None`` and NaN print as ``missing``; infinities as ``inf`` and ``-inf``.

    Examples
    --------
    >>> format_number(24.0), format_number(2 / 3), format_number(2 / 3, 6), format_number(None)
    ('24', '0.667', '0.666667', '-')
    >>> format_number(float("inf")), format_number(float("nan"), missing="n/a")
    ('inf', 'n/a')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return missing
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return str(int(x)) if x.is_integer() else f"{x:.{digits}g}"
