"""S-partitions: the certificate and its checker, the minimum partition and
the class capacity by CP-SAT, the matrix-product decomposition, brute force,
and the I/O lower bounds they yield."""
