"""Studies that set numbers side by side: tightness studies, the papers'
formulas, claims over grids, sweeps, the results store, tables, and the
pytest plugin."""
