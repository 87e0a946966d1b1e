"""New Python processes for the slow tests, started warm: forked from a parent of this test
session's that has imported PyTorch and the tool already, instead of a new interpreter that
imports them again (about 1.7 s of CPU each; the slow suite starts about a hundred).

A child is a process of its own as a new one is: its own folder, environment, standard
streams, exit status, signals and seeds of `random` and NumPy (string hashes keep the
parent's seed: render's byte-identity across processes is checked cold, in test_build_pages).
It has imported PyTorch and the tool's own modules (PRELOAD; for `python -m generator`, also
the part of PyTorch the command imports first), and nothing of the script it
runs: transformers and the other frameworks are imported by the child, under the environment
and the simulated device it runs with. What the parent imported read the parent's
environment, so the parent is started with the environment of the call, and a call whose
environment differs (apart from pytest's note of the current test) gets a parent of its own.
A run from a folder that holds a copy of the tool (`snapshot_code`), which a new interpreter
would import instead, starts cold, and so does a script that is not there (python's own
message)."""

from __future__ import annotations

import atexit
import json
import locale
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: What a parent imports: PyTorch and the tool's modules that its commands import; no
#: framework a script imports.
PRELOAD = ("torch", "generator.cli.main", "generator.cli.commands", "generator.cli.estimate",
           "generator.cli.run", "generator.cli.compare", "generator.api",
           "generator.simulate.runner", "generator.simulate.session",
           "generator.measure.backends.estimate", "generator.measure.run")
#: A parent of `python -m generator` imports what the command itself imports first, before it
#: reads its arguments' models or installs a simulated GPU: torch._dynamo (measure.preload).
#: Not for a script run as it is (script_runs.py): its imports happen inside what it measures.
PRELOAD_OF_THE_TOOL = PRELOAD + ("torch._dynamo",)
#: Varies from test to test and is read by nothing a parent imports.
_NOT_COMPARED = ("PYTEST_CURRENT_TEST",)

_PARENT = r"""
import json, os, random, runpy, sys
requests, replies = os.fdopen(int(sys.argv[1]), "r"), os.fdopen(int(sys.argv[2]), "w")
for name in sys.argv[3:]:
    __import__(name)
sys.stdout.flush(); sys.stderr.flush()  # nothing of the parent's in a child's streams
replies.write("ready\n"); replies.flush()
for line in requests:
    call = json.loads(line)
    pid = os.fork()
    if pid == 0:
        requests.close(); replies.close()
        break
    replies.write(f"{pid}\n"); replies.flush()
    _, status = os.waitpid(pid, 0)
    replies.write(f"{os.waitstatus_to_exitcode(status)}\n"); replies.flush()
else:
    sys.exit(0)
os.chdir(call["cwd"])
os.environ.clear(); os.environ.update(call["env"])
for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                        (1, call["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                        (2, call["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
    opened = os.open(path, flags, 0o600); os.dup2(opened, fd); os.close(opened)
random.seed()  # a new interpreter's own seed, not the one the siblings share
if "numpy" in sys.modules:
    sys.modules["numpy"].random.seed()
del requests, replies, line
if call["module"]:
    sys.argv, sys.path[0] = ["-m", *call["args"]], os.getcwd()
    runpy.run_module(call["target"], run_name="__main__", alter_sys=True)
else:
    sys.argv = [call["target"], *call["args"]]
    sys.path[0] = os.path.dirname(os.path.abspath(call["target"]))
    runpy.run_path(call["target"], run_name="__main__")
"""


class _Parent:
    """A warm parent: started once per environment, forks one child at a time."""

    def __init__(self, env: dict[str, str], preload: tuple[str, ...]) -> None:
        to_parent, self._requests = os.pipe()
        self._replies, from_parent = os.pipe()
        self._log = tempfile.NamedTemporaryFile(prefix="warm-python-", suffix=".log")
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PARENT, str(to_parent), str(from_parent), *preload],
            env=env, cwd=tempfile.gettempdir(), stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=self._log, pass_fds=(to_parent, from_parent))
        os.close(to_parent), os.close(from_parent)
        self._read = b""
        if self._line(None) != "ready":
            raise RuntimeError(f"the warm parent did not start:\n{self._output()}")

    def _line(self, timeout: float | None) -> str | None:
        """The parent's next line; None past `timeout`, "" when it has stopped."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._read:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._replies], [], [], left)[0]:
                return None
            chunk = os.read(self._replies, 4096)
            if not chunk:
                return ""
            self._read += chunk
        line, self._read = self._read.split(b"\n", 1)
        return line.decode()

    def _output(self) -> str:
        return Path(self._log.name).read_text(errors="replace")[-4000:]

    def run(self, call: dict, timeout: float | None) -> int | None:
        """The child's exit status; None when it ran past `timeout` (it is killed)."""
        os.write(self._requests, (json.dumps(call) + "\n").encode())
        pid = self._line(None)
        if not pid:
            raise RuntimeError(f"the warm parent stopped:\n{self._output()}")
        status = self._line(timeout)
        if status is None:
            os.kill(int(pid), signal.SIGKILL)
            self._line(None)
            return None
        return int(status)

    def close(self) -> None:
        os.close(self._requests)
        self.process.wait()
        os.close(self._replies)


_PARENTS: dict[tuple, _Parent] = {}
#: Parents kept at once: a test with an environment of its own (an HF_HOME of its own) makes
#: one that no later call shares; the oldest is closed.
_KEPT = 3


@atexit.register
def _close_parents() -> None:
    for parent in _PARENTS.values():
        parent.close()


def _compared(env: dict[str, str]) -> tuple:
    return tuple(sorted((k, v) for k, v in env.items() if k not in _NOT_COMPARED))


def _text(data: bytes) -> str:
    """As subprocess.run(text=True) decodes a stream."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def run(target: str, args: list[str], cwd: Path, env: dict[str, str], *, module: bool = False,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    """`python -m TARGET ARGS` (module) or `python TARGET ARGS` in `cwd` with `env`, stdin
    empty and stdout and stderr captured, as subprocess.run(…, capture_output=True,
    text=True) returns them; subprocess.TimeoutExpired past `timeout`."""
    argv = [sys.executable, *(["-m"] if module else []), target, *args]
    first = Path(cwd) if module else Path(cwd, target).resolve().parent
    # a copy of the tool, which a new interpreter imports; no script, which python names
    if (first / "generator").exists() or not (module or Path(cwd, target).is_file()):
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    preload = PRELOAD_OF_THE_TOOL if module and target == "generator" else PRELOAD
    key = (_compared(env), preload)
    if key not in _PARENTS:
        while len(_PARENTS) >= _KEPT:
            _PARENTS.pop(next(iter(_PARENTS))).close()
        _PARENTS[key] = _Parent(env, preload)
    with tempfile.TemporaryDirectory(prefix="warm-python-") as streams:
        out, err = Path(streams, "stdout"), Path(streams, "stderr")
        call = {"target": target, "args": args, "module": module, "cwd": str(cwd),
                "env": env, "stdout": str(out), "stderr": str(err)}
        status = _PARENTS[key].run(call, timeout)
        stdout, stderr = _text(out.read_bytes()), _text(err.read_bytes())
    if status is None:
        raise subprocess.TimeoutExpired(argv, timeout, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(argv, status, stdout, stderr)
