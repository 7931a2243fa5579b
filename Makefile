# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# Confirmation e-mails and the exports' links name the address `make run` serves
# (an MICA_SITE_URL set in the environment wins).
MICA_SITE_URL ?= http://127.0.0.1:$(PORT)
PYTEST_ARGS ?=
# One pytest process a core, each test file whole in one of them (so a module's shared
# fixture, such as the write census's database, is set up once). With MICA_REDIS_URL set,
# the broker tests (-m broker) need a run of their own, one at a time, as .ci/run does.
PYTEST_PARALLEL ?= -n auto --dist loadfile

.PHONY: run test lint format messages serve-setup clean mutation docs

$(VENV)/.base-installed: requirements/base.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/base.lock
	touch $@

$(VENV)/.test-installed: requirements/test.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/test.lock
	touch $@ $(VENV)/.base-installed

# mica_verify, the verifier anyone can run (mica_verify/), installed editable so that
# `.venv/bin/python -m mica_verify` runs this checkout's code. Offline: its one dependency
# (cryptography) comes from the lock files, and it builds with the environment's own
# setuptools and wheel; an environment without them (a fresh venv has no wheel, and from
# Python 3.12 no setuptools) gets the path entry an editable install would write.
$(VENV)/.verify-installed: $(VENV)/.base-installed mica_verify/pyproject.toml
	if $(PY) -c 'import setuptools, wheel' 2>/dev/null; then \
		$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --no-index -e ./mica_verify; \
	else \
		echo '$(CURDIR)/mica_verify' > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/mica_verify.pth"; \
	fi
	touch $@

# The manual (docs/, mkdocs.yml), built with the release where the portal serves it at
# /docs/ (build/manual, beside the code: a node with an empty var/ serves it too); rebuilt
# only when one of its files changed, so a restart with nothing new does not rebuild it.
DOCS_DIR ?= $(or $(MICA_DOCS_DIR),build/manual)
DOCS_SOURCES := mkdocs.yml $(shell find docs -type f 2>/dev/null)

$(DOCS_DIR).built: $(VENV)/.base-installed $(DOCS_SOURCES)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir '$(DOCS_DIR)'
	touch $@

docs: $(DOCS_DIR).built

# One process for the four steps (migrate, load_canonical_content, regenerate_exports
# --sync, bake_pages --sync): a restart with nothing to do starts Django once.
serve-setup: $(VENV)/.base-installed $(VENV)/.verify-installed $(DOCS_DIR).built
	MICA_SITE_URL='$(MICA_SITE_URL)' $(PY) manage.py serve_setup

# Installs, migrates, loads the canonical content, publishes the exports and the baked
# pages, and serves on 127.0.0.1:$(PORT), with a Celery worker and beat on the embedded
# broker under var/ (manage.py serve).
run: serve-setup
	MICA_SITE_URL='$(MICA_SITE_URL)' $(PY) manage.py serve --bind 127.0.0.1:$(PORT)

# Installs and runs the whole test suite.
test: $(VENV)/.test-installed $(VENV)/.verify-installed
	$(PY) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)

lint: $(VENV)/.test-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

format: $(VENV)/.test-installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Refresh and compile the Korean interface catalogue (needs GNU gettext).
messages: $(VENV)/.base-installed
	$(PY) manage.py makemessages -l ko --no-location --ignore='.venv/*' --ignore='var/*' --ignore='tests/*'
	cd locale && msgfmt --check -o ko/LC_MESSAGES/django.mo ko/LC_MESSAGES/django.po

clean:
	rm -rf $(VENV) var staticfiles build

# Mutation testing of the core rules (not part of CI: see the README for the last run),
# each module against its own tests (tools/mutation.py). MUTATION_TARGETS="scoring" or
# MUTATION_TARGETS=mica/scoring.py runs one of them.
MUTATION_MODULES = \
	mica/scoring.py \
	governance/gate.py \
	governance/gate_inputs.py \
	governance/aggregates.py \
	governance/sensitivity.py \
	submissions/ingest.py \
	submissions/models.py \
	submissions/append_only.py \
	markets/services.py \
	markets/workflows.py \
	mica/parsers.py
MUTATION_TARGETS ?= $(MUTATION_MODULES)
mutation: $(VENV)/.test-installed
	$(PY) tools/mutation.py $(MUTATION_TARGETS)
