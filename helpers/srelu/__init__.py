"""S-ReLU ("Reshaping Activation Functions", book/references.bib ``srelu``): ReLU mollified by the Epanechnikov
kernel of radius δ, its theory, the image benchmarks and the DPO experiment.

See ``helpers/README.md`` for the modules of this package.
"""
