"""S-KWS benchmarks (paper Section 5)."""
