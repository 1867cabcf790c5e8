"""SIGKILL the real `dbt run` process (and its Spark JVM) inside a refresh — at a step between its
capture and its commit, drawn at random, where the stall test hook holds it (its log says it got
there) — and prove the kill landed there: the model's log committed nothing more. The next run
must produce exactly the full recompute, for the killed model and the IVM model after it.

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
STEPS = ["after_validate", "after_publish", "after_target", "after_state", "before_commit"]
STALL_WAIT = 300  # seconds to reach the step


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


def _committed(stdout: str) -> int:
    return int(next(line for line in stdout.splitlines() if line.startswith("committed=")).split("=")[1])


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
        before = _committed(step.stdout)
        # kill the refresh of this batch at a step between its capture and its commit
        where = rng.choice(STEPS)
        log = root / "logs" / "dbt.log"
        if log.exists():
            log.unlink()
        proc = subprocess.Popen(
            [str(dbt), "run", "--project-dir", str(root), "--profiles-dir", str(root), "--log-path", str(log.parent)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            env=dict(os.environ, DBT_SPARK_IVM_STALL=f"customer_totals:{where}:{STALL_WAIT}"),
        )
        deadline = time.monotonic() + STALL_WAIT
        while f"stalled at {where}" not in (log.read_text(errors="replace") if log.exists() else ""):
            assert proc.poll() is None and time.monotonic() < deadline, f"the run never reached {where}"
            time.sleep(0.5)
        time.sleep(rng.uniform(0, 1))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        after = _python(str(root), "committed")
        assert after.returncode == 0, after.stdout[-3000:] + after.stderr[-2000:]
        assert _committed(after.stdout) == before, f"the kill at {where} did not land inside the refresh"
    seq += 1
    final = _python(str(root), "recover", "999", str(seq))
    assert final.returncode == 0, "after the last kill:\n" + final.stdout[-3000:] + final.stderr[-2000:]
