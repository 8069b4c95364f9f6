# alloclab — the user's entry. Every target first makes sure the machine has
# what it needs (scripts/bootstrap), then drives CMake/CTest/pytest.
#
#   make          build the release preset
#   make test     build release, asan and tsan presets, run every test (ctest + pytest)
#   make bench    run the Google Benchmark programs, write out/bench/*.json
#   make study    run the study (./alloclab study), report in out/study/
#   make real     build the real programs Debian ships without their allocator (scripts/real-programs)
#   make install PREFIX=/usr/local

PREFIX ?= /usr/local
PYTEST  = .venv/bin/python -m pytest
# The Python tests run in PYTEST_JOBS processes (pytest-xdist), a whole test file to one process
# at a time, so a file's module fixtures (the quick study, the wheel build) are made once; files
# are handed out in collection order, the longest first (tests/python/conftest.py, LONG_FILES).
PYTEST_JOBS ?= 2

.PHONY: all bootstrap real build build-asan build-asan-unit build-tsan test test-release test-asan test-tsan test-python bench study install clean

all: build

bootstrap:
	@scripts/bootstrap --quiet

real: bootstrap
	@scripts/real-programs --quiet || echo "make: the study will leave out what scripts/real-programs could not build"

build: bootstrap
	@cmake --preset release >/dev/null
	@cmake --build --preset release

build-asan: bootstrap
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan

# scripts/real-programs (a download, then one large C file compiled by one process) runs in
# the background from the start, beside the preset builds and their tests, instead of alone
# before the Python tests; test-python then finds it built (or, where it failed, runs it again
# and says what is missing, as `make real` does).
test: bootstrap
	@mkdir -p build
	@scripts/real-programs --quiet >build/real-programs.log 2>&1 & real=$$!; \
	  $(MAKE) --no-print-directory test-release test-asan test-tsan; status=$$?; \
	  wait $$real; [ $$status = 0 ] || exit $$status; $(MAKE) --no-print-directory test-python

test-release: build
	ctest --preset release

# The asan tests `make test` runs (label unit) use only the programs of these folders (the
# build preset asan-unit); the lab's shims and libvam.so are built by `make build-asan`.
build-asan-unit: bootstrap
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan-unit

test-asan: build-asan-unit
	ctest --preset asan -L unit

# ThreadSanitizer: only libvam's threaded tests (label tsan), small.
build-tsan: bootstrap
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan

test-tsan: build-tsan
	ctest --preset tsan

test-python: build real
	@if [ -d tests/python ]; then $(PYTEST) -q -n $(PYTEST_JOBS) --dist loadfile --no-loadscope-reorder tests/python; else echo "no python tests yet"; fi

bench: build
	@mkdir -p out/bench
	@for b in build/release/bench/bench_*; do \
	  [ -x "$$b" ] || continue; \
	  echo "== $$b"; \
	  "$$b" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
	        --benchmark_out=out/bench/$$(basename $$b).json --benchmark_out_format=json || exit 1; \
	done
	@scripts/bench_ratios out/bench/bench_reap.json

study: build real
	./alloclab study $(STUDY_ARGS)

install: build
	cmake --install build/release --prefix $(PREFIX)

clean:
	rm -rf build out
