"""A bench result as a terminal table with numbered notes, or as Markdown (for the README)."""

from __future__ import annotations

from rich.console import Console

from mcpworld.bench.run import BenchResult
from mcpworld.bench.stats import Figure


def _note(f: Figure) -> str:
    return "; ".join(x for x in (f"baseline: {f.baseline_name}" if f.baseline_name else "",
                                 f"target: {f.target}" if f.target else "", f.note) if x)


def _cells(f: Figure) -> list[str]:
    v, unit = f.value, f" {f.unit}"
    return [str(v.n), f"{v.median:.3g}{unit}", f"{v.p95:.3g}", f"{v.p99:.3g}",
            f"{f.baseline.median:.3g}{unit}" if f.baseline else "-", f"{f.ratio:.2f}x" if f.ratio is not None else "-"]


HEADERS = ("figure", "n", "median", "p95", "p99", "baseline median", "ratio")


def title(r: BenchResult) -> str:
    m = r.machine
    return f"mcpworld bench on {m['cpus']} CPUs ({m['cpu']}), {m['memory_gb']} GB, Python {m['python']}"


def print_result(r: BenchResult, console: Console) -> None:
    from mcpworld.report.text import compact_table

    console.print(title(r), highlight=False)
    for part in dict.fromkeys(f.part for f in r.figures):
        table = compact_table(part, "figure", "n", "median", "p95", "p99", "baseline", "ratio")
        table.columns[0].no_wrap = False  # the figure's name wraps; the numbers keep their width
        for i, f in enumerate(r.figures, 1):
            if f.part == part:
                table.add_row(f"[{i}] {f.name}", *_cells(f))
        console.print(table)
    for i, f in enumerate(r.figures, 1):
        console.print(f"[{i}] {f.name}: {_note(f)}", highlight=False)


def markdown(r: BenchResult) -> str:
    lines = [f"{title(r)}; `--size` {'full' if r.sizes.events >= 1000 else 'reduced'}, {r.seconds:.0f} s.", "",
             "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for i, f in enumerate(r.figures, 1):
        lines.append(f"| [{i}] {f.part}: {f.name} | " + " | ".join(_cells(f)) + " |")
    lines.append("")
    lines += [f"{i}. {f.name}: {_note(f)}" for i, f in enumerate(r.figures, 1)]
    return "\n".join(lines)
