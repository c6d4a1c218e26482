"""Attention backward (Li et al.): the weight-gradient and FlashAttention-form DAGs, their schedules and counts."""
