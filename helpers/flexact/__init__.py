"""Flex-Act ("Flex-Act: Why Learn when you can Pick?", book/references.bib ``flexact``): a Gumbel-softmax choice
among activations with a gradient-norm KL regulariser; the synthetic study and the CIFAR-10 protocol.

See ``helpers/README.md`` for the modules of this package.
"""
