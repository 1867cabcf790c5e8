"""Two real `dbt run` processes race over a model and its downstream incremental_ivm model,
through the Spark Thrift Server (the catalog every client shares; `ivm_lock: auto` takes the
lock row there, see ``SparkIvmCredentials.catalog_is_exclusive``).

After each change batch, process A starts `dbt run` and process B starts the same `dbt run`
OFFSET seconds later. Every trial must end with

* ``ivm_matches_full_refresh`` passing for both models (`dbt test`), and the oracle agreeing;
* every model brought up to date by some run of the trial (one of the two applied the batch);
* a refused run reporting "being refreshed by another run" / "took the lock at the same time",
  naming the other process as the holder, and having changed nothing: no table of the model
  schema or of its ``_ivm`` companion schema went back to an older snapshot (a rollback of the
  live run's writes; a model a run rebuilt may replace its tables, so there only an older snapshot
  made current again counts), and each model's log gained exactly the entries of its successful
  runs: their sequences, each ending 'committed'.

Each trial prints its offset, each run's outcome per model and the refused runs' messages.
"""

import json
import os
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional

import pytest
from dbt.tests.util import run_dbt

from tests.functional.ivm import test_ivm_chain as chain
from tests.functional.ivm.harness import (
    BatchGenerator,
    IvmHarness,
    Oracle,
    collect,
    drop_schema,
    list_tables,
    list_views,
    project_files,
    qi,
    shop_inputs,
    state_schema,
)

from .server import die_with_parent

MODELS = chain.MODELS  # a_order_customers (orders ⋈ customers) and b_order_products (ref(a) ⋈ products)
NAMES = [m.name for m in MODELS]
INPUTS = chain.INPUTS
# 0 (both take the lock at once), 4 and 6 (where a change was once lost); 1, 2 and 8, and 4 and
# 6 a second time, were run too until CI's time said otherwise
OFFSETS = [0, 4, 6]
RUN_TIMEOUT = 300  # seconds one `dbt run` process may take
REFUSALS = ("being refreshed by another run", "took the lock at the same time")
DBT = os.path.join(os.path.dirname(sys.executable), "dbt")


def _histories(schemas: List[str]) -> Dict[str, List[tuple]]:
    """Every Iceberg table's snapshot history (made_current_at, snapshot_id, is_current_ancestor),
    in one statement; lock tables excluded (a refused run may take no lock, but a winner writes it)."""
    tables = []
    for s in schemas:
        views = set(list_views(s))
        tables += [f"{s}.{qi(t)}" for t in list_tables(s) if t not in views and not t.endswith("__lock")]
    if not tables:
        return {}
    q = "\nUNION ALL\n".join(
        f"SELECT '{t}' AS t, made_current_at, snapshot_id, is_current_ancestor FROM {t}.history" for t in tables
    )
    out: Dict[str, List[tuple]] = {t: [] for t in tables}
    for t, at, snap, ancestor in sorted(collect(q), key=lambda r: (r[0], r[1])):
        out[t].append((at, snap, ancestor))
    return out


def _went_back(before: List[tuple], after: List[tuple], replaced: bool = False) -> Optional[str]:
    """Whether someone's writes to a table were rolled back during the trial: an older snapshot
    made current again, or a snapshot that was (or became) part of the table's state no longer
    an ancestor of its current state — unless the table was ``replaced`` (a rebuild's CREATE OR
    REPLACE starts a new line of snapshots)."""
    old = {(at, snap) for at, snap, _ in before}
    was_ancestor = {snap for _, snap, ancestor in before if ancestor}
    seen = {snap for _, snap, _ in before}
    for at, snap, ancestor in after:
        new = (at, snap) not in old
        if new and snap in seen:
            return f"snapshot {snap} was made current again at {at} (a rollback)"
        seen.add(snap)
        if not ancestor and not replaced and (new or snap in was_ancestor):
            return f"snapshot {snap} (made current at {at}) is no longer an ancestor of the current state"
    return None


def _log_entries(schema: str) -> Dict[str, List[tuple]]:
    """Each model's log entries as (seq, status), in the order they were logged."""
    return {
        n: [(int(seq), status) for seq, status, _ in sorted(
            collect(f"SELECT seq, status, logged_at FROM {state_schema(schema)}.{qi(n + '__log')}"),
            key=lambda r: (r[0], r[2]))]
        for n in NAMES
    }


def _owns(model: str, table: str) -> bool:
    """Whether ``table`` (schema.`name`) is the model's target or one of its companion tables."""
    name = table.split(".", 1)[1].strip("`")
    return name == model or name.startswith(model + "__")


class DbtProcess:
    """One `dbt run` in its own process (and process group), with its own target and log paths."""

    def __init__(self, project, label: str):
        self.label = label
        self.root = str(project.project_root)
        self.profiles = str(project.profiles_dir)
        self.work = os.path.join(self.root, f"race_{label}")
        self.target = os.path.join(self.work, "target")
        self.proc: Optional[subprocess.Popen] = None
        self.started = self.ended = 0.0

    def start(self) -> None:
        if os.path.exists(os.path.join(self.target, "run_results.json")):
            os.remove(os.path.join(self.target, "run_results.json"))
        os.makedirs(self.work, exist_ok=True)
        env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DBT_USE_COLORS="false")
        self.out = open(os.path.join(self.work, "stdout.log"), "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [DBT, "run", "--project-dir", self.root, "--profiles-dir", self.profiles,
             "--target-path", self.target, "--log-path", os.path.join(self.work, "logs")],
            stdout=self.out, stderr=subprocess.STDOUT, env=env, cwd=self.root, start_new_session=True,
            preexec_fn=die_with_parent if sys.platform == "linux" else None,
        )

    def wait(self, deadline: float) -> None:
        try:
            self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
        finally:
            self.ended = time.monotonic()
            self.out.close()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def stdout_tail(self, lines: int = 30) -> str:
        with open(os.path.join(self.work, "stdout.log"), errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def results(self) -> Dict[str, dict]:
        """Per model: status, message, adapter_response of this run (empty when dbt wrote none)."""
        path = os.path.join(self.target, "run_results.json")
        if not os.path.exists(path):
            return {}
        with open(path) as f:
            data = json.load(f)
        return {r["unique_id"].split(".")[-1]: r for r in data["results"]}


def _outcome(result: Optional[dict]) -> str:
    if result is None:
        return "not run"
    status = result["status"]
    if status == "success":
        resp = result.get("adapter_response") or {}
        return f"{resp.get('mode')} (+{resp.get('rows_inserted', 0)}/-{resp.get('rows_deleted', 0)})"
    return f"{status}: {result.get('message')}"


class TestThriftRace:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        h.create_inputs()
        gen = BatchGenerator(h, 8128)
        h.apply(gen.initial())
        run_dbt(["run"])
        oracle = Oracle(h, MODELS)
        for n in NAMES:
            assert oracle.compare(n) is None, oracle.compare(n)
        yield {"h": h, "gen": gen, "oracle": oracle}
        drop_schema(state_schema(project.test_schema))

    def test_two_dbt_processes_race(self, project, ctx):
        h, gen, oracle = ctx["h"], ctx["gen"], ctx["oracle"]
        schemas = [project.test_schema, state_schema(project.test_schema)]
        runs = [DbtProcess(project, "A"), DbtProcess(project, "B")]
        trials, problems = [], []
        try:
            for trial, offset in enumerate(OFFSETS, start=1):
                h.apply(gen.batch(["orders", "customers", "products"], ops=4))
                logs_before = _log_entries(project.test_schema)
                histories_before = _histories(schemas)
                runs[0].start()
                time.sleep(offset)
                runs[1].start()
                deadline = time.monotonic() + RUN_TIMEOUT
                for r in runs:
                    r.wait(deadline)
                results = [r.results() for r in runs]
                line = (f"trial {trial}: offset {offset}s; "
                        + "; ".join(f"{r.label} (exit {r.proc.returncode}, {r.ended - r.started:.0f}s): "
                                    + ", ".join(f"{n} {_outcome(res.get(n))}" for n in NAMES)
                                    for r, res in zip(runs, results)))
                print(line, flush=True)
                trials.append(line)
                bad = self._check_trial(project, oracle, runs, results, logs_before, histories_before, schemas)
                if bad:
                    problems.append(f"trial {trial} (offset {offset}s): " + "\n    ".join(bad))
                    print("  PROBLEM: " + "\n    ".join(bad), flush=True)
                    # the next trial starts from an exact state again, or the later trials say nothing
                    run_dbt(["run", "--full-refresh"])
        finally:
            for r in runs:
                r.kill()
        print("\nrace summary:\n  " + "\n  ".join(trials), flush=True)
        assert not problems, "\n".join(problems) + "\n\nall trials:\n  " + "\n  ".join(trials)

    def _check_trial(self, project, oracle, runs, results, logs_before, histories_before, schemas) -> List[str]:
        bad = []
        for r, res in zip(runs, results):
            if not res:
                bad.append(f"run {r.label} wrote no run_results.json (exit {r.proc.returncode}):\n{r.stdout_tail()}")
        pids = {r.label: str(r.proc.pid) for r in runs}
        committed = {n: set() for n in NAMES}  # the sequences the trial's successful runs committed
        rebuilt = set()
        for r, res in zip(runs, results):
            other = pids["B" if r.label == "A" else "A"]
            for n in NAMES:
                result = res.get(n)
                if result is None:
                    continue
                if result["status"] == "success":
                    response = result.get("adapter_response") or {}
                    mode = response.get("mode")
                    if mode in ("incremental", "full"):
                        committed[n].add(response.get("seq"))
                    if mode == "full":
                        rebuilt.add(n)
                    continue
                if result["status"] == "skipped":  # its upstream model was refused in this run
                    continue
                message = str(result.get("message") or "")
                if not any(f in message for f in REFUSALS):
                    bad.append(f"run {r.label}, {n}: failed for another reason than the lock: {message}")
                elif f":{other}:" not in message:
                    bad.append(f"run {r.label}, {n}: the refusal does not name the other run (pid {other}): {message}")
        for n in NAMES:
            if not committed[n]:
                bad.append(f"{n}: no run of the trial applied the batch ({[_outcome(res.get(n)) for res in results]})")
        logs_after = _log_entries(project.test_schema)
        for n in NAMES:
            # a rebuild may log 'started' before its 'committed' entry (rebuild.py); a refused run
            # logs nothing
            gained = logs_after[n][len(logs_before[n]):]
            if logs_after[n][:len(logs_before[n])] != logs_before[n] \
                    or {seq for seq, _ in gained} != committed[n] \
                    or sorted(seq for seq, status in gained if status == "committed") != sorted(committed[n]):
                bad.append(f"{n}: its log gained {gained}, its successful runs committed {sorted(committed[n])}")
        for table, history in _histories(schemas).items():
            went_back = _went_back(histories_before.get(table, []), history,
                                   replaced=any(_owns(n, table) for n in rebuilt))
            if went_back:
                bad.append(f"{table}: {went_back}")
        tests = run_dbt(["test"], expect_pass=None)
        failed = [f"{t.node.name}: {t.status} {t.message}" for t in tests if str(t.status) != "pass"]
        if len(tests) != len(NAMES) or failed:
            bad.append(f"dbt test ({len(tests)} tests): {failed}")
        for n in NAMES:
            diff = oracle.compare(n)
            if diff:
                bad.append(diff)
        return bad
