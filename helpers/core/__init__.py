"""The core of the book's code: runtime, results cache, runs and training loop, models, data,
statistics, report vocabulary, generic tables and plots, the activation lookups.

No module here imports a method package; the core reads the methods' plain tables
(``helpers.methods``) through :func:`helpers.core.registry.catalog`, as ``tests/test_architecture.py`` enforces.
"""
