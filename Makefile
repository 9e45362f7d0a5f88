# Thin wrapper over repro.sh (the README's commands), for people who type `make`.
.PHONY: book test benchmark clean
book:
	bash repro.sh book
test:
	bash repro.sh test
benchmark:
	.venv/bin/python benchmarks/activations.py
clean:
	rm -rf _build .cache
