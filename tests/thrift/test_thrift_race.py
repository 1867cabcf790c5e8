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
    """One `dbt run` in its own process (and process group), with its own target and log paths
    (and ``env``: variables of its own, such as a test hook)."""

    def __init__(self, project, label: str, env: Optional[Dict[str, str]] = None):
        self.label = label
        self.env = env or {}
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
        env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DBT_USE_COLORS="false", **self.env)
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
    OFFSETS = OFFSETS

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
            for trial, offset in enumerate(self.OFFSETS, start=1):
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
            # logs nothing; a maintenance prunes the oldest entries (every 2 sequences for A)
            gained = [e for e in logs_after[n] if e not in logs_before[n]]
            kept = [e for e in logs_before[n] if e in logs_after[n]]
            pruned_from_the_bottom = kept == logs_before[n][len(logs_before[n]) - len(kept):]
            if not pruned_from_the_bottom or {seq for seq, _ in gained} != committed[n] \
                    or sorted(seq for seq, status in gained if status == "committed") != sorted(committed[n]):
                bad.append(f"{n}: its log gained {gained} (kept {kept} of {logs_before[n]}), its successful runs "
                           f"committed {sorted(committed[n])}")
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


# ivm_lock_timeout of the lease tests: each run outlives it several times over (at 2 s a renewal, a
# MERGE through the server, took longer than the lease on a loaded machine)
LEASE_TIMEOUT = 5
STALLED_MODEL = NAMES[0]


class TestThriftLease(TestThriftRace):
    """``ivm_lock_timeout: 5``, so every run outlives its lock timeout several times over.

    * The race above, the second run started after the first one's lock timeout: the first
      renews its lease while it works, so the second is refused, never takes a live run over.
    * A run paused past its lease's expiry (the stall hook: as a process paused whole, it renews
      nothing meanwhile) is taken over by another run, which fences its commit, rolls its writes
      back and commits the batch; the paused run, once it resumes, stops before its next
      statement and commits nothing."""

    OFFSETS = [LEASE_TIMEOUT + 2]  # the first run holds the lock longer than the timeout when the second starts

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+ivm_lock_timeout": LEASE_TIMEOUT}}

    def test_run_paused_past_its_lease_cannot_commit(self, project, ctx):
        h, gen, oracle = ctx["h"], ctx["gen"], ctx["oracle"]
        h.apply(gen.batch(["orders", "customers", "products"], ops=4))
        lock_table = f"{state_schema(project.test_schema)}.{qi(STALLED_MODEL + '__lock')}"
        log_table = f"{state_schema(project.test_schema)}.{qi(STALLED_MODEL + '__log')}"
        committed_before = collect(f"SELECT max(seq) FROM {log_table} WHERE status = 'committed'")[0][0]
        paused = DbtProcess(project, "paused", env={"DBT_SPARK_IVM_STALL": f"{STALLED_MODEL}:before_commit:25"})
        taker = DbtProcess(project, "taker")
        try:
            paused.start()
            deadline = time.monotonic() + RUN_TIMEOUT
            # wait until the paused run holds the row and its lease has expired (it renews nothing)
            while True:
                assert time.monotonic() < deadline and paused.proc.poll() is None, \
                    f"the paused run never let its lease lapse:\n{paused.stdout_tail()}"
                rows = collect(f"SELECT owner, seq, expires_at FROM {lock_table} WHERE k = 'lock'")
                if rows and f":{paused.proc.pid}:" in rows[0][0] and rows[0][1] > committed_before \
                        and rows[0][2] < time.time() - 1:
                    break
                time.sleep(0.5)
            taker.start()
            for r in (taker, paused):
                r.wait(deadline)
        finally:
            for r in (paused, taker):
                r.kill()
        stalled, took = paused.results(), taker.results()
        outcome = f"paused: {[_outcome(stalled.get(n)) for n in NAMES]}; taker: {[_outcome(took.get(n)) for n in NAMES]}"
        print(outcome, flush=True)
        assert stalled.get(STALLED_MODEL, {}).get("status") == "error", outcome
        assert "lost its lock" in str(stalled[STALLED_MODEL].get("message")), outcome
        assert all(took.get(n, {}).get("status") == "success" for n in NAMES), outcome
        entries = _log_entries(project.test_schema)[STALLED_MODEL]
        committed = [seq for seq, status in entries if status == "committed"]
        assert len(committed) == len(set(committed)), f"a sequence was committed twice: {entries}"
        assert (committed_before + 1, "fenced") in entries, f"the taker fenced nothing: {entries}"
        tests = run_dbt(["test"], expect_pass=None)
        failed = [f"{t.node.name}: {t.status} {t.message}" for t in tests if str(t.status) != "pass"]
        assert len(tests) == len(NAMES) and not failed, failed
        for n in NAMES:
            assert oracle.compare(n) is None, oracle.compare(n)
