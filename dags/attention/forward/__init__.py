"""Attention forward (Saha & Ye): the DAG, its published schedules, its proven segment counts and symmetry."""
