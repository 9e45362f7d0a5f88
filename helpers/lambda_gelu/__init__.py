"""λ-GELU (arXiv 2603.21991, book/references.bib ``lambdagelu``): ``x·Φ(λx)`` with a learnable hardness λ per layer.

See ``helpers/README.md`` for the modules of this package.
"""
