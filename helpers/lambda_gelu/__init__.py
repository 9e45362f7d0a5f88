"""λ-GELU (``shared/papers/lambda-gelu.txt``): ``x·Φ(λx)`` with a learnable hardness λ per layer.

See ``helpers/README.md`` for the modules of this package.
"""
