"""The core of the book's code: runtime, results cache, runs and training loop, models, data,
statistics, report vocabulary, generic tables and plots, the activation registry.

No module here imports a method package; methods plug in through registries
(:mod:`helpers.core.registry`, :mod:`helpers.core.extensions`), as ``tests/test_architecture.py`` enforces.
"""
