"""The report as rich tables on the terminal, and the trials as CSV rows."""

from __future__ import annotations

import csv
import io

from rich import box
from rich.console import Console
from rich.table import Table

from mcpworld.report.build import KINDS, Group, Report, TrialRow, not_runnable_lines, testbed_lines


def pct(x: float) -> str:
    return f"{x:.1%}"


def sr_ci(g: Group) -> str:
    return f"{g.sr:.0%} [{g.sr_low:.0%},{g.sr_high:.0%}]"


def compact_table(title: str, *columns: str, first_left: bool = True) -> Table:
    """A compact table: short headers, no outer border, so the report fits an 80-column terminal."""
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 and first_left else "right", no_wrap=True)
    return t


def _group_table(title: str, first: str, rows: dict[str, Group]) -> Table:
    t = compact_table(title, first, "trials", "tasks", "SR [95% CI]", "KSCR", "KSCR prog.")
    for k, g in rows.items():
        t.add_row(k, str(g.trials), str(g.tasks), sr_ci(g), pct(g.kscr), pct(g.kscr_progress))
    return t


def _difficulty_table(title: str, per_mode: dict[str, dict[str, Group]]) -> Table:
    t = compact_table(title, "difficulty", *per_mode)
    for d in dict.fromkeys(d for g in per_mode.values() for d in g):
        t.add_row(d, *[sr_ci(g[d]) if d in g else "-" for g in per_mode.values()])
    return t


def print_report(rep: Report, console: Console, per_task: bool = True) -> None:
    console.print(f"[b]runs[/b] {', '.join(rep.runs)}  [b]agent[/b] {rep.agent}"
                  f"{'  [b]no bash[/b]' if rep.no_bash else ''}", highlight=False)
    t = compact_table("Overview per mode", "mode", "trials", "SR [95% CI]", "KSCR", "KSCR prog.", "WES", "WES grp.")
    for m, g in rep.per_mode.items():
        w = rep.wes[m]
        t.add_row(m, str(g.trials), sr_ci(g), pct(g.kscr), pct(g.kscr_progress), f"{w.value:.3f}", f"{w.grouped:.3f}")
    t.add_section()
    t.add_row("[b]all[/b]", str(rep.overall.trials), sr_ci(rep.overall), pct(rep.overall.kscr),
              pct(rep.overall.kscr_progress), "", "")
    console.print(t)
    t = compact_table("Passed of runnable / of tasks declaring the mode / of all chosen tasks (the paper's)",
                      "mode", "IMPLEMENTED", "STRICT", "STRICT all")
    for m, i in rep.implemented_strict.items():
        t.add_row(m, f"{pct(i.implemented)} ({i.passed:g}/{i.runnable})", f"{pct(i.strict)} ({i.passed:g}/{i.declared})",
                  f"{pct(i.strict_all)} ({i.passed:g}/{i.chosen})")
    console.print(t)
    caps = {(w.step_cap, w.step_cap_source) for w in rep.wes.values()}
    for cap, source in sorted(caps):
        console.print(f"WES step cap S = {cap} ({source}); grouped: "
                      f"{max((w.grouped_tasks for w in rep.wes.values()), default=0)} task(s) declare grouped steps",
                      highlight=False)
    for m, i in rep.implemented_strict.items():
        for line in not_runnable_lines(i.not_runnable):
            console.print(f"not runnable ({m}): {line}", highlight=False)

    console.print(_difficulty_table("SR by difficulty label (Appendix E) and mode (the paper's Table 6)",
                                    rep.per_mode_difficulty))
    console.print(_difficulty_table("SR by difficulty from measured GUI steps (0-5 Easy, 5-10 Medium, 10+ Hard)",
                                    rep.per_mode_measured_difficulty))
    if rep.relabelled:
        console.print(f"{len({t for t in rep.relabelled})} task(s) whose measured GUI steps put them in another bucket: "
                      + ", ".join(f"{t} {a}->{b}" for t, (a, b) in rep.relabelled.items()), highlight=False)
    console.print(_group_table("Per app", "app", rep.per_app))
    if any(len(v) > 1 for v in rep.pass_k.values()):
        t = compact_table("Repeated trials", "mode", "k", "tasks", "pass@k", "pass^k")
        for m, ks in rep.pass_k.items():
            for pk in ks:
                t.add_row(m, str(pk.k), str(pk.tasks), pct(pk.pass_at_k), pct(pk.pass_hat_k))
        console.print(t)
    t = compact_table("Cost: steps and tool calls (per kind)", "mode", "steps/trial", "calls", *KINDS, "MCP rate")
    for m, c in rep.cost.items():
        t.add_row(m, f"{c.steps_mean:.1f}", str(c.tool_calls), *(str(c.tool_calls_by_kind.get(k, 0)) for k in KINDS),
                  pct(c.mcp_rate))
    console.print(t)
    t = compact_table("Cost: tokens, time and dollars", "mode", "tokens in", "out", "cache write", "read", "s/trial", "$")
    for m, c in rep.cost.items():
        t.add_row(m, str(c.input_tokens), str(c.output_tokens), str(c.cache_write_tokens), str(c.cache_read_tokens),
                  f"{c.wall_s_mean:.1f}", "-" if c.dollars is None else f"{c.dollars:.2f}")
    console.print(t)
    if rep.cost["all"].api_retries or rep.cost["all"].bad_tool_calls:
        console.print(f"model API requests retried: {rep.cost['all'].api_retries}; malformed or unknown tool calls: "
                      f"{rep.cost['all'].bad_tool_calls}", highlight=False)
    if rep.cost["all"].tool_calls_by_tool:
        console.print("tool calls by tool: " + ", ".join(f"{k}={v}" for k, v in rep.cost["all"].tool_calls_by_tool.items()),
                      highlight=False)
    if rep.failures_by_mode:
        kinds = sorted({k for f in rep.failures_by_mode.values() for k in f})
        t = compact_table("Failures (trials)", "category", *rep.failures_by_mode)
        for k in kinds:
            t.add_row(k, *[str(f.get(k, 0)) for f in rep.failures_by_mode.values()])
        console.print(t)
    for line in testbed_lines(rep):
        console.print(line, highlight=False)
    if rep.setup_restarts:
        console.print(f"setup restarts: {rep.setup_restarts} (the app crashed while starting; the trial started afresh)",
                      highlight=False)
    if any(c.get("api") for c in rep.channels.values()):
        t = compact_table("Key steps by channel", "channel", *rep.channels)
        for k in ("gui", "api", "unknown"):
            t.add_row(k, *[str(c.get(k, 0)) for c in rep.channels.values()])
        console.print(t)
    for m, sr in rep.sr_gui_only.items():
        if abs(sr - rep.per_mode[m].sr) > 1e-9:
            console.print(f"{m}: SR {rep.per_mode[m].sr:.1%} counting key steps done through the app's API, "
                          f"{sr:.1%} without", highlight=False)
    if per_task:
        console.print(_group_table("Per task", "task:mode", rep.per_task))


def trials_csv(rows: list[TrialRow]) -> str:
    buf = io.StringIO()
    fields = list(TrialRow.model_fields)
    w = csv.DictWriter(buf, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow(r.model_dump())
    return buf.getvalue()
