"""SIGKILL the real `dbt run` process (and its Spark JVM) at a random moment of a refresh; the next
run must produce exactly the full recompute, for the killed model and the IVM model after it.

Each dbt run is a separate process with its own metastore directory (Derby admits one process
at a time), so this test never touches the pytest process's Spark session."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.functional.recovery import kill_driver

DRIVER = Path(kill_driver.__file__)
SEEDS = [11]  # one kill (two until CI's time said otherwise; every step's failure is test_ivm_recovery.py's)


def _write_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: kill_test\nversion: '1.0'\nprofile: kill_test\n")
    (root / "profiles.yml").write_text(textwrap.dedent(f"""\
        kill_test:
          target: dev
          outputs:
            dev:
              type: spark_ivm
              method: session
              schema: {kill_driver.SCHEMA}
              session_dir: {root / '.spark_ivm'}
        """))
    (root / "models" / "sources.yml").write_text(textwrap.dedent(f"""\
        version: 2
        sources:
          - name: shop
            schema: {kill_driver.SCHEMA}
            tables:
              - name: orders
                meta: {{ivm: {{changes: orders_changes}}}}
              - name: customers
                meta: {{ivm: {{changes: customers_changes}}}}
        """))
    for name, sql in kill_driver.MODELS.items():
        body = sql.replace("{s}.orders", "{{ source('shop', 'orders') }}")
        body = body.replace("{s}.customers", "{{ source('shop', 'customers') }}")
        body = body.replace("{s}.customer_totals", "{{ ref('customer_totals') }}")
        (root / "models" / f"{name}.sql").write_text(
            "{{ config(materialized='incremental_ivm', ivm_policy='incremental') }}\n" + body + "\n"
        )


def _python(*args, timeout=600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    return subprocess.run([sys.executable, str(DRIVER), *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.kill
def test_killed_runs_recover_exactly(tmp_path):
    root = tmp_path / "project"
    _write_project(root)
    setup = _python(str(root), "setup")
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    dbt = Path(sys.executable).with_name("dbt")
    rng = random.Random(2026)
    seq = 1
    for i, seed in enumerate(SEEDS):
        seq += 1
        step = _python(str(root), "recover", str(seed), str(seq))
        assert step.returncode == 0, f"before kill {i}:\n" + step.stdout[-3000:] + step.stderr[-2000:]
        # kill the refresh of this batch somewhere between JVM start and its end
        proc = subprocess.Popen(
            [str(dbt), "run", "--project-dir", str(root), "--profiles-dir", str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        time.sleep(rng.uniform(9, 22))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    seq += 1
    final = _python(str(root), "recover", "999", str(seq))
    assert final.returncode == 0, "after the last kill:\n" + final.stdout[-3000:] + final.stderr[-2000:]
