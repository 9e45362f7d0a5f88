"""Prediction churn (beyond the papers): do smooth activations make identical reruns agree?

Shamir & Lin (arXiv 2202.06499, after SmeLU's source, Shamir, Lin & Coviello, arXiv 2010.09931:
:data:`helpers.srelu.smelu.SMELU_REFERENCE`) report that networks trained identically except for
their nondeterminism disagree on many predictions, and that smooth activations cut that churn. None
of the book's four sources measures it. An app-level package: it uses the λ-GELU and S-ReLU packages.
"""
