"""Benchmarks: the figures the issues name, measured in wall-clock time. Run with `make bench`."""
