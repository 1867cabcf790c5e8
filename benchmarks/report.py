#!/usr/bin/env python
"""results.json -> results.md + refresh_time.png (run.py calls this; it can be re-run on its own:
`python benchmarks/report.py benchmarks/results/results.json`)."""

from __future__ import annotations

import json
import os
import sys

BATCHES = ["empty", "0.01%", "0.1%", "1%", "10%"]
SINGLE_TABLE = ["q1_agg", "q1_rollup", "distinct_ship", "q1_snap"]  # issue 15: single-table aggregates ≥ 20×, joins ≥ 10×


def _f(x, nd=2):
    return "" if x is None else f"{x:.{nd}f}"


def _r(x):
    """A ratio: one decimal from 1 up, two below (0.04× reads better than 0.0×)."""
    if x is None:
        return ""
    return f"{x:.1f}×" if x >= 1 else f"{x:.2f}×"


def _ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _checked(m) -> str:
    """A measure's comparison with its twin: ✓, ✗ and the mismatch, or nothing (not checked)."""
    m = m or {}
    return {True: "✓", False: "✗ " + m.get("mismatch", ""), None: ""}[m.get("correct")]


def _mb(b):
    return f"{b / 1e6:.1f}"


def _opt(x):
    return "" if x is None else str(x)


def _scanned(m) -> str:
    """A measure's planned scans: data files / MB (blank in results from before they were measured)."""
    if not m or "files" not in m:
        return ""
    return f"{m['files']:,} / {_mb(m['file_bytes'])}"


def _read(m) -> str:
    return _mb(m["bytes_read"]) if m and "bytes_read" in m else ""


def _compiled(m) -> str:
    """The classes Spark compiled in a measure's invocation and the seconds it took (blank in
    results from before they were counted)."""
    if not m or "classes" not in m:
        return ""
    return f"{m['classes']} ({m['compiling']:.2f} s)"


def _compiled_pair(ivm, full) -> str:
    """``_compiled`` of an IVM measure and its twin's: "ivm / full", blank when neither counted."""
    a, b = _compiled(ivm), _compiled(full)
    return f"{a} / {b}" if a or b else ""


def write(path: str, outdir: str) -> None:
    with open(path) as f:
        data = json.load(f)
    meta, ms, sizes = data["meta"], data["measures"], data["sizes"]
    groups = []
    for m in ms:
        if m["group"] not in groups:
            groups.append(m["group"])

    shapes = meta.get("shapes") or [meta.get("shape", "random")]

    def get(phase, batch, group, variant, shape=None):
        """The measure of a batch of ``shape`` (default: the run's first shape, which the tables
        below are about; the "By shape" table lists every shape)."""
        wanted = shape or shapes[0]
        for m in ms:
            if (m["phase"] == phase and m["batch"] == batch and m["group"] == group and m["variant"] == variant
                    and m.get("shape", "random") == wanted):
                return m
        return None

    big, small = meta["big_sf"], meta["small_sf"]
    L = []
    L.append(f"# incremental_ivm benchmark — TPC-H SF {big:g} (scaling from SF {small:g})\n")
    mc = meta["machine"]
    L.append(f"Machine: {mc['cpus']} CPUs ({mc['cpu']}), {mc['mem']} RAM, {mc['os']}, Python {mc['python']}; "
             f"Spark {meta['spark']} `{meta['conf']}`; Iceberg 1.10.2, Hive/Derby catalog; one process, one JVM "
             f"(dbtRunner); the IVM models' `ivm_policy`: {meta.get('policy', 'incremental')}. Whole run: "
             f"{meta['elapsed_s'] / 60:.1f} min. Base row counts at SF {big:g}: "
             + ", ".join(f"{k} {v:,}" for k, v in meta["counts"].items()) + ".\n")
    L.append("Times are the dbt node's *execute* phase (the materialization: all Spark statements of the refresh), "
             "summed over the group's models; *wall* is the whole in-process `dbt run --select` invocation "
             "(dbt's parse/cache/connection overhead included, about the same for every variant). "
             "**full/IVM** = full-refresh time ÷ incremental time (higher is better). Spark jobs are counted over "
             "the whole invocation. Every IVM result was checked equal (as a multiset) to its `table` twin after "
             "every batch; ✗ marks a mismatch and its time must not be used.\n")

    # ---- main table
    L.append(f"## Refresh time vs change size (SF {big:g})\n")
    for g in groups:
        L.append(f"### {g}\n")
        has_merge = any(m["group"] == g and m["variant"] == "merge" for m in ms)
        hdr = ["batch", "change rows", "IVM s", "full s", "**full/IVM**"]
        if has_merge:
            hdr += ["merge s", "merge/IVM"]
        hdr += ["IVM wall s", "full wall s", "wall full/IVM", "IVM stmts", "IVM jobs", "full jobs", "IVM mode",
                "rows +/−", "IVM = twin"]
        if has_merge:
            hdr.append("merge = twin")
        L.append("| " + " | ".join(hdr) + " |")
        L.append("|" + "---|" * len(hdr))
        for b in ["initial build"] + BATCHES:
            i, fu, me = get("main", b, g, "ivm"), get("main", b, g, "full"), get("main", b, g, "merge")
            if i is None or fu is None:
                continue
            row = [b, str(i["change_rows"]) if b != "initial build" else "", _f(i["seconds"]), _f(fu["seconds"]),
                   f"**{_r(_ratio(fu['seconds'], i['seconds']))}**"]
            if has_merge:
                row += [_f(me["seconds"]) if me else "", _r(_ratio(me["seconds"], i["seconds"])) if me else ""]
            row += [_f(i["wall"]), _f(fu["wall"]), _r(_ratio(fu["wall"], i["wall"])), str(i["statements"]),
                    str(i["jobs"]), str(fu["jobs"]), i["modes"],
                    f"+{i['rows_inserted']}/−{i['rows_deleted']}" if b != "initial build" else "",
                    _checked(i)]
            if has_merge:
                row.append(_checked(me))
            L.append("| " + " | ".join(row) + " |")
        L.append("")

    # ---- rebuilds (run.py --rebuilds)
    rebuilds = sorted({m["batch"] for m in ms if m["phase"] == "main" and m["batch"].startswith("rebuild")})
    if rebuilds:
        L.append(f"## Rebuilds (`--full-refresh`, warm, after the batches; SF {big:g})\n")
        L.append("Each round rebuilds the IVM models and their `table` twins, the first of the pair alternating. "
                 "**IVM/full** = rebuild time ÷ the twin's (lower is better; target ≤ 1.5×). *classes compiled*: "
                 "what Spark's code generator compiled in each invocation (classes not in its code cache, which "
                 "holds 100), and the seconds it took; a class compiled again also runs interpreted until the "
                 "JIT takes it.\n")
        L.append("| model | round | IVM s | full s | **IVM/full** | IVM stmts | classes compiled, IVM / full | "
                 "IVM = twin |")
        L.append("|---|---|---|---|---|---|---|---|")
        for g in groups:
            for b in rebuilds:
                i, fu = get("main", b, g, "ivm", "random"), get("main", b, g, "full", "random")
                if i is None or fu is None:
                    continue
                L.append(f"| {g} | {b} | {_f(i['seconds'])} | {_f(fu['seconds'])} | "
                         f"**{_r(_ratio(i['seconds'], fu['seconds']))}** | {i['statements']} | "
                         f"{_compiled_pair(i, fu)} | {_checked(i)} |")
        L.append("")

    # ---- summary of speed-ups
    L.append(f"## Speed-up summary (full refresh ÷ incremental, execute phase, SF {big:g})\n")
    L.append("| model | " + " | ".join(BATCHES[1:]) + " | empty batch: IVM s / wall s / jobs |")
    L.append("|---|" + "---|" * (len(BATCHES)))
    for g in groups:
        cells = []
        for b in BATCHES[1:]:
            i, fu = get("main", b, g, "ivm"), get("main", b, g, "full")
            r = _ratio(fu["seconds"], i["seconds"]) if i and fu else None
            bad = "" if not i or i["correct"] is not False else " ✗"
            cells.append(_r(r) + bad)
        e = get("main", "empty", g, "ivm")
        cells.append(f"{_f(e['seconds'])} / {_f(e['wall'])} / {e['jobs']}" if e else "")
        L.append(f"| {g} | " + " | ".join(cells) + " |")
    L.append("")

    # ---- scaling
    has_scale = any(m["phase"] == "scale" for m in ms)
    scale_rows = []
    if has_scale:
        L.append(f"## Fixed change size, base ×10 (SF {small:g} → SF {big:g})\n")
        L.append(f"The same absolute batch (the size of SF {big:g}'s 0.1 % batch) applied at SF {small:g} "
                 f"(where it is ~1 %) and at SF {big:g}. Target: the 10× larger base makes a refresh at most 1.5× slower.\n")
        L.append(f"| model | change rows SF {small:g} / {big:g} | IVM s SF {small:g} | IVM s SF {big:g} | **IVM ×** | "
                 f"full s SF {small:g} | full s SF {big:g} | full × |")
        L.append("|---|---|---|---|---|---|---|---|")
        for g in groups:
            a, b = get("scale", "fixed", g, "ivm"), get("main", "0.1%", g, "ivm")
            fa, fb = get("scale", "fixed", g, "full"), get("main", "0.1%", g, "full")
            if not (a and b and fa and fb):
                continue
            r = _ratio(b["seconds"], a["seconds"])
            scale_rows.append((g, r))
            L.append(f"| {g} | {a['change_rows']} / {b['change_rows']} | {_f(a['seconds'])} | {_f(b['seconds'])} | "
                     f"**{_f(r)}×** | {_f(fa['seconds'])} | {_f(fb['seconds'])} | {_f(_ratio(fb['seconds'], fa['seconds']))}× |")
        L.append("")

    # ---- state
    st = sizes.get("main", {})
    if st:
        L.append(f"## State size at the end of the run (SF {big:g}, Iceberg files of the current snapshot)\n")
        L.append("*indexed inputs* = the base tables for which the model keeps a join index (all their columns); "
                 "*state* = join indexes + aggregate/distinct state (not the published `__changes`, which is never "
                 "pruned yet, nor the log).\n")
        L.append("| model | join indexes MB (rows) | agg/distinct state MB | **state MB** | indexed inputs MB (rows) | "
                 "**state / indexed inputs** | all inputs read MB | state / all inputs | `__changes` MB |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for g in groups:
            s = st.get(g)
            if not s:
                continue
            state = s["index"] + s["agg_state"]
            L.append(f"| {g} | {_mb(s['index'])} ({s['index_rows']:,}) | {_mb(s['agg_state'])} | **{_mb(state)}** | "
                     f"{_mb(s['indexed_inputs'])} ({s['indexed_rows']:,}) | "
                     f"**{_f(_ratio(state, s['indexed_inputs']))}** | {_mb(s['all_inputs'])} | "
                     f"{_f(_ratio(state, s['all_inputs']))} | {_mb(s['changes'])} |")
        L.append("")
        L.append("<details><summary>state tables</summary>\n")
        L.append("| table | MB | rows | files |")
        L.append("|---|---|---|---|")
        for g in groups:
            for t, v in st.get(g, {}).get("tables", {}).items():
                L.append(f"| {t} | {_mb(v['bytes'])} | {v['rows']:,} | {v['files']} |")
        L.append("\n</details>\n")

    # ---- every shape
    L.append(f"## By shape (SF {big:g}): full ÷ IVM execute time, statements, commits, Spark jobs, scans\n")
    L.append(f"Shapes in this run, in order: {', '.join(shapes)} (`run.py --shape`; `plan_batch` defines them). "
             "Tables above are about the first. *commits*: Iceberg snapshots the IVM models' tables (target, "
             "state, log, published changes) gained in the invocation. *files / MB scanned*: the data files "
             "every scan of the invocation planned after Iceberg pruned them, and their size (Iceberg's scan "
             "reports, the custom metrics of each scan node); *MB read*: what its Spark jobs read from files "
             "(input metrics, after Parquet skipped row groups; also footers). *classes*: what Spark's code "
             "generator compiled in the invocation, and the seconds it took.\n")
    L.append("| shape | batch | change rows | model | IVM s | full s | **full/IVM** | statements | commits | jobs | "
             "classes | IVM files / MB scanned | IVM MB read | full files / MB scanned | mode |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in ms:
        if (m["phase"] != "main" or m["variant"] != "ivm" or m["batch"] == "initial build"
                or m["batch"].startswith("rebuild")):  # (rebuilds are not batches of a shape: their own table)
            continue
        fu = get("main", m["batch"], m["group"], "full", m.get("shape", "random"))
        ok = "" if m.get("correct") is not False else " ✗"
        L.append(f"| {m.get('shape', 'random')} | {m['batch']} | {m['change_rows']:,} | {m['group']} | "
                 f"{_f(m['seconds'])}{ok} | {_f(fu['seconds'] if fu else None)} | "
                 f"**{_r(_ratio(fu['seconds'] if fu else None, m['seconds']))}** | {m['statements']} | "
                 f"{_opt(m.get('commits'))} | {m['jobs']} | {_compiled(m)} | {_scanned(m)} | {_read(m)} | "
                 f"{_scanned(fu)} | "
                 f"{m['modes']} |")
    L.append("")

    # ---- statements
    L.append(f"## Where the time goes: IVM statements of the 0.1 % batch (SF {big:g})\n")
    L.append("From the adapter's debug log (`[ivm <model>] statement N took X s`, benchmarks/project/logs/dbt.log); "
             "see dbt/adapters/spark_ivm/refresh/protocol.py (and apply.py) for the order of the statements.\n")
    L.append("| model | statements: seconds each | sum s | node execute s |")
    L.append("|---|---|---|---|")
    for g in groups:
        i = get("main", "0.1%", g, "ivm")
        if not i:
            continue
        for model, items in i["statement_log"].items():
            secs = [x[1] if isinstance(x, list) else x for x in items]
            cells = [f"{x[0]} {x[1]:.2f}" if isinstance(x, list) else f"{x:.2f}" for x in items]
            L.append(f"| {model} | {' · '.join(cells)} | {sum(secs):.2f} | "
                     f"{_f(i['seconds']) if len(i['statement_log']) == 1 else ''} |")
    L.append("")

    # ---- targets
    L.append("## Targets\n")

    def verdict(ok):
        return "**met**" if ok else "**not met**"

    L.append(f"Issue 15's targets, defined at SF 10 (this run: SF {big:g}); each ratio is full ÷ IVM execute time "
             "of the same batch, a range over the batches of that shape and size.\n")
    empties = [m for m in ms if m["phase"] == "main" and m["variant"] == "ivm" and m["batch"] == "empty"]
    if empties:
        worst_e = max(e["seconds"] for e in empties)
        measured = all("files" in e for e in empties)
        scanned = max((e.get("file_bytes", 0) for e in empties), default=0)
        each = ", ".join(f"{e['group']} {_f(e['seconds'])} s" for e in empties)
        L.append(f"* Empty batch ≤ 0.3 s execute, no Spark job over data (only the model's log is read: under "
                 f"1 MB scanned): max execute {_f(worst_e)} s ({each}); most scanned "
                 f"{_mb(scanned) + ' MB' if measured else '(not measured)'} → "
                 f"{verdict(worst_e <= 0.3 and measured and scanned < 1e6)}")

    one_row = [m for m in ms if m["phase"] == "main" and m["variant"] == "ivm" and m["batch"].startswith("1 row")
               and m["group"] in SINGLE_TABLE]
    if one_row:
        ok = all(m["seconds"] <= 1.0 and (m.get("commits") or 0) <= 4 and (m.get("statements") or 0) <= 6
                 and m["correct"] is not False for m in one_row)
        each = ", ".join(f"{m['group']} {_f(m['seconds'])} s, {m.get('commits')} commits, "
                         f"{m.get('statements')} statements" for m in one_row)
        L.append(f"* A 1-row change to a single-table aggregate (`row`) ≤ 1.0 s execute, ≤ 4 Iceberg commits, "
                 f"≤ 6 statements: {each} → {verdict(ok)}" + ("" if big == 1 else f" (at SF {big:g})"))

    def ratios(shape, size, g):
        """full ÷ IVM of every batch of ``shape`` at ``size`` ("0.1%", or "trickle") for group ``g``."""
        out = []
        for i in ms:
            if (i["phase"] == "main" and i["variant"] == "ivm" and i["group"] == g
                    and i.get("shape", "random") == shape and i["batch"].split(" #")[0] == size):
                fu = get("main", i["batch"], g, "full", shape)
                r = _ratio(fu["seconds"], i["seconds"]) if fu else None
                if r is not None:
                    out.append((r, i["correct"]))
        return out

    for shape, size, need_of in (("rf", "0.1%", lambda g: 20 if g in SINGLE_TABLE else 10),
                                 ("trickle", "trickle", lambda g: 20),
                                 ("random", "0.1%", lambda g: 2)):
        for g in groups:
            rs = ratios(shape, size, g)
            if not rs:
                continue
            need = need_of(g)
            lo, hi = min(r for r, _ in rs), max(r for r, _ in rs)
            ok = lo >= need and all(c is not False for _, c in rs)
            span = _r(lo) if lo == hi else f"{_r(lo)}–{_r(hi)}"
            L.append(f"* `{shape}`{'' if shape == 'trickle' else ' ' + size}, {g}: {span} (target ≥ {need}×) → "
                     f"{verdict(ok)}" + ("" if big >= 10 else f" (at SF {big:g})"))
    if meta.get("policy") == "auto":
        slowdowns = []
        for i in ms:
            if i["phase"] == "main" and i["variant"] == "ivm" and i["fraction"] is not None:  # a change batch
                fu = get("main", i["batch"], i["group"], "full", i.get("shape", "random"))
                r = _ratio(i["seconds"], fu["seconds"]) if fu else None
                if r is not None:
                    slowdowns.append((r, i))
        if slowdowns:
            worst_r, worst_m = max(slowdowns, key=lambda x: x[0])
            L.append(f"* Under `ivm_policy: auto`, never more than 1.2× slower than the twin's full refresh: worst "
                     f"IVM ÷ full {_f(worst_r)} (`{worst_m.get('shape', 'random')}` {worst_m['batch']}, "
                     f"{worst_m['group']}, {worst_m['modes']}; {len(slowdowns)} refreshes) → {verdict(worst_r <= 1.2)}")
    if scale_rows:
        worst = max(r for _, r in scale_rows if r is not None)
        L.append(f"* Fixed change size, base ×10: worst slowdown {_f(worst)}× ("
                 + ", ".join(f"{g} {_f(r)}×" for g, r in scale_rows) + f") (target ≤ 1.5×) → {verdict(worst <= 1.5)}")
    if st:
        state_ratios = [(g, _ratio(s["index"] + s["agg_state"], s["indexed_inputs"])) for g, s in st.items()]
        state_ratios = [(g, r) for g, r in state_ratios if r is not None]
        if state_ratios:
            worst = max(r for _, r in state_ratios)
            L.append(f"* State ≤ 1× the inputs it indexes: worst {_f(worst)} ("
                     + ", ".join(f"{g} {_f(r)}" for g, r in state_ratios) + f") → {verdict(worst <= 1)}")
    bad = [m for m in ms if m["variant"] == "ivm" and m["correct"] is False]
    L.append(f"* Correctness: {len(bad)} IVM mismatches against the twin"
             + (": " + "; ".join(f"{m['phase']}/{m['batch']}/{m['group']}: {m['mismatch']}" for m in bad) if bad else ""))
    badm = [m for m in ms if m["variant"] == "merge" and m["correct"] is False]
    if badm:
        L.append("* Hand-written merge models differing from the twin: "
                 + "; ".join(f"{m['phase']}/{m['batch']}/{m['group']}: {m['mismatch']}" for m in badm))
    L.append("")
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(L))
    plot(ms, groups, big, os.path.join(outdir, "refresh_time.png"))


def plot(ms, groups, big, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    n = len(groups)
    cols = 3
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.0 * rows), squeeze=False)
    styles = {"full": ("full refresh (table twin)", "tab:red", "s", "--"),
              "merge": ("hand-written incremental merge", "tab:gray", "^", ":"),
              "ivm": ("incremental_ivm", "tab:blue", "o", "-")}
    for k, g in enumerate(groups):
        ax = axes[k // cols][k % cols]
        for variant, (label, color, marker, ls) in styles.items():
            xs, ys = [], []
            for j, b in enumerate(BATCHES):
                m = next((m for m in ms if m["phase"] == "main" and m["batch"] == b and m["group"] == g
                          and m["variant"] == variant), None)
                if m is not None:
                    xs.append(j)
                    ys.append(max(m["seconds"], 0.01))
                    if variant == "ivm" and m["correct"] is False:
                        ax.annotate("✗", (j, ys[-1]), color="red", fontsize=14)
            if xs:
                ax.plot(xs, ys, marker=marker, linestyle=ls, color=color, label=label)
        for j, b in enumerate(BATCHES):
            i = next((m for m in ms if m["phase"] == "main" and m["batch"] == b and m["group"] == g and m["variant"] == "ivm"), None)
            fu = next((m for m in ms if m["phase"] == "main" and m["batch"] == b and m["group"] == g and m["variant"] == "full"), None)
            if i and fu and i["seconds"] > 0:
                ax.annotate(_r(fu["seconds"] / i["seconds"]), (j, max(i["seconds"], 0.01)),
                            textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8, color="tab:blue")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo / 1.3, hi * 1.8)
        ax.set_xlim(-0.3, len(BATCHES) - 0.7)
        ax.set_xticks(range(len(BATCHES)))
        ax.set_xticklabels(BATCHES)
        ax.set_xlabel("change batch (% of orders and lineitem)")
        ax.set_ylabel("refresh time, s (log)")
        ax.set_title(g)
        ax.grid(True, which="both", alpha=0.3)
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    fig.suptitle(f"TPC-H SF {big:g}: refresh time vs change size (local[2]; numbers: full refresh ÷ IVM time, >1 means IVM is faster)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "results.json")
    write(src, os.path.dirname(os.path.abspath(src)))
