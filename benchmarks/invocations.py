#!/usr/bin/env python
"""The benchmark as users run it: every `dbt run` a fresh process, as an orchestrator's CLI call
starts it, in two modes —

* `process`: `method: session`, each process starting its own JVM and Spark session (the
  embedded default: JVM start, Iceberg's catalog and the first statements' cold code all count);
* `thrift`: `method: thrift`, each process a client of one running Spark Thrift Server (a
  cluster's way: the server's JVM stays warm between invocations) —

the IVM models against their `table` twins: each group in its own invocations, `--repeat`
batches, then the whole project in one (every IVM model of the groups in one `dbt run`, every
twin in another), one batch more. Per invocation it records the dbt node's execute time (what
`run.py` reports, warm, in one process) and the process's wall time (what the orchestrator
waits for), the statements and the Iceberg commits; after each batch every IVM result is checked
equal to its twin, as a multiset.

    .venv/bin/python benchmarks/invocations.py --sf 1 --shape rf --batch 0.1% --repeat 3

The driver's own SQL (loading TPC-H, committing each batch, checking results, counting commits)
goes through a Spark Thrift Server on this benchmark's own warehouse (`benchmarks/.spark_ivm_cli`,
not `run.py`'s). In the `process` mode the server is stopped while the dbt processes run —
embedded Derby admits one process — and started again after them, untimed. The profile, dbt's
target and log folders and the processes' output are in that folder too, so it leaves `run.py`'s
project state alone. Writes `invocations.md` and `invocations.json` in the results folder.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # the repository: tests.thrift.server

import generate  # noqa: E402
import run as bench  # noqa: E402
from warehouse import ThriftSql  # noqa: E402

from tests.thrift.server import ThriftServer  # noqa: E402

SESSION_DIR = os.path.join(HERE, ".spark_ivm_cli")
MODES = ("process", "thrift")
DEFAULT_GROUPS = "q1_agg,q3_join_agg,q5_join_agg,join_lines,chain"
# the benchmark profile's settings (project/profiles.yml), for the dbt processes and the server alike
DRIVER_MEMORY = "8g"
PROFILE = """tpch_bench:
  target: process
  outputs:
    process:
      type: spark_ivm
      method: session
      schema: bench
      threads: 1
      session_dir: {session_dir}
      server_side_parameters:
        spark.driver.memory: "{memory}"
        spark.ui.showConsoleProgress: "false"
    thrift:
      type: spark_ivm
      method: thrift
      host: {host}
      port: {port}
      schema: bench
      threads: 1
"""


@dataclass
class Invocation:
    """One `dbt run` process."""

    mode: str
    batch: str
    scope: str  # a group's name, or "project"
    variant: str  # ivm | full
    execute: float  # the dbt nodes' execute phases, summed
    process: float  # the process's wall time, start to exit
    statements: Optional[int] = None
    commits: Optional[int] = None
    modes: str = ""
    correct: Optional[bool] = None
    mismatch: str = ""
    started_ms: int = 0
    ended_ms: int = 0
    # the adapter's `[ivm <model>] statement N took X s` lines of the run: {model: [[label, s], ...]}
    statement_log: Dict[str, List[list]] = field(default_factory=dict)


class Bench:
    def __init__(self):
        self.server = ThriftServer(SESSION_DIR, conf={"spark.driver.memory": DRIVER_MEMORY})
        self.sql = ThriftSql(self.server.host, self.server.port)
        # profiles.yml, dbt's target and log folders and the dbt processes' output: beside the warehouse
        os.makedirs(SESSION_DIR, exist_ok=True)
        self.target_path = os.path.join(SESSION_DIR, "dbt_target")
        self.log_path = os.path.join(SESSION_DIR, "dbt_logs")
        self.output = os.path.join(SESSION_DIR, "dbt_output.log")
        with open(os.path.join(SESSION_DIR, "profiles.yml"), "w") as f:
            f.write(PROFILE.format(session_dir=SESSION_DIR, memory=DRIVER_MEMORY, host=self.server.host,
                                   port=self.server.port))
        self.dbt = os.path.join(os.path.dirname(sys.executable), "dbt")

    # the driver's connection: the server up, or down for the embedded processes
    def up(self) -> ThriftSql:
        if self.server.proc is None:
            self.server.start()
        return self.sql

    def down(self) -> None:
        self.sql.close()
        self.server.stop()

    def invoke(self, mode: str, models: List[str], full_refresh: bool = False) -> dict:
        """One `dbt run --select <models>` process; its wall time and its nodes' run results."""
        argv = [self.dbt, "run", "--select", *models, "--project-dir", bench.PROJECT, "--profiles-dir", SESSION_DIR,
                "--target", mode, "--target-path", self.target_path, "--log-path", self.log_path]
        if full_refresh:
            argv.append("--full-refresh")
        results = os.path.join(self.target_path, "run_results.json")
        if os.path.exists(results):
            os.remove(results)
        log_file = os.path.join(self.log_path, "dbt.log")
        log_start = os.path.getsize(log_file) if os.path.exists(log_file) else 0
        started_ms = int(time.time() * 1000)
        started = time.monotonic()
        with open(self.output, "ab") as log:
            log.write(f"\n$ {' '.join(argv)}\n".encode())
            log.flush()
            done = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, cwd=bench.PROJECT)
        wall = time.monotonic() - started
        ended_ms = int(time.time() * 1000)
        if done.returncode != 0:
            raise RuntimeError(f"dbt run --select {' '.join(models)} ({mode}) exited {done.returncode}; "
                               f"see {self.output}")
        with open(results) as f:
            nodes = {}
            for r in json.load(f)["results"]:
                execute = next(t for t in r["timing"] if t["name"] == "execute")
                seconds = (dt.datetime.fromisoformat(execute["completed_at"].rstrip("Z"))
                           - dt.datetime.fromisoformat(execute["started_at"].rstrip("Z"))).total_seconds()
                nodes[r["unique_id"].rsplit(".", 1)[-1]] = {"seconds": seconds, "response": r["adapter_response"]}
        return {"wall": wall, "nodes": nodes, "started_ms": started_ms, "ended_ms": ended_ms,
                "statement_log": bench.statement_log(log_file, log_start)}

    def measure(self, mode: str, batch: str, scope: str, variant: str, models: List[str],
                full_refresh: bool = False) -> Invocation:
        r = self.invoke(mode, models, full_refresh)
        m = Invocation(mode, batch, scope, variant, sum(r["nodes"][x]["seconds"] for x in models), r["wall"],
                       started_ms=r["started_ms"], ended_ms=r["ended_ms"])
        if variant == "ivm":
            m.statement_log = r["statement_log"]
            responses = [r["nodes"][x]["response"] for x in models]
            m.statements = sum(int(x.get("statements") or 0) for x in responses)
            m.modes = "+".join(str(x.get("mode")) for x in responses)
        return m

    def check(self, m: Invocation, groups: List[bench.Group]) -> None:
        """The IVM results of ``m`` against their twins, and the commits its run made (server up)."""
        sql = self.up()
        problems = []
        for g in groups:
            for a, b in zip(g.ivm, g.full):
                p = bench.compare(sql, f"{bench.MODEL_SCHEMA}.{a}", f"{bench.MODEL_SCHEMA}.{b}")
                if p:
                    problems.append(f"{a}: {p}")
        m.correct = not problems
        m.mismatch = "; ".join(problems)
        models = [x for g in groups for x in g.ivm]
        m.commits = bench.commits(sql, bench.owned_tables(sql, models), m.started_ms, m.ended_ms)


def run_batch(b: Bench, mode: str, label: str, groups: List[bench.Group], project: bool, out: list, log) -> None:
    """Each group's IVM models then its twins, each invocation a process (``project``: all the
    groups' IVM models in one process, then all their twins in one)."""
    if mode == "process":
        b.down()
    scopes = [("project", groups)] if project else [(g.name, [g]) for g in groups]
    done = []
    for scope, members in scopes:
        ivm = b.measure(mode, label, scope, "ivm", [x for g in members for x in g.ivm])
        full = b.measure(mode, label, scope, "full", [x for g in members for x in g.full])
        done.append((ivm, full, members))
    for ivm, full, members in done:
        b.check(ivm, members)
        out += [ivm, full]
        log(f"   {mode:<7} {ivm.scope:<12} ivm {ivm.execute:6.2f}s exec {ivm.process:6.2f}s process "
            f"({ivm.modes}, {ivm.statements} stmts, {ivm.commits} commits)  full {full.execute:6.2f}s exec "
            f"{full.process:6.2f}s process  x{full.execute / max(ivm.execute, 1e-9):.1f} exec "
            f"x{full.process / max(ivm.process, 1e-9):.1f} process"
            + ("" if ivm.correct else f"  MISMATCH {ivm.mismatch}"))


def spread(values: List[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    return f"{lo:.2f}" if abs(hi - lo) < 0.005 else f"{lo:.2f}–{hi:.2f}"


def ratio(full: List[Invocation], ivm: List[Invocation], attr: str) -> str:
    rs = [getattr(f, attr) / max(getattr(i, attr), 1e-9) for f, i in zip(full, ivm)]
    return f"{min(rs):.1f}–{max(rs):.1f}×" if len(rs) > 1 else f"{rs[0]:.1f}×"


def write_report(out_dir: str, meta: dict, measures: List[Invocation]) -> str:
    lines = [f"# The benchmark as users run it: a fresh `dbt run` process per invocation (TPC-H SF {meta['sf']:g})", "",
             f"Machine: {meta['machine']['cpus']} CPUs ({meta['machine']['cpu']}), {meta['machine']['mem']} RAM; "
             f"`local[2]`, driver heap {DRIVER_MEMORY}; shape `{meta['shape']}` {meta['batch']}, {meta['repeat']} "
             f"batch(es) per mode for the groups, one more for the whole project; whole run "
             f"{meta['elapsed_s'] / 60:.1f} min. `process`: `method: session`, each `dbt run` its own JVM; "
             f"`thrift`: `method: thrift`, each `dbt run` a client of one Spark Thrift Server. *exec*: the dbt "
             f"nodes' execute phase (as `run.py` reports it); *process*: the `dbt run` process from start to "
             f"exit (dbt's start, parsing, the connection, the JVM in `process` mode). full/IVM within the same "
             f"batch, ranges over the batches. Every IVM result checked equal to its twin after every batch"
             f" ({'all equal' if all(m.correct is not False for m in measures) else 'MISMATCHES: see the json'}).",
             "", "| mode | scope | IVM exec s | twin exec s | **full/IVM exec** | IVM process s | twin process s | "
             "**full/IVM process** | IVM statements | IVM commits |", "|---|---|---|---|---|---|---|---|---|---|"]
    order = []
    for m in measures:
        if m.batch != "initial build" and (m.mode, m.scope) not in order:
            order.append((m.mode, m.scope))
    batches = [m for m in measures if m.batch != "initial build"]
    for mode, scope in order:
        ivm = [m for m in batches if (m.mode, m.scope, m.variant) == (mode, scope, "ivm")]
        full = [m for m in batches if (m.mode, m.scope, m.variant) == (mode, scope, "full")]
        lines.append(
            f"| {mode} | {scope} | {spread([m.execute for m in ivm])} | {spread([m.execute for m in full])} | "
            f"**{ratio(full, ivm, 'execute')}** | {spread([m.process for m in ivm])} | "
            f"{spread([m.process for m in full])} | **{ratio(full, ivm, 'process')}** | "
            f"{spread([float(m.statements or 0) for m in ivm]).replace('.00', '')} | "
            f"{spread([float(m.commits or 0) for m in ivm]).replace('.00', '')} |")
    lines += ["", "Where the IVM runs' time goes, the first batch of each (the adapter's statement log):", "",
              "| mode | scope | statements: seconds each | sum s | exec s |", "|---|---|---|---|---|"]
    for mode, scope in order:
        first = next(m for m in batches if (m.mode, m.scope, m.variant) == (mode, scope, "ivm"))
        timed = [(label, secs) for entries in first.statement_log.values() for label, secs in entries]
        lines.append(f"| {mode} | {scope} | {' · '.join(f'{label} {secs:.2f}' for label, secs in timed)} | "
                     f"{sum(secs for _, secs in timed):.2f} | {first.execute:.2f} |")
    builds = [m for m in measures if m.batch == "initial build"]
    if builds:
        lines += ["", "First builds (`--full-refresh`, the whole project in one process each): "
                  + "; ".join(f"{m.variant} {m.execute:.1f} s exec, {m.process:.1f} s process" for m in builds) + "."]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "invocations.md"), "w") as f:
        f.write(text)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    ap.add_argument("--shape", default="rf", choices=bench.SHAPES, help="the batches' shape (run.plan_batch)")
    ap.add_argument("--batch", default="0.1%", help="the batches' size, a percentage of orders (default 0.1%%)")
    ap.add_argument("--repeat", type=int, default=2, help="batches per mode with each group in its own invocations")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, in order: " + ",".join(MODES))
    ap.add_argument("--groups", default=DEFAULT_GROUPS, help="comma-separated groups of run.py")
    ap.add_argument("--out", default=os.path.join(bench.RESULTS, "invocations"), help="results directory")
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    if any(m not in MODES for m in modes):
        ap.error(f"modes are {', '.join(MODES)}")
    groups = [g for g in bench.GROUPS if g.name in args.groups.split(",")]
    if not groups:
        ap.error("no known group")
    frac = float(args.batch.rstrip("%")) / 100
    out_dir = os.path.abspath(args.out)
    log = bench.progress_log(out_dir)

    started = time.monotonic()
    shutil.rmtree(SESSION_DIR, ignore_errors=True)
    generate.generate_parquet(args.sf)
    b = Bench()
    measures: List[Invocation] = []
    try:
        sql = b.up()
        log(f"Spark Thrift Server on {b.server.host}:{b.server.port} in {b.server.start_seconds:.1f}s")
        counts = generate.load_iceberg(sql, args.sf)
        changes = bench.Changes(sql)
        log(f"loaded SF {args.sf:g}: {counts}")
        if modes[0] == "process":
            b.down()
        everything = bench.Group("project", "", [x for g in groups for x in g.ivm], [x for g in groups for x in g.full])
        for variant, models in (("ivm", everything.ivm), ("full", everything.full)):
            measures.append(b.measure(modes[0], "initial build", "project", variant, models, full_refresh=True))
        b.check(measures[-2], groups)
        log(f"built ({modes[0]}): ivm {measures[-2].process:.1f}s, full {measures[-1].process:.1f}s"
            + ("" if measures[-2].correct else f"  MISMATCH {measures[-2].mismatch}"))
        seed = 17
        for mode in modes:
            for i in range(args.repeat + 1):
                project = i == args.repeat
                label = f"{args.shape} {args.batch} #{i + 1}" + (" (project)" if project else "")
                seed += 11
                b.up()  # the driver commits through the server
                rows = changes.commit(bench.plan_batch(args.shape, frac, counts), seed=seed)
                log(f"-- {mode} batch {label}: {sum(rows.values())} change rows {rows} (seq {changes.seq})")
                run_batch(b, mode, label, groups, project, measures, log)
    finally:
        b.down()
    elapsed = time.monotonic() - started
    meta = {"sf": args.sf, "shape": args.shape, "batch": args.batch, "repeat": args.repeat, "modes": modes,
            "groups": [g.name for g in groups], "counts": counts, "elapsed_s": elapsed, "machine": bench.machine(),
            "server_start_s": b.server.start_seconds}
    with open(os.path.join(out_dir, "invocations.json"), "w") as f:
        json.dump({"meta": meta, "measures": [asdict(m) for m in measures]}, f, indent=1)
    print(write_report(out_dir, meta, measures))
    log(f"done in {elapsed / 60:.1f} min: {out_dir}/invocations.md")
    return 1 if any(m.correct is False for m in measures) else 0


if __name__ == "__main__":
    sys.exit(main())
