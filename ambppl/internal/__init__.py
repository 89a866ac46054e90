"""Package-wide private helpers (input checks, label handling, limits, threads, reading fit
trees, writing an output folder in place).

Nothing here is public API: the names may change without notice. Every layer may import
this package; it imports nothing of ambppl above it.
"""
