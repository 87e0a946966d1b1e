"""Interrupted builds and resuming them; and the safety of what results can name.

A `build` stopped in the middle of measuring (Ctrl-C to its process group, SIGTERM, SIGKILL)
must leave no half-written result, no temporary file in results/, and no worker process
behind; the next `build` reuses what was stored and measures only what is missing.

The experiment to interrupt is a user model whose factory announces itself (its process id
in the file `started`) and then sleeps while the file `slow.flag` exists, so the test knows
exactly when the build is in the middle of measuring and the kill costs no CPU.

Safety: results are JSON and nothing in the package can run code from a file (no pickle,
eval or exec), templates are autoescaped, and no experiment or stored result can name a path
outside the results folder (escaping on the built pages: test_reliability_pages.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO_ROOT, cli_env, run_cli

SLOW_MODULE = '''\
import json
import os
import time
from pathlib import Path

import torch
from torch import nn


def build():
    Path("started").write_text(str(os.getpid()))
    while Path("slow.flag").exists():
        time.sleep(0.1)
    model = nn.Sequential(nn.Embedding(50, 8), nn.Linear(8, 50))

    def make_batch(batch_size, seq_len, device):
        ids = torch.randint(0, 50, (batch_size, seq_len), device=device)
        return (ids,), ids

    def loss_fn(output, target):
        return nn.functional.cross_entropy(output.reshape(-1, 50), target.reshape(-1))

    return model, make_batch, loss_fn
'''

# Measured in this order: the estimates (one worker), then the real runs one by one: tiny
# fp32 on the CPU, the slow model (interrupted), tiny amp-bf16 on the CPU.
SUITE = """\
[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = ["fp32", "amp-bf16"]

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
backend = "cpu"

[[experiment]]
model = "slowpkg.slow:build"
batch_size = 2
seq_len = 4
backend = "cpu"

[[experiment]]
model = "tiny"
batch_size = 2
seq_len = 16
precision = "amp-bf16"
backend = "cpu"
"""
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (\w+)")


def _descendants(pid: int) -> set[int]:
    """Every live process below `pid` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie whose parent has not reaped it yet counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def _statuses(stderr: str) -> list[str]:
    """The status of each progress line, in order: measured, reused, skipped or failed."""
    return [m.group(3) for m in map(PROGRESS.match, stderr.splitlines()) if m]


def _check_results(root: Path) -> list[str]:
    """Every file under results/ is a whole result that loads; returns their names."""
    from generator import results

    files = sorted(p for p in (root / "results").rglob("*") if p.is_file())
    for path in files:
        assert path.suffix == ".json" and not path.name.startswith("."), f"left over: {path}"
        results.load(path)
    return sorted(p.name for p in files)


def _interrupted_build(root: Path, how: str) -> tuple[str, list[str]]:
    """Start `build`, wait until the slow model is being measured, interrupt it `how`;
    return the build's stderr and the names of the results stored."""
    started = root / "started"
    started.unlink(missing_ok=True)
    (root / "slow.flag").touch()
    scratch = root / ".scratch"  # the runner's temporary folders (TMPDIR), watched here
    scratch.mkdir(exist_ok=True)
    with open(root / "build.log", "w+", encoding="utf-8") as log:
        build = subprocess.Popen(
            [sys.executable, "-m", "generator", "build", "--config", "suite.toml"], cwd=root,
            env={**cli_env(), "TMPDIR": str(scratch)}, stdout=log, stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True)  # its own process group, as a shell job would have
        try:
            _wait_for(lambda: started.exists() and started.read_text() or build.poll() is not None,
                      180, "the slow model to start")
            if build.poll() is not None:
                log.seek(0)
                pytest.fail(f"build ended before the slow model started:\n{log.read()}")
            below = _descendants(build.pid)
            assert int(started.read_text()) in below
            if how == "SIGINT":  # Ctrl-C: the terminal signals the whole foreground group
                os.killpg(build.pid, signal.SIGINT)
            else:
                os.kill(build.pid, getattr(signal, how))
            build.wait(timeout=60)
            _wait_for(lambda: not any(map(_alive, below)), 30, f"no worker left after {how}")
        finally:
            if build.poll() is None:
                build.kill()
                build.wait()
        log.seek(0)
        stderr = log.read()
    expected = -signal.SIGKILL if how == "SIGKILL" else 130
    assert build.returncode == expected, f"exit {build.returncode} after {how}:\n{stderr}"
    if how != "SIGKILL":  # a killed process cleans nothing; the others clean up after them
        assert not list(scratch.glob("generator-*")), list(scratch.iterdir())
    shutil.rmtree(scratch)
    return stderr, _check_results(root)


@pytest.mark.slow
def test_interrupted_builds_leave_nothing_behind_and_resume(project: Path) -> None:
    # A snapshot of the code: `python -m generator` in the project imports it (the current
    # folder comes first on sys.path), so an edit elsewhere during the test cannot matter.
    for name in ("generator", "templates"):
        shutil.copytree(REPO_ROOT / name, project / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (project / "slowpkg").mkdir()
    (project / "slowpkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "slowpkg" / "slow.py").write_text(SLOW_MODULE, encoding="utf-8")
    (project / "suite.toml").write_text(SUITE, encoding="utf-8")

    stderr, stored = _interrupted_build(project, "SIGINT")
    assert _statuses(stderr) == ["measured"] * 3, stderr
    assert "interrupted" in stderr.splitlines()[-1], stderr
    assert len(stored) == 3, stored
    assert not any("slowpkg" in name for name in stored)

    for how in ("SIGTERM", "SIGKILL"):  # stored results are reused; the slow model is not
        stderr, now = _interrupted_build(project, how)
        assert _statuses(stderr) == ["reused"] * 3, f"{how}:\n{stderr}"
        assert now == stored, how

    (project / "slow.flag").unlink()
    proc = run_cli(["build", "--config", "suite.toml"], project)
    assert proc.returncode == 0, proc.stderr
    assert _statuses(proc.stderr) == ["reused"] * 3 + ["measured"] * 2, proc.stderr
    assert "5 jobs: 3 reused, 2 measured" in proc.stderr
    assert len(_check_results(project)) == 5
    assert (project / "site" / "index.html").is_file()


def test_a_run_clears_temporary_files_a_killed_save_left(tmp_path: Path) -> None:
    """SIGKILL between results.save's write and its rename leaves `.<key>.<random>.tmp`;
    the next run removes it (and nothing else)."""
    from generator import results
    from generator.jobs.runner import run_all

    stale = tmp_path / "estimate" / ".tiny-b2-s16-fp32-adamw-estimate.k3j1.tmp"
    stale.parent.mkdir()
    stale.write_text('{"schema_version": 1, "ke', encoding="utf-8")
    kept = tmp_path / "estimate" / "notes.txt"
    kept.write_text("mine\n", encoding="utf-8")
    assert run_all([], tmp_path) == []
    assert not stale.exists() and kept.exists()
    assert results.remove_stale_temps(tmp_path) == []


# --------------------------------------------------------------------------- safety

PACKAGE = Path(__file__).resolve().parent.parent / "generator"
#: Modules that deserialize into code or objects; results are JSON and nothing else.
UNSAFE_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "joblib", "cloudpickle"}
UNSAFE_CALLS = {"eval", "exec", "compile", "__import__"}
UNSAFE_ATTRIBUTES = {("torch", "load"), ("yaml", "load"), ("yaml", "unsafe_load"),
                     ("numpy", "load"), ("np", "load")}


def _unsafe_uses(source: str) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in UNSAFE_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module] if node.module.split(".")[0] in UNSAFE_MODULES else []
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in UNSAFE_CALLS:
                found.append(f"{func.id}()")
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    (func.value.id, func.attr) in UNSAFE_ATTRIBUTES:
                found.append(f"{func.value.id}.{func.attr}()")
    return found


def test_the_checker_finds_what_it_looks_for() -> None:
    assert _unsafe_uses("import pickle\nfrom marshal import loads\neval('1')\n"
                        "torch.load('x')\nmodel.eval()\n") == \
        ["pickle", "marshal", "eval()", "torch.load()"]


def test_no_pickle_eval_or_exec_in_the_package() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 20
    found = {str(p.relative_to(PACKAGE)): _unsafe_uses(p.read_text(encoding="utf-8"))
             for p in sources}
    assert not {name: uses for name, uses in found.items() if uses}


def test_templates_are_autoescaped() -> None:
    from generator.site.templating import environment

    env = environment()
    assert env.autoescape is True
    assert env.from_string("{{ name }}").render(name=HOSTILE_NAME) == \
        "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&#39;"


HOSTILE_NAME = '<script>alert("x")</script>\''


@pytest.mark.parametrize("model", ["../../etc/passwd", "/etc/passwd", "..", "../x:y",
                                   "a/../../b:build", "C:\\Windows\\x", "~/.ssh/id:k",
                                   HOSTILE_NAME, ". ."])
def test_a_results_path_stays_in_the_results_folder(tmp_path: Path, model: str) -> None:
    from generator.experiment import Experiment
    from generator.jobs.runner import job_path

    results_dir = tmp_path / "results"
    for backend in ("estimate", "cpu"):
        exp = Experiment(model=model, batch_size=1, seq_len=8, backend=backend)
        path = job_path(results_dir, exp)
        assert path.resolve().parent.parent == results_dir.resolve(), path
        assert path.name == f"{exp.key}.json" and not path.name.startswith("."), path


@pytest.mark.parametrize("name", ["..", "../up", "/abs", "a/b", ".hidden", "", "a\\b"])
def test_results_paths_refuse_unsafe_names(tmp_path: Path, name: str) -> None:
    from generator import results
    from generator.errors import ConfigError

    with pytest.raises(ConfigError):
        results.result_path(tmp_path, name, "key")
    with pytest.raises(ConfigError):
        results.result_path(tmp_path, "estimate", name)


@pytest.mark.parametrize(("field", "value"), [("key", "../../docs/evil"),
                                              ("key", 'x" onload="alert(1)')])
def test_a_hand_made_result_cannot_name_files_or_ids(tmp_path: Path, field: str,
                                                     value: str) -> None:
    """The key of a stored result names figure files and SVG ids: a file that carries a
    path or markup there is refused."""
    from generator import results
    from generator.errors import ResultsError

    cats = dict.fromkeys(("parameters", "gradients", "optimizer_state", "activations",
                          "autocast_copies", "temporaries"), 0)
    data = {"schema_version": 1, "key": "ok", "backend": "estimate", "error": None,
            "experiment": {"model": "tiny", "batch_size": 1, "seq_len": 8},
            "environment": {}, "peak_bytes": 0, "parameter_count": 1,
            "live_at_peak_bytes": cats, "category_max_bytes": cats, "module_activation_bytes": {},
            "timeline": {"tick": [], "end_tick": 0, "bytes": {c: [] for c in cats}}, field: value}
    path = tmp_path / "estimate" / "r.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ResultsError, match="not a plain name"):
        results.load(path)
    data["key"] = "ok"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert results.load(path)["environment"]["machine_id"] == "estimate"
