"""Classic kernels: chains, reductions, matrix products, FFTs, pyramids, stencils, random DAGs, matrix chains."""
