"""Root conftest, shared by every suite (unit, functional, packaging).

pytest only accepts `pytest_plugins` in a top-level conftest, so dbt-tests-adapter's fixture
plugin is registered here; it only defines (non-autouse) fixtures and starts nothing. The
Spark-specific fixtures (`dbt_profile_target`, the per-process session_dir) live in
tests/functional/conftest.py, so unit tests never start a JVM.
"""

pytest_plugins = ["dbt.tests.fixtures.project"]
