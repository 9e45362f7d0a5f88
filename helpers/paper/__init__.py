"""The papers' reported numbers as data, so tables can show them beside ours.

One module per source document. Numbers here are *what the paper says*, typed once from
the text in ``shared/papers/``; they are never used as our results.
"""
