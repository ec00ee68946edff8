"""The benchmark harness behind ``benchmarks/run.py`` (one module per stage)."""
