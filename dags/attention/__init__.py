"""Exact attention (Saha & Ye; Li et al.): the forward pass and both backward DAGs, their algorithms, bounds and claims.

``forward/`` and ``backward/`` hold each pass's DAG, schedules and proven
segment counts; the sparse masks, the tiling shared by the schedules, the
published formulas and the papers' claim sets sit beside them.
"""
