"""Symbolic (sympy) derivations reused by the theory notebooks and by the tests."""
