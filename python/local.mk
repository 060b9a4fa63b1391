# SPDX-License-Identifier: MIT
# The Python package `bakery` (ctypes over libbakery), its tests and its
# example.  Installed by the Debian package python3-bakery; `make check`
# runs it from the source tree against the library just built.
python_package = \
	python/bakery/__init__.py \
	python/bakery/_async.py \
	python/bakery/_handle.py \
	python/bakery/_native.py \
	python/bakery/_signals.py \
	python/bakery/errors.py \
	python/bakery/pathlock.py \
	python/bakery/region.py \
	python/bakery/status.py \
	python/bakery/py.typed

python_tests = \
	python/tests/support.py \
	python/tests/test_abi.py \
	python/tests/test_api.py \
	python/tests/test_biased.py \
	python/tests/test_async.py \
	python/tests/test_processes.py \
	python/tests/test_examples.py \
	python/tests/test_shared.py \
	python/tests/test_pathlock.py \
	python/tests/test_signals.py \
	python/tests/test_users.py

TESTS += python/test-python.sh
EXTRA_DIST += python/test-python.sh python/pyproject.toml $(python_package) $(python_tests)
