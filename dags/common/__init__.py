"""What several kernels share: the papers' source tags and the segment-count programs."""
