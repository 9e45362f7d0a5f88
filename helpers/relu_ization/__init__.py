"""ReLU-ization (beyond the papers): what turning a smooth network into a ReLU network buys.

An app-layer package (it uses the λ-GELU and S-ReLU packages): :mod:`.protocol` (the
arms and configs), :mod:`.experiment` (the runner: train, swap, analyse), :mod:`.sparsity`,
:mod:`.quantize` (int8), :mod:`.regions` (linear regions), :mod:`.latency`, :mod:`.analysis`
(tables and statistics), :mod:`.claims`, :mod:`.plots`. Notebooks 40-41.
"""
