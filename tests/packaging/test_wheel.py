"""Build the wheel, install it into a fresh venv and run dbt with it.

Proves that the installed package (not the source tree) carries the macros, ivm_core and the
adapter plugin. Dependencies come from the package registry; pip's cache makes it fast.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.packaging

SOURCES = ("pyproject.toml", "README.md", "LICENSE", "dbt", "ivm_core", "macros")
NAMESPACE_INITS = ("dbt/__init__.py", "dbt/adapters/__init__.py", "dbt/include/__init__.py")


def _run(cmd, timeout, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed ({proc.returncode})\n"
        f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Build from a copy so that build/ and *.egg-info never land in the working tree.
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(
                path,
                src / name,
                symlinks=True,  # keep dbt/include/spark_ivm/macros -> ../../../macros
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
        elif path.exists():
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)], timeout=300)
    wheels = list(out.glob("dbt_spark_ivm-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_contents(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        macro_files = [
            n
            for n in names
            if n.startswith("dbt/include/spark_ivm/macros/") and n.endswith(".sql")
        ]
        assert macro_files, names
        # real files, not a symlink entry
        for n in macro_files:
            assert zf.getinfo(n).file_size > 0, n
        assert "dbt/include/spark_ivm/dbt_project.yml" in names
        assert "dbt/include/spark_ivm/__init__.py" in names
        assert "dbt/adapters/spark_ivm/__init__.py" in names
        assert any(n.startswith("ivm_core/") and n.endswith(".py") for n in names), names
        for ns_init in NAMESPACE_INITS:
            assert ns_init not in names, f"{ns_init} would break the shared dbt namespace"
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = zf.read(metadata).decode()
    assert "Requires-Dist: snowpark-connect-deps-iceberg==1.0.2" in meta
    assert "Requires-Dist: dbt-spark[session]==1.11.0" in meta


def test_installed_wheel_runs_dbt(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], timeout=120)
    py = venv / "bin" / "python"
    _run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        timeout=600,
    )
    dbt = venv / "bin" / "dbt"

    project = tmp_path / "proj"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: wheel_check\nversion: '1.0'\nconfig-version: 2\nprofile: wheel_check\n"
    )
    session_dir = tmp_path / "spark_state"
    (project / "profiles.yml").write_text(
        textwrap.dedent(
            f"""\
            wheel_check:
              target: local
              outputs:
                local:
                  type: spark_ivm
                  method: session
                  schema: wheel_check
                  session_dir: {session_dir}
            """
        )
    )
    (project / "models" / "ice.sql").write_text(
        "{{ config(materialized='table') }} select 1 as id"
    )
    # dropped and re-created on every run: needs the PURGE macro shipped in the wheel
    (project / "models" / "par.sql").write_text(
        "{{ config(materialized='table', file_format='parquet') }} select 2 as id"
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "DBT_PROFILES_DIR", "DBT_LOG_PATH", "VIRTUAL_ENV")
    }
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    common = ["--project-dir", str(project), "--profiles-dir", str(project)]

    # the adapter is imported from the venv, not from the source tree
    where = _run(
        [str(py), "-c", "import dbt.include.spark_ivm as p; print(p.PACKAGE_PATH)"],
        timeout=60,
        cwd=cwd,
        env=env,
    ).stdout.strip()
    assert where.startswith(str(venv)), where
    assert os.path.isdir(os.path.join(where, "macros"))
    assert not os.path.islink(os.path.join(where, "macros"))

    debug = _run([str(dbt), "debug", *common], timeout=300, cwd=cwd, env=env)
    assert "adapter type: spark_ivm" in debug.stdout
    assert "All checks passed" in debug.stdout
    # what the embedded session runs on, from the installed wheel's dependencies
    assert f"session_dir: {session_dir}" in debug.stdout
    assert "iceberg_jar: " in debug.stdout and "iceberg-spark-runtime-3.5_2.12-" in debug.stdout
    assert "catalog: spark_catalog = org.apache.iceberg.spark.SparkSessionCatalog (type hive)" in debug.stdout

    for _ in range(2):
        _run([str(dbt), "run", *common], timeout=300, cwd=cwd, env=env)
    results = json.loads((project / "target" / "run_results.json").read_text())
    assert {r["status"] for r in results["results"]} == {"success"}
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    assert manifest["macros"]["macro.dbt_spark_ivm.spark_ivm__drop_relation"]
    # the second run dropped `par` through the shipped spark_ivm__drop_relation
    assert "drop table if exists wheel_check.par purge" in (project / "logs" / "dbt.log").read_text()

    assert (session_dir / "warehouse" / "wheel_check.db" / "ice" / "metadata").is_dir()
    assert (session_dir / "metastore_db").is_dir()
    assert list(cwd.iterdir()) == []
