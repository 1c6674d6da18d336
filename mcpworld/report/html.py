"""The report as one self-contained HTML file: tables, plots (inline SVG) and a timeline per trial.

Every number a table shows carries data-metric (its path in summary.json) and data-format, so a
test can read the page in a browser and check each figure against summary.json.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path

from mcpworld.report.build import KINDS, Report, not_runnable_lines, testbed_lines
from mcpworld.rundir import TrialDir

FORMATS = {"pct": lambda v: f"{v:.1%}", "int": lambda v: str(int(v)), "f3": lambda v: f"{v:.3f}",
           "f1": lambda v: f"{v:.1f}", "f2": lambda v: f"{v:.2f}", "g": lambda v: f"{v:g}"}

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0 16px} td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left} th{background:#f4f4f4}
.pass{color:#1a7f37;font-weight:600} .fail{color:#c62828;font-weight:600} .note{color:#666;font-size:12px}
.plots{display:flex;flex-wrap:wrap;gap:16px} .plots figure{margin:0}
details{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:4px 8px} summary{cursor:pointer}
.tl{display:grid;grid-template-columns:90px 1fr;gap:4px 12px;margin:8px 0}
.tl .t{color:#666;font-variant-numeric:tabular-nums} .ev{background:#fff8e1;padding:2px 6px;border-radius:3px}
.ev.key{background:#e3f2fd;font-weight:600} .call img{display:block;margin-top:4px;border:1px solid #ccc}
code{font-size:12px;word-break:break-all}
"""


def cell(path: str, value, fmt: str) -> str:
    if value is None:
        return "<td>-</td>"
    return f'<td data-metric="{path}" data-format="{fmt}">{FORMATS[fmt](value)}</td>'


def _table(headers: list[str], rows: list[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _group_rows(prefix: str, groups: dict) -> list[str]:
    rows = []
    for k, g in groups.items():
        p = f"{prefix}.{k}"
        rows.append(f"<tr><td>{html.escape(k)}</td>{cell(p + '.trials', g.trials, 'int')}{cell(p + '.tasks', g.tasks, 'int')}"
                    f"{cell(p + '.sr', g.sr, 'pct')}<td>[{g.sr_low:.0%}, {g.sr_high:.0%}]</td>"
                    f"{cell(p + '.kscr', g.kscr, 'pct')}{cell(p + '.kscr_progress', g.kscr_progress, 'pct')}</tr>")
    return rows


GROUP_HEADERS = ["", "trials", "tasks", "SR", "95% CI", "KSCR", "KSCR (progress)"]


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def plots(rep: Report) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    # SR by difficulty and mode, with the Wilson intervals
    diffs = list(dict.fromkeys(d for g in rep.per_mode_difficulty.values() for d in g))
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    width = 0.8 / max(1, len(rep.per_mode_difficulty))
    for i, (m, g) in enumerate(rep.per_mode_difficulty.items()):
        xs = [j + i * width for j, d in enumerate(diffs) if d in g]
        ys = [g[d].sr for d in diffs if d in g]
        err = [[g[d].sr - g[d].sr_low for d in diffs if d in g], [g[d].sr_high - g[d].sr for d in diffs if d in g]]
        ax.bar(xs, ys, width, yerr=err, capsize=3, label=m)
    ax.set_xticks([j + width * (len(rep.per_mode_difficulty) - 1) / 2 for j in range(len(diffs))], diffs)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("SR (95% Wilson interval)")
    ax.legend(fontsize=8)
    out.append(("SR by difficulty label (Appendix E) and mode", _svg(fig)))
    # KSCR distribution
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    for m in rep.per_mode:
        ax.hist([r.kscr for r in rep.trial_rows if r.mode == m], bins=[i / 10 for i in range(11)], alpha=0.6, label=m)
    ax.set_xlabel("KSCR per trial")
    ax.set_ylabel("trials")
    ax.legend(fontsize=8)
    out.append(("KSCR distribution", _svg(fig)))
    # agent steps against human steps
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    rows = [r for r in rep.trial_rows if r.human_steps is not None]
    for ok, colour, label in ((True, "#1a7f37", "passed"), (False, "#c62828", "failed")):
        pts = [(r.human_steps, r.steps) for r in rows if r.success == ok]
        if pts:
            ax.scatter(*zip(*pts), s=14, c=colour, label=label, alpha=0.7)
    top = max([1] + [max(r.human_steps or 0, r.steps) for r in rows])
    ax.plot([0, top], [0, top], "--", color="#888", linewidth=1, label="agent = human")
    ax.set_xlabel("human steps (GUI reference)")
    ax.set_ylabel("agent steps")
    ax.legend(fontsize=8)
    out.append(("Agent steps against human steps", _svg(fig)))
    return out


def _img(path: Path, width: int | None = None) -> str:
    if not path.exists():
        return ""
    data = path.read_bytes()
    mime = "image/jpeg"
    if path.suffix == ".png":  # the final screenshot: shrink it like the others
        from PIL import Image

        img = Image.open(io.BytesIO(data)).convert("RGB")
        img.thumbnail((480, 480))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=70)
        data = buf.getvalue()
    w = f' width="{width}"' if width else ""
    return f'<img loading="lazy"{w} src="data:{mime};base64,{base64.b64encode(data).decode()}">'


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:  # a line cut short by a killed runner
            continue
    return out


def _timings(t: dict) -> str:
    names = (("open_s", "desktop"), ("reset_s", "reset"), ("app_ready_s", "app ready"), ("gateway_s", "tools"),
             ("agent_s", "agent"), ("query_s", "state query"), ("teardown_s", "teardown"), ("total_s", "total"))
    return "timings: " + ", ".join(f"{label} {t[k]:.2f}s" for k, label in names if k in t)


def timeline(row, index: int) -> str:
    trial = TrialDir(Path(row.dir))
    d = trial.path
    result = json.loads(trial.result.read_text()) if trial.result.exists() else {}
    verdict = result.get("verdict") or {}
    key_events = {(s.get("event_stream"), s.get("event_seq")): s["id"] for s in verdict.get("key_steps", []) if s.get("reached")}
    items = []
    for c in _jsonl(trial.tool_calls):
        args = json.dumps(c.get("args", {}), ensure_ascii=False)
        shot = _img(d / c["shot"], 240) if c.get("shot") else ""
        err = ' <span class="fail">error</span>' if c.get("is_error") else ""
        items.append((c["ts"], f'<div class="call"><b>#{c["n"]} {html.escape(c["tool"])}</b> <code>{html.escape(args[:300])}'
                      f'</code> <span class="note">{c.get("duration_s", 0):.2f}s</span>{err}{shot}</div>'))
    for e in _jsonl(trial.events):
        step = key_events.get((e.get("stream"), e.get("seq")))
        mark = f" → key step <b>{html.escape(step)}</b>" if step else ""
        payload = html.escape(json.dumps(e.get("payload", {}), ensure_ascii=False)[:200])
        items.append((e.get("received", e.get("ts", 0)), f'<div class="ev{" key" if step else ""}">{html.escape(e.get("source", "?"))}: '
                      f'{html.escape(e.get("name", "?"))}{mark} <code>{payload}</code></div>'))
    items.sort(key=lambda it: it[0])
    t0 = result.get("started") or (items[0][0] if items else 0)
    grid = "".join(f'<div class="t">+{ts - t0:.2f}s</div>{body}' for ts, body in items)
    steps = ", ".join(f"{s['id']}={'yes' if s.get('reached') else 'no'}" for s in verdict.get("key_steps", []))
    mark = ('<span class="pass">pass</span>' if row.success
            else f'<span class="note">testbed failure ({html.escape(row.failure or "?")})</span>' if row.testbed_failure
            else f'<span class="fail">fail ({html.escape(row.failure or "?")})</span>')
    return (f'<details id="trial-{index}"><summary>{html.escape(row.task)} · {row.mode} · #{row.trial} · {mark} · '
            f'KSCR {row.kscr:.0%} · {row.steps} steps · {row.wall_s:.1f}s</summary>'
            f'<p>verdict: {html.escape(verdict.get("reason", ""))}<br>key steps: {html.escape(steps)}'
            f'{"<br>detail: " + html.escape(row.failure_detail) if row.failure_detail else ""}'
            f'<br><span class="note">{html.escape(_timings(result.get("timings") or {}))}</span></p>'
            f'<div class="tl">{grid}</div><p>final screen:</p>{_img(trial.final_png)}</details>')


def render(rep: Report) -> str:
    parts = [f"<h1>mcpworld report</h1><p>runs: {html.escape(', '.join(rep.runs))}<br>agent: {html.escape(rep.agent)}"
             f"{' · no bash' if rep.no_bash else ''}</p>"]
    rows = []
    for m, g in rep.per_mode.items():
        i, w = rep.implemented_strict[m], rep.wes[m]
        rows.append(f"<tr><td>{m}</td>{cell(f'per_mode.{m}.trials', g.trials, 'int')}{cell(f'per_mode.{m}.sr', g.sr, 'pct')}"
                    f"<td>[{g.sr_low:.0%}, {g.sr_high:.0%}]</td>{cell(f'per_mode.{m}.kscr', g.kscr, 'pct')}"
                    f"{cell(f'per_mode.{m}.kscr_progress', g.kscr_progress, 'pct')}"
                    f"{cell(f'implemented_strict.{m}.implemented', i.implemented, 'pct')}"
                    f"{cell(f'implemented_strict.{m}.strict', i.strict, 'pct')}"
                    f"{cell(f'implemented_strict.{m}.strict_all', i.strict_all, 'pct')}"
                    f"{cell(f'wes.{m}.value', w.value, 'f3')}{cell(f'wes.{m}.grouped', w.grouped, 'f3')}"
                    f"{cell(f'wes.{m}.step_cap', w.step_cap, 'int')}</tr>")
    o = rep.overall
    rows.append(f"<tr><th>all</th>{cell('overall.trials', o.trials, 'int')}{cell('overall.sr', o.sr, 'pct')}"
                f"<td>[{o.sr_low:.0%}, {o.sr_high:.0%}]</td>{cell('overall.kscr', o.kscr, 'pct')}"
                f"{cell('overall.kscr_progress', o.kscr_progress, 'pct')}" + "<td></td>" * 6 + "</tr>")
    parts.append("<h2>Overview</h2>" + _table(["mode", "trials", "SR", "95% CI", "KSCR", "KSCR (progress)", "IMPLEMENTED",
                                              "STRICT", "STRICT all", "WES", "WES grouped", "step cap S"], rows))
    notes = [f"WES {m}: S = {w.step_cap} ({w.step_cap_source}); {w.grouped_tasks} task(s) declare grouped steps"
             for m, w in rep.wes.items()]
    for m, i in rep.implemented_strict.items():
        notes.append(f"IMPLEMENTED/STRICT {m}: {i.passed:g} passed of {i.runnable} runnable, {i.declared} declaring "
                     f"the mode, {i.chosen} chosen (STRICT all, the paper's denominator, counts the "
                     f"{len(i.not_declared)} not declaring it as failures)")
        notes += [f"not runnable ({m}): {line}" for line in not_runnable_lines(i.not_runnable)]
    parts.append("".join(f'<p class="note">{html.escape(n)}</p>' for n in notes))
    parts.append('<h2>Plots</h2><div class="plots">' + "".join(
        f"<figure>{svg}<figcaption>{html.escape(title)}</figcaption></figure>" for title, svg in plots(rep)) + "</div>")
    for m, groups in rep.per_mode_difficulty.items():
        parts.append(f"<h2>By difficulty label (Appendix E): {m}</h2>"
                     + _table(GROUP_HEADERS, _group_rows(f"per_mode_difficulty.{m}", groups)))
    for m, groups in rep.per_mode_measured_difficulty.items():
        parts.append(f"<h2>By difficulty from measured GUI steps: {m}</h2>"
                     + _table(GROUP_HEADERS, _group_rows(f"per_mode_measured_difficulty.{m}", groups)))
    if rep.relabelled:
        parts.append('<p class="note">' + html.escape("measured GUI steps put these tasks in another bucket: " + ", ".join(
            f"{t} {a}->{b}" for t, (a, b) in rep.relabelled.items())) + "</p>")
    parts.append("<h2>By app</h2>" + _table(GROUP_HEADERS, _group_rows("per_app", rep.per_app)))
    if any(len(v) > 1 for v in rep.pass_k.values()):
        rows = [f"<tr><td>{m}</td>{cell(f'pass_k.{m}.{j}.k', pk.k, 'int')}{cell(f'pass_k.{m}.{j}.pass_at_k', pk.pass_at_k, 'pct')}"
                f"{cell(f'pass_k.{m}.{j}.pass_hat_k', pk.pass_hat_k, 'pct')}</tr>"
                for m, ks in rep.pass_k.items() for j, pk in enumerate(ks)]
        parts.append("<h2>Repeated trials</h2>" + _table(["mode", "k", "pass@k", "pass^k"], rows))
    rows = []
    for m, c in rep.cost.items():
        p = f"cost.{m}"
        kinds = "".join(cell(f"{p}.tool_calls_by_kind.{k}", c.tool_calls_by_kind.get(k, 0), "int")
                        if k in c.tool_calls_by_kind else "<td>0</td>" for k in KINDS)
        rows.append(f"<tr><td>{m}</td>{cell(p + '.steps_mean', c.steps_mean, 'f1')}{cell(p + '.tool_calls', c.tool_calls, 'int')}"
                    f"{kinds}{cell(p + '.mcp_rate', c.mcp_rate, 'pct')}{cell(p + '.input_tokens', c.input_tokens, 'int')}"
                    f"{cell(p + '.output_tokens', c.output_tokens, 'int')}{cell(p + '.cache_read_tokens', c.cache_read_tokens, 'int')}"
                    f"{cell(p + '.api_retries', c.api_retries, 'int')}{cell(p + '.bad_tool_calls', c.bad_tool_calls, 'int')}"
                    f"{cell(p + '.wall_s_mean', c.wall_s_mean, 'f1')}{cell(p + '.dollars', c.dollars, 'f2')}</tr>")
    parts.append("<h2>Cost</h2>" + _table(["mode", "steps/trial", "tool calls", *KINDS, "MCP rate",
                                          "input tokens", "output tokens", "cache reads", "API retries",
                                          "bad tool calls", "s/trial", "$"], rows))
    by_tool = rep.cost["all"].tool_calls_by_tool
    if by_tool:
        parts.append(_table(["tool", "calls"], [f"<tr><td>{html.escape(k)}</td>{cell(f'cost.all.tool_calls_by_tool.{k}', v, 'int')}</tr>"
                                               for k, v in by_tool.items()]))
    if rep.failures_by_mode:
        kinds = sorted({k for f in rep.failures_by_mode.values() for k in f})
        rows = [f"<tr><td>{m}</td>" + "".join(cell(f"failures_by_mode.{m}.{k}", f[k], "int") if k in f else "<td>0</td>"
                                              for k in kinds) + "</tr>" for m, f in rep.failures_by_mode.items()]
        parts.append("<h2>Failures</h2>" + _table(["mode", *kinds], rows))
    if rep.testbed_failures or rep.testbed_reruns:
        rows = [f"<tr><td>{html.escape(k)}</td>{cell(f'testbed_failures.{k}', v, 'int')}</tr>"
                for k, v in rep.testbed_failures.items()]
        parts.append("<h2>Testbed failures</h2>" + _table(["category", "trials"], rows)
                     + "".join(f'<p class="note">{html.escape(line)}</p>' for line in testbed_lines(rep)))
    if rep.setup_restarts:
        parts.append("<h2>Setup restarts</h2>" + _table(["the app crashed while starting; the trial started afresh"],
                     [f"<tr>{cell('setup_restarts', rep.setup_restarts, 'int')}</tr>"]))
    parts.append("<h2>Per task</h2>" + _table(GROUP_HEADERS, _group_rows("per_task", rep.per_task)))
    parts.append("<h2>Trials</h2>" + "".join(timeline(r, i) for i, r in enumerate(rep.trial_rows)))
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>mcpworld report</title><style>{CSS}</style></head>'
            f"<body>{''.join(parts)}</body></html>")
