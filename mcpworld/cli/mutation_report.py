"""What `mcpworld tasks mutate` prints: the mutation score per app, the operator families that survived, and
every survivor (a hole in a task's check, or an equivalent to review)."""

from __future__ import annotations

from collections import Counter as Tally  # the test app is called "counter": the core names none

from rich.console import Console

from mcpworld.report.text import compact_table

OUTCOMES = ("killed", "survived", "equivalent", "stillborn", "errors")


def score_text(killed: int, survived: int) -> str:
    n = killed + survived
    return f"{killed / n:.0%}" if n else "-"


def print_summary(summary: dict, console: Console) -> None:
    tasks = summary["tasks"]
    if all("score" not in t for t in tasks.values()):  # --list
        for key, t in tasks.items():
            console.print(f"[b]{key}[/b]: {len(t['mutants'])} mutants", highlight=False)
            for mid, what in t["mutants"].items():
                console.print(f"  {mid}  [dim]{what}[/dim]", highlight=False, soft_wrap=True)
        return
    per_app: dict[str, Tally] = {}
    families: dict[str, Tally] = {"survived": Tally(), "killed": Tally()}
    for t in tasks.values():
        c = per_app.setdefault(t["app"], Tally())
        c["tasks"] += 1
        c["complete"] += bool(t["complete"])
        for o in OUTCOMES:
            c[o] += t.get(o, 0)
        for m in t["mutants"].values():
            if m["outcome"] in families:
                families[m["outcome"]][m["family"]] += 1
    table = compact_table("Mutation score per app (killed / killed + survived; equivalents left out)",
                          "app", "tasks", "100%", "killed", "surv.", "equiv.", "stillb.", "err", "score")
    total = Tally()
    for app, c in sorted(per_app.items()):
        total.update(c)
        table.add_row(app, str(c["tasks"]), str(c["complete"]), *(str(c[o]) for o in OUTCOMES),
                      score_text(c["killed"], c["survived"]))
    table.add_row("all", str(total["tasks"]), str(total["complete"]), *(str(total[o]) for o in OUTCOMES),
                  score_text(total["killed"], total["survived"]))
    console.print(table)
    fam = compact_table("Per operator family", "family", "killed", "survived", "score")
    for f in sorted(set(families["killed"]) | set(families["survived"])):
        k, s = families["killed"][f], families["survived"][f]
        fam.add_row(f, str(k), str(s), score_text(k, s))
    console.print(fam)
    survivors = [(key, mid, m["what"]) for key, t in tasks.items() for mid, m in t["mutants"].items()
                 if m["outcome"] == "survived"]
    if survivors:
        console.print(f"[b]Survivors[/b] ({len(survivors)}): each is a hole in the task's check, or an equivalent "
                      "to list in the task with why", highlight=False)
        for key, mid, what in survivors:
            console.print(f"  {key} {mid}  [dim]{what}[/dim]", highlight=False, soft_wrap=True)
    console.print(f"trials in {summary['run']}", highlight=False)
