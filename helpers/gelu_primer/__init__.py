"""The GELU primer (``shared/papers/gelu-blog.txt``): exact vs tanh GELU, its derivative, ReLU/ELU,
recomputed symbolically.

See ``helpers/README.md`` for the modules of this package.
"""
