"""helpers: everything the activation-functions book computes lives here.

Notebooks only call into this package; tests and benchmarks import the same code.
Public API (kept stable; helpers/README.md):

* ``helpers.activations``: ``lambda_gelu``, ``LambdaGELU``, ``srelu``, ``SReLU``, ``FlexAct``,
  ``get_activation``
* ``helpers.core.models.replace_activations``
* ``helpers.core.results_cache.run_or_load``
"""

__version__ = "0.1.0"
