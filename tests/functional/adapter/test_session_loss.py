"""A model that loses the embedded session's JVM fails alone, for real: in a `dbt build` of three
models, the middle one's SQL makes the driver JVM exit (``java_method('java.lang.System', 'exit',
1)``, run in a task of the CTAS); the build must go on in a new session (a new JVM) — the model
after it reads the table the first one wrote, and its data test passes — and run_results must say
that the middle model lost the session. ``dbt debug`` of the same project shows the driver heap the
session then runs with (the JVM's own max heap, read in the dbt log).

Both run as `dbt` processes of their own: killing the JVM of this pytest worker would end the
session every later test of the worker shares. PYSPARK_SUBMIT_ARGS (which the functional conftest
sets for the workers' JVMs, and which would win over the profile) is left out, so the session runs
with the adapter's default heap for this machine.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_ivm.connections import default_driver_memory, machine_memory

MODELS = {
    "m1_before.sql": "{{ config(materialized='table') }}\nselect 1 as id union all select 2 as id",
    # depends on m1 so that it runs after it; m3 (its sibling) runs after it: dbt orders the
    # nodes of one generation by name
    "m2_kills_the_jvm.sql": (
        "{{ config(materialized='table') }}\n-- depends_on: {{ ref('m1_before') }}\n"
        "select java_method('java.lang.System', 'exit', 1) as x"
    ),
    "m3_after.sql": "{{ config(materialized='table') }}\nselect count(*) as n from {{ ref('m1_before') }}",
}
# the model after the lost one read what the old JVM wrote: the test fails on any other count
M3_READS_M1 = "select n from {{ ref('m3_after') }} where n <> 2"


def _dbt() -> str:
    exe = Path(sys.executable).with_name("dbt")
    return str(exe) if exe.exists() else shutil.which("dbt") or "dbt"


def _project(root: Path) -> Path:
    project = root / "proj"
    (project / "models").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "dbt_project.yml").write_text(
        "name: session_loss\nversion: '1.0'\nconfig-version: 2\nprofile: session_loss\n"
    )
    (project / "profiles.yml").write_text(textwrap.dedent(f"""\
        session_loss:
          target: local
          outputs:
            local:
              type: spark_ivm
              method: session
              schema: analytics
              threads: 1
              session_dir: {root / 'session'}
        """))
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql)
    (project / "tests" / "m3_reads_m1.sql").write_text(M3_READS_M1)
    return project


def _run(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    for key in ("PYSPARK_SUBMIT_ARGS", "SPARK_DRIVER_MEMORY", "DBT_PROFILES_DIR", "DBT_LOG_PATH",
                "DBT_TARGET_PATH"):
        env.pop(key, None)
    return subprocess.run(
        [_dbt(), *args, "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )


def test_a_model_that_loses_the_jvm_fails_alone(tmp_path):
    project = _project(tmp_path)
    heap = default_driver_memory(machine_memory())

    started = time.monotonic()
    debug = _run(project, "debug")
    print(f"dbt debug: {time.monotonic() - started:.1f} s")
    assert debug.returncode == 0, debug.stdout[-4000:] + debug.stderr[-4000:]
    shown = re.search(r"driver_memory: (.*)", debug.stdout)
    assert shown, debug.stdout[-4000:]
    print("dbt debug shows driver_memory:", shown.group(1))
    assert shown.group(1).startswith(f"{heap} (default: half of the machine's ")

    started = time.monotonic()
    build = _run(project, "build")
    print(f"dbt build: {time.monotonic() - started:.1f} s")
    out = build.stdout + build.stderr
    assert build.returncode == 1, out[-6000:]  # one node failed

    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    by_node = {r["unique_id"].split(".")[-1]: r for r in results}
    for name, r in by_node.items():
        print(f"{name}: {r['status']} in {r['execution_time']:.2f} s: {(r['message'] or '')[:300]}")
    assert by_node["m1_before"]["status"] == "success"
    lost = by_node["m2_kills_the_jvm"]
    assert lost["status"] == "error"
    assert "The Spark session was lost while this statement ran" in lost["message"], lost["message"]
    assert "its JVM exited (exit code 1)" in lost["message"], lost["message"]
    assert "The models after this one run in a new Spark session" in lost["message"]
    assert f"driver heap was {heap}" in lost["message"], lost["message"]
    assert by_node["m3_after"]["status"] == "success", by_node["m3_after"]["message"]
    assert by_node["m3_reads_m1"]["status"] == "pass", by_node["m3_reads_m1"]["message"]

    log = (project / "logs" / "dbt.log").read_text()
    # two JVMs in the build, each with the heap `dbt debug` showed
    launched = re.findall(r"spark_ivm session ready in [\d.]+ s: JVM max heap (\S+)", log)
    assert launched[-2:] == [heap, heap], launched
    # the statement's error may reach Python before the JVM exited (its SparkContext shut down) or after
    assert re.search(r"the Spark session was lost \((its SparkContext was shut down; )?"
                     r"its JVM exited \(exit code 1\)\); the next statement starts a new one", log), log[-6000:]
    print("run_results message of m2_kills_the_jvm:", lost["message"])


# --- in this worker's own session: a statement's own error is not a lost session ---------------


class TestAnOrdinaryErrorKeepsTheSession:
    """A model whose statement fails at run time (``raise_error``: a SparkRuntimeException from a
    task, not an AnalysisException) fails with its own error; the session is probed, found alive
    and kept: the model after it runs in the same session and JVM."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "a_fails.sql": "{{ config(materialized='table') }}\nselect cast(raise_error('boom from a_fails') as int) as x",
            "b_after.sql": "{{ config(materialized='table') }}\nselect 1 as id",
        }

    def test_the_session_is_kept(self, project):
        from dbt.adapters.spark_ivm import connections

        run_dbt(["run", "--select", "b_after"])
        spark, jvm = connections._APPLIED["session"], connections._gateway_process()
        results = run_dbt(["run"], expect_pass=False)
        by_node = {r.node.name: r for r in results}
        assert by_node["a_fails"].status == "error"
        assert "boom from a_fails" in by_node["a_fails"].message
        assert "session was lost" not in by_node["a_fails"].message
        assert by_node["b_after"].status == "success"
        assert connections._APPLIED["session"] is spark and connections._gateway_process() is jvm
