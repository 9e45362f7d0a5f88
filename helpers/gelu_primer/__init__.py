"""The GELU primer (the "GELU Activation Function" post, book/references.bib ``gelublog``): exact vs tanh GELU, its
derivative, ReLU/ELU, recomputed symbolically.

See ``helpers/README.md`` for the modules of this package.
"""
