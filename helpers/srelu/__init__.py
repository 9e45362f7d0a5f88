"""S-ReLU (``shared/papers/s-relu.txt``): ReLU mollified by the Epanechnikov kernel of radius δ,
its theory, the image benchmarks and the DPO experiment.

See ``helpers/README.md`` for the modules of this package.
"""
