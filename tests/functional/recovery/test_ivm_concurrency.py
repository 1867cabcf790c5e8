"""One writer per model (SPEC §7): "Two runs of the same model at the same time cannot both apply changes; the
second waits or fails clearly. A lock left by a dead run expires safely."

The embedded Derby metastore admits one process, so a second `dbt run` process cannot race this one. The lock
protocol is tested instead with lock rows (`<schema>_ivm.<model>__lock`: k, owner 'host:pid:uuid', seq,
expires_at) written as another run would have left them, and with a real race of two threads of this process
issuing the product's own compare-and-swap (`refresh.lock.take_row`) on the same lock row at the same moment, as
runs of two processes would (the in-process registration is bypassed).
"""

import os
import socket
from collections import Counter
import subprocess
import threading
import time
import uuid
from dataclasses import replace

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import ModelTables
from dbt.adapters.spark_ivm.refresh import IvmConfig, lock, open_run
from dbt.adapters.spark_ivm.refresh.config import STALL_ENV, STALLED
from dbt.adapters.spark_ivm.refresh.context import process_identity
from dbt.adapters.spark_ivm.refresh.log import Entry, write_log
from ivm_core import bookkeeping as bk
from tests.functional.ivm.harness import (
    IS_IVM,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    built_and_checked,
    collect,
    drop_schema,
    fingerprint_schemas,
    project_files,
    result_by_name,
    shop_harness,
    shop_inputs,
    sql,
    state_schema,
)

pytestmark = pytest.mark.skipif(not IS_IVM, reason="the lock belongs to the incremental_ivm materialization")

FAULT_ENV = "DBT_SPARK_IVM_FAULT"
LOCK_TIMEOUT = 777  # ivm_lock_timeout of the model (the default is 3600)
HOST = socket.gethostname()
ME = process_identity()  # this process's pid space (a lock row's owner: host:pid:run id:identity)
MODEL = Model(
    "locked_orders",
    """
select o.o_id, o.c_id, o.amount, o.status
from {orders} o
where o.status is null or o.status <> 'cancelled'
""",
    # its published change is what a live run's uncommitted writes include (below)
    ivm_config={"ivm_publish_changes": "always"},
)
INPUTS = {"orders": 0}
RACE_ROUNDS = 10


def _sleeper() -> subprocess.Popen:
    """A live process on this host (stands for another dbt run that holds the lock)."""
    return subprocess.Popen(["sleep", "300"])


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


class TestIvmLock:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, [MODEL], INPUTS, with_tests=False)

    @pytest.fixture(scope="class")
    def project_config_update(self):
        # the embedded catalog admits one process, where `auto` keeps no lock row: test the row
        return {"models": {"+ivm_lock_timeout": LOCK_TIMEOUT, "+ivm_lock": "table"}}

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        h.create_inputs()
        gen = BatchGenerator(h, 31337)
        h.apply(gen.initial())
        run_dbt(["run"])
        oracle = Oracle(h, [MODEL])
        assert oracle.compare(MODEL.name) is None
        tables = ModelTables(project.test_schema, MODEL.name)
        yield {"h": h, "gen": gen, "oracle": oracle, "tables": tables}
        os.environ.pop(FAULT_ENV, None)
        drop_schema(state_schema(project.test_schema))

    # ------------------------------------------------------------------ helpers
    def _lock(self, ctx):
        rows = collect(f"SELECT owner, seq, expires_at FROM {ctx['tables'].companion('lock')} WHERE k = 'lock'")
        assert len(rows) <= 1, f"several lock rows: {rows}"
        return rows[0] if rows else None

    def _set_lock(self, ctx, owner, seq, expires_at):
        table = ctx["tables"].companion("lock")
        sql(f"DELETE FROM {table}")
        sql(f"INSERT INTO {table} VALUES ('lock', '{owner}', CAST({seq} AS BIGINT), CAST({int(expires_at)} AS BIGINT))")

    def _committed_seq(self, ctx) -> int:
        rows = collect(f"SELECT max(seq) FROM {ctx['tables'].log} WHERE status = 'committed'")
        return int(rows[0][0])

    def _pending_batch(self, ctx):
        ctx["h"].apply(ctx["gen"].batch(["orders"], ops=3))

    def _expect_blocked(self, project, ctx, owner):
        schemas = [project.test_schema, state_schema(project.test_schema)]
        before = fingerprint_schemas(schemas)
        lock_before = self._lock(ctx)
        results, log = run_dbt_and_capture(["run"], expect_pass=False)
        message = str(result_by_name(results)[MODEL.name].message)
        assert "being refreshed by another run" in message, message
        assert owner in message and MODEL.name in message, message
        after = fingerprint_schemas(schemas)
        changed = {t: (before.get(t), after.get(t)) for t in set(before) | set(after) if before.get(t) != after.get(t)}
        assert not changed, f"a blocked run changed tables (before, after): {changed}"
        assert self._lock(ctx) == lock_before, "a blocked run changed the lock row it does not own"

    def _expect_success(self, project, ctx, max_seconds=None):
        started = time.monotonic()
        results = result_by_name(run_dbt(["run"], expect_pass=None))
        took = time.monotonic() - started
        r = results[MODEL.name]
        assert str(r.status) == "success", r.message
        assert adapter_response(project.project_root, MODEL.name).get("mode") == "incremental"
        diff = ctx["oracle"].compare(MODEL.name)
        assert diff is None, diff
        # the run took the lock (this process) and its commit released it: seq == the committed seq
        owner, seq, _ = self._lock(ctx)
        assert owner.startswith(f"{HOST}:{os.getpid()}:"), owner
        assert seq == self._committed_seq(ctx)
        if max_seconds is not None:
            assert took < max_seconds, f"the run waited {took:.0f}s for a lock of a dead process"

    # ------------------------------------------------------------------ held locks
    def test_live_lock_on_this_host_blocks(self, project, ctx):
        holder = _sleeper()
        try:
            owner = f"{HOST}:{holder.pid}:x:{ME}"
            self._pending_batch(ctx)
            self._set_lock(ctx, owner, self._committed_seq(ctx) + 1, time.time() + 3600)
            self._expect_blocked(project, ctx, owner)
        finally:
            _stop(holder)

    def test_dead_pid_of_another_pid_space_blocks(self, project, ctx):
        """Containers that share a host name (host networking) have pid namespaces of their own: a
        pid that is dead here may be another container's live run. Only the lease's expiry frees
        its row."""
        dead = subprocess.Popen(["true"])
        dead.wait()
        owner = f"{HOST}:{dead.pid}:x:anotherns"
        self._pending_batch(ctx)
        self._set_lock(ctx, owner, self._committed_seq(ctx) + 1, time.time() + 3600)
        self._expect_blocked(project, ctx, owner)
        self._set_lock(ctx, owner, self._committed_seq(ctx) + 1, time.time() - 1)  # (expired: free)
        self._expect_success(project, ctx)

    def test_live_run_writes_are_not_rolled_back(self, project, ctx):
        """A live run has taken the lock and written the target and its published change, but not
        yet committed. A second run sees the snapshots moved since the last commit: it must not
        take them for a dead run's leftovers (rolling them back under the live run), but refuse,
        naming the holder, with every table as it was. Once the holder is dead, the next run
        rolls its uncommitted writes back and ends exact."""
        holder = _sleeper()
        tables = ctx["tables"]
        committed = self._committed_seq(ctx)
        try:
            owner = f"{HOST}:{holder.pid}:x:{ME}"
            self._pending_batch(ctx)
            self._set_lock(ctx, owner, committed + 1, time.time() + 3600)
            # the live run's uncommitted writes: one row more in the target and in __changes
            sql(f"INSERT INTO {tables.target} SELECT * FROM {tables.target} LIMIT 1")
            sql(f"INSERT INTO {tables.changes} SELECT *, CAST(1 AS BIGINT), CAST({committed + 1} AS BIGINT) "
                f"FROM {tables.target} LIMIT 1")
            self._expect_blocked(project, ctx, owner)
        finally:
            _stop(holder)
        self._expect_success(project, ctx, max_seconds=120)
        # what downstream models read: the target at the previous commit plus the published
        # change is the target now (the dead run's published row is gone with its target row)
        before = collect(f"SELECT target_snapshot FROM {tables.log} WHERE status = 'committed' AND seq = {committed}")
        cols = "o_id, c_id, amount, status"
        drift = collect(
            f"SELECT {cols}, sum(w) FROM (SELECT {cols}, 1 AS w FROM {tables.target} VERSION AS OF {before[0][0]} "
            f"UNION ALL SELECT {cols}, _ivm_weight FROM {tables.changes} WHERE _ivm_seq = {committed + 1} "
            f"UNION ALL SELECT {cols}, -1 FROM {tables.target}) GROUP BY {cols} HAVING sum(w) <> 0"
        )
        assert not drift, f"the published change does not lead to the target: {drift}"

    def test_lock_of_another_host_blocks(self, project, ctx):
        owner = "otherhost:1:x:otherboot"  # another machine's pid: never presumed dead
        self._pending_batch(ctx)
        self._set_lock(ctx, owner, self._committed_seq(ctx) + 1, time.time() + 3600)
        self._expect_blocked(project, ctx, owner)

    def test_expired_lock_is_taken_over(self, project, ctx):
        holder = _sleeper()
        try:
            self._pending_batch(ctx)
            owner = f"{HOST}:{holder.pid}:x:{ME}"
            seq = self._committed_seq(ctx) + 1
            self._set_lock(ctx, owner, seq, time.time() - 5)
            self._expect_success(project, ctx)  # applies every batch the blocked runs left pending
            # it fenced the holder's commit of its sequence before it read the log again
            assert (seq, owner) in collect(f"SELECT seq, reason FROM {ctx['tables'].log} WHERE status = 'fenced'")
        finally:
            _stop(holder)

    def test_lock_of_dead_process_is_free_at_once(self, project, ctx):
        dead = subprocess.Popen(["true"])
        dead.wait()
        self._pending_batch(ctx)
        self._set_lock(ctx, f"{HOST}:{dead.pid}:x:{ME}", self._committed_seq(ctx) + 1, time.time() + 3600)
        self._expect_success(project, ctx, max_seconds=120)

    def test_commit_of_a_fenced_lease_fails(self, project, ctx):
        """A run paused past its lease's expiry while another run took its row over: its commit
        (the log's fenced MERGE) fails, and nothing of it is logged; the model's next run is exact."""
        tables = ctx["tables"]
        committed = self._committed_seq(ctx)
        with project.adapter.connection_named("fenced_commit"):
            run = open_run(project.adapter, MODEL.name, "", tables, [],
                           IvmConfig(lock_row=True, lock_timeout=LOCK_TIMEOUT))
            lock.take_row(run, lock.read_row(run), committed + 1, committed)
            # another run takes the expired row over: it fences this run's commit of the sequence
            sql(bk.fence_lease(tables.log, committed + 1, run.owner))
            entry = Entry(seq=committed + 1, status="committed", mode="incremental", reason=None, fingerprint="x",
                          highs={}, changes_from=0)
            with pytest.raises(DbtRuntimeError, match="took this run's lock over"):
                write_log(run, entry)
        assert self._committed_seq(ctx) == committed, "a fenced run committed"
        self._set_lock(ctx, f"{HOST}:{os.getpid()}:reset:{ME}", committed, 0)
        self._pending_batch(ctx)
        self._expect_success(project, ctx)

    def test_lock_timeout_config(self, project, ctx):
        """The lock a run takes expires ivm_lock_timeout seconds after it was taken."""
        self._pending_batch(ctx)
        started = time.time()
        self._expect_success(project, ctx)
        _, _, expires_at = self._lock(ctx)
        assert started + LOCK_TIMEOUT - 1 <= expires_at <= time.time() + LOCK_TIMEOUT + 1, (
            f"expires_at {expires_at} is not about now + {LOCK_TIMEOUT}s ({started:.0f})"
        )

    def test_failed_run_gives_the_lock_back(self, project, ctx):
        self._pending_batch(ctx)
        os.environ[FAULT_ENV] = f"{MODEL.name}:after_publish"
        try:
            results = result_by_name(run_dbt(["run"], expect_pass=False))
        finally:
            os.environ.pop(FAULT_ENV, None)
        assert "injected failure" in str(results[MODEL.name].message)
        owner, seq, expires_at = self._lock(ctx)
        assert owner.startswith(f"{HOST}:{os.getpid()}:") and seq == self._committed_seq(ctx) + 1
        assert expires_at == 0, f"a failed run kept its lock until {expires_at}"
        self._expect_success(project, ctx)

    # ------------------------------------------------------------------ the compare-and-swap itself
    def test_two_concurrent_takers_one_wins(self, project, ctx):
        """Two threads issue the product's lock-taking statements at the same moment; each pretends to be a
        different live process on this host (so neither may treat the other's lock as its own). Exactly one
        may win each round."""
        adapter = project.adapter
        holders = [_sleeper(), _sleeper()]
        tables = ctx["tables"]
        rounds = []
        try:
            for round_no in range(RACE_ROUNDS):
                committed = self._committed_seq(ctx)
                # free: the last lock was left by a committed run
                self._set_lock(ctx, f"{HOST}:{holders[0].pid}:free{round_no}", committed, time.time() + 3600)
                owners = [f"{HOST}:{p.pid}:{uuid.uuid4().hex[:12]}:{ME}" for p in holders]
                barrier = threading.Barrier(2)
                outcome = [None, None]

                def take(i):
                    try:
                        with adapter.connection_named(f"lock_race_{i}"):
                            run = replace(open_run(adapter, MODEL.name, "", tables, [],
                                                   IvmConfig(lock_timeout=LOCK_TIMEOUT)), owner=owners[i])
                            row = lock.read_row(run)
                            barrier.wait(timeout=60)
                            lock.take_row(run, row, committed + 1, committed)
                            outcome[i] = "won"
                    except DbtRuntimeError as e:
                        outcome[i] = f"lost: {e}"
                    except BaseException as e:  # noqa: BLE001 - reported below
                        outcome[i] = f"unexpected: {e!r}"

                threads = [threading.Thread(target=take, args=(i,)) for i in range(2)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(timeout=300)
                final = self._lock(ctx)
                rounds.append((outcome, final))
                unexpected = [o for o in outcome if o is None or o.startswith("unexpected")]
                assert not unexpected, f"round {round_no}: {outcome}"
                winners = [owners[i] for i in range(2) if outcome[i] == "won"]
                assert len(winners) == 1, (
                    f"round {round_no}: {len(winners)} runs took the lock at once; outcomes {outcome}; "
                    f"lock row {final}; all rounds {rounds}"
                )
                assert final[0] == winners[0] and final[1] == committed + 1, (round_no, outcome, final)
        finally:
            for p in holders:
                _stop(p)
            # leave the lock free (as a committed run leaves it) for the other tests
            self._set_lock(ctx, f"{HOST}:{os.getpid()}:reset", self._committed_seq(ctx), 0)
        print("race outcomes:", rounds)


class TestIvmLockAuto:
    """`ivm_lock: auto` (the default) on the embedded catalog, which no other process can open:
    a run registers in its process and leaves the lock row alone (one statement less); runs of
    this process are still kept apart."""

    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, [MODEL], INPUTS, with_tests=False)

    def test_no_lock_row_and_one_run_per_process(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        h.create_inputs()
        gen = BatchGenerator(h, 4242)
        h.apply(gen.initial())
        run_dbt(["run"])
        oracle = Oracle(h, [MODEL])
        tables = ModelTables(project.test_schema, MODEL.name)
        try:
            for _ in range(2):
                h.apply(gen.batch())
                run_dbt(["run"])
                assert oracle.compare(MODEL.name) is None
            assert collect(f"SELECT * FROM {tables.companion('lock')}") == [], "auto mode wrote the lock row"
            other = open_run(project.adapter, MODEL.name, "", tables, [], IvmConfig(lock_row=False))
            with lock.registered(other):
                h.apply(gen.batch())
                results = result_by_name(run_dbt(["run"], expect_pass=False))
                assert "another run in this process" in str(results[MODEL.name].message)
                assert oracle.compare(MODEL.name) is not None, "the blocked run applied the batch"
            run_dbt(["run"])
            assert oracle.compare(MODEL.name) is None
        finally:
            drop_schema(state_schema(project.test_schema))


class TestPinnedReads:
    """Every statement of a run reads a change table at the snapshot the run captured (SPEC §7): a
    producer commit landing mid-run with a sequence at or below the captured high mark is in none
    of them, and the next run refuses it as a late write, naming the change table."""

    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, [MODEL], INPUTS, with_tests=False)

    def test_late_commit_mid_run_is_in_no_statement(self, project):
        h = shop_harness(project.test_schema, INPUTS)
        gen = BatchGenerator(h, 2718)
        h.apply(gen.initial())
        oracle = built_and_checked(h, MODEL)
        try:
            seq = h.apply(gen.batch(["orders"], ops=3))
            # a copy more of a row the input holds, one the model selects
            row = next(r for r in h.inputs["orders"].rows if r[4] != "cancelled")
            wrote = []

            def late_commit():
                if STALLED.wait(timeout=120):  # the run has captured and validated its change
                    h.write_changes("orders", [(row, 1)], seq)
                    wrote.append(time.time())

            producer = threading.Thread(target=late_commit)
            producer.start()
            os.environ[STALL_ENV] = f"{MODEL.name}:after_validate:4"
            try:
                run_dbt(["run"])
            finally:
                os.environ.pop(STALL_ENV, None)
                producer.join(timeout=150)
            assert wrote, "the late commit did not land during the run"
            assert adapter_response(project.project_root, MODEL.name).get("mode") == "incremental"
            # the model's SQL over the input without the late copy (the harness's base relation
            # sums the change table, so it holds the copy)
            expected = Counter(collect(oracle.sql_for(MODEL.name)))
            expected[(row[0], row[1], row[3], row[4])] -= 1
            actual = oracle.contents(MODEL.name)
            assert actual == +expected, f"the run read the late commit in some statements: {actual - expected} " \
                                        f"more, {expected - actual} fewer"
            h.apply(gen.batch(["orders"], ops=2))
            results, _ = run_dbt_and_capture(["run"], expect_pass=False)
            message = str(result_by_name(results)[MODEL.name].message)
            assert "orders_changes" in message and "Nothing was changed" in message, message
        finally:
            drop_schema(state_schema(project.test_schema))
