"""Benchmarks (``make bench``): figures for the README, never pass/fail timing tests."""
