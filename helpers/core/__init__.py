"""The core of the book's code: runtime, results cache, runs and training loop, models, data,
statistics, report vocabulary, generic tables and plots, the activation registry.

It knows nothing about any one paper: no module here imports a method package
(``helpers.lambda_gelu``, ``helpers.srelu``, ``helpers.flexact``, ``helpers.gelu_primer``); the methods
plug in through import strings (:mod:`helpers.core.registry`, :data:`helpers.core.runs.RUN_EXTENSIONS`).
``tests/test_architecture.py`` enforces it.
"""
