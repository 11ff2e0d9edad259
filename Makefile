PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-numba test-pythons fuzz bench bench-plots bench-scaling bench-vmap bench-gradbench bench-manual docs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $@

demo: $(VENV)/.installed
	$(BIN)/python -m wengert.demo
	@echo; echo "== wengert show wengert/demo.py:seed000 --mode program"
	$(BIN)/wengert show wengert/demo.py:seed000 --mode program
	@echo; echo "== wengert show wengert/demo.py:seed000 --mode vjp"
	$(BIN)/wengert show wengert/demo.py:seed000 --mode vjp
	@echo; echo "== wengert show wengert/demo.py:damped --mode vjp (a loop with a branch)"
	$(BIN)/wengert show wengert/demo.py:damped --mode vjp --args "0.3, 5" --argnums 0 --graph damped.dot

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n 2 tests

# the numba backend's tests (marked `numba`; `make test` leaves them out: each
# compiles with numba: 2.5 minutes on 2 cores with an empty disk cache, 40 s with it)
test-numba: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[test,numba]"
	$(BIN)/python -m pytest -q -n 2 -m numba tests

# the suite on each Python from 3.11 to 3.13 found here, each in .venv-X.Y
# (missing ones are skipped and named); PYTHONS=3.12 for one, PYTHONS_DONE=X.Y
# for versions already tested by `make test`
PYTHONS ?= 3.11 3.12 3.13
test-pythons:
	PYTHONS_DONE="$(PYTHONS_DONE)" bash .ci/test_pythons.sh $(PYTHONS)

# the differential fuzzer at size: PROGRAMS random programs with control flow
PROGRAMS ?= 10000
fuzz: $(VENV)/.installed
	$(BIN)/python tests/fuzz_programs.py --programs $(PROGRAMS)

bench: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python -m bench.grad_bench
	$(BIN)/python -m bench.source_bench
	$(BIN)/python -m bench.checkpoint_bench
	$(BIN)/python -m bench.held_memory
	$(BIN)/python -m bench.vi_bench
	$(BIN)/python -m bench.fft_bench
	$(BIN)/python -m bench.scaling_bench
	$(BIN)/python -m bench.plots

# the Performance page's plots (docs/assets/perf/*.svg) from the figures in
# bench/measured.json; needs matplotlib (the docs extra), none of the peers
bench-plots: $(VENV)/.installed-docs
	$(BIN)/python -m bench.plots

# how grad's cost grows with n on element loops (issue 14); the one table of `make bench`
# that runs for minutes
bench-scaling: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python -m bench.scaling_bench

# per-example gradients and a batched Newton solve against NumPy by hand, JAX and PyTorch
# (issue 26; JAX and PyTorch where installed)
bench-vmap: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[bench,gradbench]"
	$(BIN)/python -m bench.vmap_bench

bench-gradbench: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[gradbench]"
	$(BIN)/python -m bench.gradbench_compare

# GradBench's C++ manual tool on the same inputs: GRADBENCH=path/to/a/gradbench/checkout;
# its figures go to MANUAL_JSON for `python -m bench.gradbench_compare --manual MANUAL_JSON`
MANUAL_JSON ?= gradbench-manual.json
bench-manual: $(VENV)/.installed
	$(BIN)/python -m bench.gradbench_manual $(GRADBENCH) --json $(MANUAL_JSON)

# the documentation site (mkdocs.yml, docs/) into site/: MkDocs with Material and
# mkdocstrings (the docs extra; not needed by make test); --strict: a broken link,
# a missing page or any other warning fails the build
$(VENV)/.installed-docs: pyproject.toml $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[docs]"
	touch $@

docs: $(VENV)/.installed-docs
	$(BIN)/python -m bench.plots
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .venv-3.* build site *.egg-info
