VENV ?= .venv
PY := $(VENV)/bin/python
QMLTEST := $(VENV)/bin/qmltest
MODEL ?= data/models/qcl-mnist01
# The extras that install on a plain machine (PennyLane, qiskit-ibm-runtime: their tests run, not skip).
EXTRAS ?= dev,pennylane,hardware,torch,docs
# torch is pinned to the CPU build that lies on these machines' disk (a bare `torch` pulls a CUDA
# build of several GB); `make install TORCH=` skips it (the torch hybrid tests then skip).
TORCH ?= torch==2.13.0

.PHONY: install demo test docs docs-screenshots test-slow test-browser lint bench-scale bench-peers bench-rerun bench-seam bench-engine bench-mutate-wide bench-coverage bench-mutate qcov-suites quanforge-suites fuzz-compare bench-noise bench-qml-mutation bench-attacks bench-parallel fuzz-cli reproduce reproduce-quick realfaults zoo clean bench-null-control bench-sequential

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY)
	$(if $(TORCH),$(PY) -m pip install --quiet '$(TORCH)')
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'

# The main job on the shipped default model and dataset.
demo: install
	$(QMLTEST) inspect $(MODEL)
	$(QMLTEST) evaluate $(MODEL) --data mnist --split test --shots 1000 --seed 1

test: install
	$(PY) -m ruff check qmltest cli tests benchmarks docs
	$(PY) -m pytest -q  # includes mkdocs build --strict (tests/test_docs.py)

# The documentation site: regenerate the reference pages from the code, then build into site/.
docs: install
	$(PY) docs/gen_ref.py
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# A screenshot of every page of the built site in Debian's headless chromium (docs/screenshots/).
docs-screenshots: docs
	$(PY) docs/screenshots.py

test-slow: install
	$(PY) -m pytest -q -m slow

# The HTML reports in a real headless browser (Debian's chromium; skips cleanly without one).
test-browser: install
	$(PY) -m pip install --quiet -e '.[browser]'
	$(PY) -m pytest -q -m browser

# Property-based bad-input run with many generated cases (FUZZ_EXAMPLES per property, six properties:
# 1700 gives over 10,000 cases); prints the count by outcome.
FUZZ_EXAMPLES ?= 1700
fuzz-cli: install
	QMLTEST_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -s -p no:cacheprovider tests/test_fuzz_cli.py

lint: install
	$(PY) -m ruff check qmltest cli tests benchmarks docs
	$(PY) -m ruff format --check qmltest cli tests benchmarks docs

bench-engine: install
	$(PY) benchmarks/engine.py

# 16-qubit QML mutate against the numpy-only path of BASE (issue 29's 10x target); ~6 min.
BASE ?= 5042fdb
bench-mutate-wide: install
	$(PY) benchmarks/mutate_wide.py --base $(BASE)

# The QML suite at 8, 12 and 16 qubits (16: a stratified sample) against Aer with batched binds, peak RSS.
bench-scale: install
	$(PY) benchmarks/scale.py

# The same mutants x inputs per width with qmltest, Aer batched binds, qulacs (1 thread, all cores)
# and PennyLane lightning.qubit, each in its own process (results/bench/peers.txt).
bench-peers: install
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/scale.py --peers 8,12,16,20

# A finished mutate run run again, and resumed after a kill, against the whole run (results/bench/rerun.txt).
bench-rerun: install
	$(PY) benchmarks/rerun.py

# Reports byte for byte and wall time against the commit before the simulator seam.
bench-seam: install
	$(PY) benchmarks/seam.py

bench-coverage: install
	$(PY) benchmarks/coverage.py

bench-mutate: install
	$(PY) benchmarks/mutate.py

# QuanForge Table 3 direction: HConf < Skewed/Small < Ori < LConf mutation scores (about 6 minutes).
quanforge-suites: install
	$(PY) benchmarks/quanforge_suites.py

# Tables I and II of the efficient-QML mutation paper -> runs/bench/qml-mutation.{csv,md}.
bench-qml-mutation: install
	$(PY) benchmarks/qml_mutation.py

# Wall time of a 285-mutant run at 1 and 2 workers (Dask), per-task overhead, efficiency.
bench-parallel: install
	$(PY) benchmarks/parallel.py 1 2

# Attack success rates beside QCov Table 14.
bench-attacks: install
	$(PY) benchmarks/attacks.py

# Accuracy under each shipped noise config beside noise-free, with time per input.
bench-noise: install
	$(PY) benchmarks/noise.py

# QCov Sec. 4.4: TSR of coverage-guided fuzzing vs random testing, 3 seeds (several minutes).
fuzz-compare: install
	$(PY) benchmarks/fuzz_compare.py

# QCov Table 3 direction: 50- vs 100-per-class suites on the shipped MNIST 0/1 models.
qcov-suites: install
	$(PY) benchmarks/qcov_suites.py

# The three papers' tables beside the published numbers -> results/<paper>/<table>.{md,csv,png},
# results/README.md (under an hour on 2 cores). reproduce-quick: reduced sizes, under 5 minutes.
reproduce: install
	$(PY) benchmarks/reproduce.py --out results

# results/realfaults/: do mutation scores predict real-fault detection? (issue 62; ~20 min on 2 cores)
realfaults: install
	$(PY) benchmarks/realfaults.py --out results/realfaults

reproduce-quick: install
	$(PY) benchmarks/reproduce.py --quick --out runs/reproduce-quick

# Retrain every shipped model (minutes); the artifacts are committed under data/models/.
zoo: install
	$(PY) -m qmltest.zoo.build_all data/models

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache

# Null-control false-kill rate of every kill criterion on every shipped model (200 copies each).
bench-null-control: install
	$(PY) benchmarks/null_control.py

# Shots of the sequential design against the fixed 20 x 1000 schedule, with the verdicts' agreement.
bench-sequential: install
	$(PY) benchmarks/sequential.py
