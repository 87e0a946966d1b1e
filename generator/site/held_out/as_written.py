"""The accuracy page's second held-out set: the same points run as their authors wrote them
(generator/results/held_out_as_written.py; HELD_OUT.md, "As written"), each beside its
published figure and the first set's estimate of the same id.

A point runs once, at a recorded commit, and until then its estimate is null: its row says
so, the summary counts only the points that ran and says how many have not, and where none
has run the page says that and shows the commands, so that it is true on any day.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator import gpus
from generator.results.held_out_as_written import Point, compare
from generator.results.reference_runs import HeldOutPoint
from generator.site import held_out
from generator.site.escaping import code_block, markdown_text as escape
from generator.site.stats import errors as stats, falls_short
from generator.site.tables import markdown_table
from generator.units import mib, pct
from generator.words import Words

#: Where the transcribed scripts live (the package generator.validate.as_written).
SCRIPTS = "generator/validate/as_written"
_TEXT: dict[str, Words] = {
    "config": Words("Configuration", "配置"),
    "published": Words("Published, measured on a GPU: {} (MiB)", "公开数字，GPU 实测：{} (MiB)"),
    "first": Words("First set, estimated (MiB)", "第一组，估算 (MiB)"),
    "estimated": Words("As written, estimated on the simulated {} (MiB)",
                       "原样运行，在模拟的 {} 上估算 (MiB)"),
    "ratio": Words("As written ÷ published", "原样运行 ÷ 公开数字"),
    "commit": Words("Run at", "运行所在提交"),
    "pending": Words("not yet run", "尚未运行"),
}


def rows(first: list[HeldOutPoint], runs: list[Point]) -> list[dict[str, Any]]:
    """One row per point, in the file's order: its published figure, the first set's estimate
    (the one its summary counts), and the run's figure and ratio, None where it has not run."""
    points = {point.id: point for point in first}
    found = []
    for run in runs:
        point = points[run.id]
        estimated = (None if run.estimate is None else
                     compare(run, run.estimate["report"], run.estimate["printed_bytes"]))
        first_figure = held_out.estimated_figure(point)
        found.append({
            "point": point, "run": run, "label": held_out.label(point),
            "published": run.published_bytes,
            "first": first_figure,
            "first_ratio": None if first_figure is None else first_figure / run.published_bytes,
            "estimated": None if estimated is None else estimated["estimated_bytes"],
            "ratio": None if estimated is None else estimated["ratio"],
            "commit": None if run.estimate is None else run.estimate["commit"]})
    return found


def summary(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Over the points that ran: the errors, how many fall short, and the first set's errors
    and shortfalls over the same points; how many have not run yet."""
    ran = [r for r in found if r["ratio"] is not None]
    both = [r for r in ran if r["first_ratio"] is not None]
    return {"count": len(ran), "pending": len(found) - len(ran), "total": len(found),
            "errors": stats([r["ratio"] for r in ran]),
            "short": sum(falls_short(r["ratio"]) for r in ran),
            "first": stats([r["first_ratio"] for r in both]),
            "first_short": sum(falls_short(r["first_ratio"]) for r in both),
            "compared": len(both),
            "nearer": sum(abs(r["ratio"] - 1) < abs(r["first_ratio"] - 1) for r in both)}


def said(found: dict[str, Any]) -> Words:
    """What the summary says: that none has run yet; or the runs' errors and shortfalls, the
    first set's over the same points, which is nearer, and how many are not yet run."""
    total, count, pending = found["total"], found["count"], found["pending"]
    if count == 0:
        return Words(
            f"None of the {total} points has run yet: each will run once, by its command "
            f"below, at a commit recorded with it, and only then be compared.",
            f"这 {total} 个数据点都还没有运行：每个点只会按下面的命令运行一次，运行所在的提交"
            f"会记录下来，运行之后才拿来对照。")
    errors, first = found["errors"], found["first"]
    if count == 1:
        lead = Words(f"Against the one point run so far, the run as written is off by "
                     f"{pct(errors['worst'])}{_short_one(found['short']).en}",
                     f"对照目前运行过的 1 个数据点，原样运行的估算误差为 {pct(errors['worst'])}，"
                     f"{_short_one(found['short']).zh}")
        versus = Words(f" The first set's estimate of it was off by {pct(first['worst'])}"
                       f"{_short_one(found['first_short']).en}",
                       f"第一组对它的估算误差为 {pct(first['worst'])}，"
                       f"{_short_one(found['first_short']).zh}") if first else None
    else:
        which = (Words(f"the {count} points run so far", f"目前运行过的 {count} 个数据点")
                 if pending else Words(f"all {count} points", f"全部 {count} 个数据点"))
        lead = Words(f"Against {which.en}, the runs as written are off by at most "
                     f"{pct(errors['worst'])} (median {pct(errors['median'])}); "
                     f"{how_many_short(found['short'], count).en}.",
                     f"对照{which.zh}，原样运行的估算误差最大 {pct(errors['worst'])}（中位数 "
                     f"{pct(errors['median'])}）；{how_many_short(found['short'], count).zh}。")
        versus = Words(f" The first set's estimates of the same points were off by at most "
                       f"{pct(first['worst'])} (median {pct(first['median'])}); "
                       f"{how_many_short(found['first_short'], found['compared']).en}; "
                       f"{nearer(found['nearer'], found['compared']).en}.",
                       f"第一组对同样这些点的估算误差最大 {pct(first['worst'])}（中位数 "
                       f"{pct(first['median'])}）；"
                       f"{how_many_short(found['first_short'], found['compared']).zh}；"
                       f"{nearer(found['nearer'], found['compared']).zh}。") if first else None
    tail = Words(
        f" {pending} of the {total} points {'has' if pending == 1 else 'have'} not run yet.",
        f"{total} 个数据点中还有 {pending} 个尚未运行。") if pending else Words("", "")
    versus = versus or Words("", "")
    return Words(lead.en + versus.en + tail.en, lead.zh + versus.zh + tail.zh)


#: The first transformers release in which BERT attends with SDPA by default
#: (huggingface/transformers#28802, merged April 2024); until then its attention was eager:
#: each layer kept its attention probabilities (and dropout's mask) for backward.
BERT_SDPA_SINCE = (4, 41)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("+")[0].split(".")[:2])


def libraries_differ(found: list[dict[str, Any]]) -> Words | None:
    """Why the runs as written part from the first set, where the data shows it: every run
    that keeps its activations (no checkpointing) lands below the first set's estimate, each
    farther than any run that recomputes them, and every published run used a transformers
    older than BERT's SDPA (as its source states or its date tells: HeldOutSource.versions)
    while these runs used a newer one. None where any of that fails."""
    ran = [r for r in found if r["ratio"] is not None and r["first"] is not None]
    kept = [r["estimated"] / r["first"] - 1 for r in ran if not r["point"].checkpointing]
    again = [abs(r["estimated"] / r["first"] - 1) for r in ran if r["point"].checkpointing]
    published = sorted({v for r in ran
                        for v in r["point"].source.versions.get("transformers", ())},
                       key=_version)
    here = sorted({r["run"].estimate["transformers"] for r in ran
                   if r["run"].estimate.get("transformers")}, key=_version)
    if (not kept or not again or max(kept) >= 0 or max(again) >= min(-k for k in kept)
            or not published or not here or _version(published[-1]) >= BERT_SDPA_SINCE
            or _version(here[0]) < BERT_SDPA_SINCE):
        return None
    low, high = pct(-max(kept)), pct(-min(kept))
    spread = low if low == high else f"{low}–{high}"
    versions = published[0] if len(published) == 1 else f"{published[0]}–{published[-1]}"
    since = ".".join(map(str, BERT_SDPA_SINCE))
    return Words(
        f"Where the step keeps its activations (no checkpointing), each run as written is "
        f"{spread} below the first set's estimate of it; where checkpointing recomputes them, "
        f"within {pct(max(again))}. What differs is the libraries, not the code: these "
        f"scripts ran with transformers {', '.join(here)}, whose BERT and DistilBERT attend "
        f"with SDPA by default and keep no attention probabilities for backward, while the "
        f"published runs used transformers {versions} (as their sources state or their dates "
        f"tell), older than {since}, the first in which BERT attends with SDPA, so their "
        f"attention was eager and kept them, as the first set described it (eager attention). "
        f"A script as written is also its "
        f"libraries' versions: these runs tell what the same code takes today, not what it "
        f"took when it was published.",
        f"不做检查点、保留激活的那些点上，原样运行都比第一组的估算低 {spread}；用检查点重算激活的"
        f"点上，两者相差不超过 {pct(max(again))}。差别在库，不在代码：这些脚本是用 transformers "
        f"{', '.join(here)} 运行的，它的 BERT 和 DistilBERT 默认用 SDPA 做注意力，不为反向传播"
        f"保留注意力概率；公开数字的运行用的是 transformers {versions}（来源写明的，或由发表日期"
        f"推断），早于 BERT 开始默认使用 SDPA 的 {since}，注意力是 eager 的，会保留这些概率，"
        f"第一组也是这样描述的（eager 注意力）。原样运行的脚本也包括它所用库的版本：这些运行说明的是同样的"
        f"代码今天要多少显存，而不是发表时用了多少。")


def _short_one(short: int) -> Words:
    """The end of the sentence about one point: below its published figure or not."""
    return (Words(", short of the published figure.", "低于公开数字。") if short else
            Words(", not below the published figure.", "不低于公开数字。"))


def how_many_short(short: int, count: int) -> Words:
    """'all of them fall short of the published figure' (or none, or some)."""
    if short == count:
        return Words("all of them fall short of the published figure", "全部低于公开数字")
    if short == 0:
        return Words("none of them falls short of the published figure", "没有一个低于公开数字")
    return Words(f"{short} of them fall short of the published figure",
                 f"其中 {short} 个低于公开数字")


def nearer(count: int, total: int) -> Words:
    """How many runs as written land nearer the published figure than the first set's
    estimate of the same point (all, none or some)."""
    if count == total:
        return Words("the run as written is nearer the published figure at every one of them",
                     "每个点上原样运行都更接近公开数字")
    if count == 0:
        return Words("the run as written is nearer the published figure at none of them",
                     "没有一个点上原样运行更接近公开数字")
    return Words(f"the run as written is nearer the published figure at {count} of the {total}",
                 f"{total} 个点中有 {count} 个点上原样运行更接近公开数字")


def ratio_said(ratio: float) -> Words:
    """'0.953, 4.7 % short' (the page's one rule for falling short), '1.020, 2.0 % over',
    or '1.000, equal'."""
    gap = pct(abs(ratio - 1))
    if falls_short(ratio):
        return Words(f"{ratio:.3f}, {gap} short", f"{ratio:.3f}，低 {gap}")
    if ratio > 1:
        return Words(f"{ratio:.3f}, {gap} over", f"{ratio:.3f}，高 {gap}")
    return Words(f"{ratio:.3f}, equal", f"{ratio:.3f}，相等")


def by_source(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows grouped by source, in the file's order, each with the GPU its figures were
    measured on, the simulated GPU its script runs on, and the commands not yet run."""
    groups: dict[str, dict[str, Any]] = {}
    for row in found:
        source = row["point"].source
        group = groups.setdefault(source.id, {
            "source": source, "rows": [], "gpu_name": held_out.gpu_name(source),
            "simulated": gpus.find(row["run"].gpu).short_name,
            "script": f"{SCRIPTS}/{row['run'].script}.py"})
        group["rows"].append(row)
    for group in groups.values():
        pending = [r["run"].command for r in group["rows"] if r["ratio"] is None]
        group["pending"] = code_block("\n".join(pending), "bash") if pending else None
    return list(groups.values())


def table(group: dict[str, Any], lang: str) -> Markup:
    """One source's points: published, the first set's estimate, the run as written."""
    headers = [_TEXT["config"][lang], _TEXT["published"][lang].format(group["gpu_name"]),
               _TEXT["first"][lang], _TEXT["estimated"][lang].format(group["simulated"]),
               _TEXT["ratio"][lang], _TEXT["commit"][lang]]
    body = []
    for r in group["rows"]:
        ran = r["ratio"] is not None
        body.append([escape(r["label"][lang]), mib(r["published"]), mib(r["first"]),
                     mib(r["estimated"]) if ran else _TEXT["pending"][lang],
                     ratio_said(r["ratio"])[lang] if ran else "–",
                     f"`{r['commit'][:10]}`" if ran else "–"])
    return markdown_table(headers, body, numeric_from=1)


def context(first: list[HeldOutPoint], runs: list[Point]) -> dict[str, Any] | None:
    """What the page shows of the set: its rows by source, its summary and what it says."""
    found = rows(first, runs)
    if not found:
        return None
    counted = summary(found)
    corrected = [p.source.label for p in first if p.first is not None]
    return {"rows": found, "summary": counted, "said": said(counted),
            "libraries": libraries_differ(found),
            "sources": by_source(found),
            # the sources whose setting the first set transcribed wrongly, then corrected
            "corrected": list(dict.fromkeys(corrected))}
