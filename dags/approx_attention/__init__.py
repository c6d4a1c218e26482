"""Approximate attention by the polynomial method (Papp, Sobczyk & Zouzias): DAG, tilings, formulas, claims."""
