"""Tools that manage the project rather than compute the book: retrain batches and their plans,
one row's rerun, the rows moved by new results, result verification, preflight, the torchrun
entry point, the cluster flags and the command lines' parser. They import ``helpers``; nothing in
``helpers`` imports them."""
