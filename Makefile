# The two commands: `make demo` (the main job) and `make test` (everything CI checks).
SWIFT ?= swift
LINT_DIRS := $(wildcard Sources Tests Examples Benchmarks)

.PHONY: deps deps-build build demo test lint format bench docs

deps-build:
	@scripts/install-deps.sh build

deps:
	@scripts/install-deps.sh test

build: deps-build
	$(SWIFT) build

# The main job: publish real media (the files in ARGS, else the first camera and microphone, else
# the movie-hello.mp4 of forensics-samples-files, else the virtual devices) through the bundled
# server, play it back, record it, download the record and print a summary (exit 1 on failure).
# `make demo ARGS="my.mp4 --duration 5"`; `ARGS="--url ws://wcs:8080"` for a real WCS.
demo:
	scripts/install-deps.sh demo && $(SWIFT) build -c release --product wcs-demo && .build/release/wcs-demo $(ARGS)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) lint
	$(MAKE) docs

lint:
	$(SWIFT) format lint --strict --parallel -r $(LINT_DIRS)

format:
	$(SWIFT) format format --in-place --parallel -r $(LINT_DIRS)

# DocC documentation as static HTML in .build/docs; fails on any DocC warning and on article code
# that is not the compiled code of Tests/WCSApi2Tests/DocSnippets (scripts/check-doc-snippets.sh).
docs:
	SWIFT=$(SWIFT) scripts/build-docs.sh
