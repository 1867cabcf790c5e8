"""The documentation site (docs/, mkdocs.yml): it builds with ``mkdocs build --strict`` (a dead
link or anchor, or a page missing from the nav, fails), and docs/configuration.md names every
config the adapter parses. The keys are read from the code, so a new config that is not
documented fails here."""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION = ROOT / "docs" / "configuration.md"
ADAPTER = ROOT / "dbt" / "adapters" / "spark_ivm"


def _get_keys(path: Path, receivers: tuple[str, ...]) -> set[str]:
    """The string literals passed first to ``<receiver>.get(...)`` or to a bare ``get(...)`` (one
    of ``receivers``: the names of the mappings or helpers that read configs) in ``path``."""
    keys = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and isinstance(func.value, ast.Name):
            name = func.value.id
        elif isinstance(func, ast.Name) and func.id == "get":
            name = "get"
        else:
            continue
        if name in receivers:
            keys.add(node.args[0].value)
    return keys


def _tuple_constant(path: Path, name: str) -> set[str]:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return {e.value for e in node.value.elts if isinstance(e, ast.Constant)}  # type: ignore[attr-defined]
    raise AssertionError(f"{name} not found in {path}")


def model_config_keys() -> set[str]:
    """Every model config the adapter reads: the ``ivm_*`` configs and ``tblproperties``
    (refresh/config.py), the dbt-spark layout configs it warns about, the configs impl.py reads
    for the file_format default, and those the materialization macros read."""
    config_py = ADAPTER / "refresh" / "config.py"
    keys = _get_keys(config_py, ("config", "get"))
    keys |= _tuple_constant(config_py, "IGNORED_LAYOUT_CONFIGS")
    keys |= _get_keys(ADAPTER / "impl.py", ("node_config",))
    for macro in (ROOT / "macros").rglob("*.sql"):
        keys |= set(re.findall(r"config\.get\(\s*['\"]([A-Za-z_]+)['\"]", macro.read_text()))
    return keys


def source_meta_keys() -> set[str]:
    """The keys of a source's ``meta.ivm`` (ivm_inputs.py)."""
    return _get_keys(ADAPTER / "ivm_inputs.py", ("ivm",))


def profile_fields() -> set[str]:
    """Every field of the profile: the credentials dataclass, dbt-spark's fields included."""
    from dbt.adapters.spark_ivm.connections import SparkIvmCredentials

    return {f.name for f in dataclasses.fields(SparkIvmCredentials)}


def environment_variables() -> set[str]:
    from dbt.adapters.spark_ivm.refresh import config

    return {config.FAULT_ENV, config.STALL_ENV}


def documented() -> set[str]:
    """The names docs/configuration.md writes as code (in backquotes)."""
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", CONFIGURATION.read_text()))


def test_the_keys_are_found_in_the_code():
    # guards the parsing above: were it to find nothing, the documentation check would pass vacuously
    assert {"ivm_policy", "ivm_lock", "ivm_lock_timeout", "ivm_spark_conf", "tblproperties",
            "ivm_publish_changes", "partition_by", "file_format", "on_schema_change"} <= model_config_keys()
    assert {"changes", "base"} <= source_meta_keys()
    assert {"method", "session_dir", "poll_interval", "host", "schema", "server_side_parameters"} <= profile_fields()


@pytest.mark.parametrize("kind, keys", [
    ("model config", model_config_keys),
    ("source meta key", source_meta_keys),
    ("profile field", profile_fields),
    ("environment variable", environment_variables),
])
def test_every_config_is_documented(kind, keys):
    missing = sorted(keys() - documented())
    assert not missing, f"docs/configuration.md does not document the {kind}(s) {', '.join(missing)}"


def test_mkdocs_builds_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()
