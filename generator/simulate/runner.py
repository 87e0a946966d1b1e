"""A script or module run as Python itself runs it, the way Python's profilers do
(`python -m cProfile`, memray's `memray/commands/run.py`; style point 5h).

The script gets its own `sys.argv` (its path, or the module's file, then its arguments),
`__main__` (runpy's own), and `sys.path[0]` (its folder; the current folder for a module);
all three are put back afterwards. Its exit status stays its own, and so do its exceptions:
`Script.run` returns the status, and for an exception prints the script's own traceback (no
frame of this tool's) and returns 1, as Python would. A mistake of the user's against this
tool (GeneratorError) and the run's own stop (steps.StopAfterSteps) pass through.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import find_spec

from generator.errors import ConfigError, GeneratorError
from generator.simulate.steps import StopAfterSteps


@dataclass(frozen=True)
class Script:
    """A path to a Python file, or a module name (`module=True`), and its arguments."""

    target: str
    args: tuple[str, ...] = ()
    module: bool = False

    def check(self) -> None:
        """A ConfigError if there is nothing to run, before anything is set up."""
        if self.module:
            try:
                found = find_spec(self.target)
            except (ImportError, ValueError):
                found = None
            if found is None:
                raise ConfigError(f"no module named {self.target!r} to run")
        elif not os.path.isfile(self.target):
            raise ConfigError(f"no script at {self.target}: give the path of a Python file "
                              "(or -m MODULE)")

    def run(self) -> int:
        """Run it to its end: its exit status (0 when it ends normally)."""
        try:
            with self._as_main():
                if self.module:
                    runpy.run_module(self.target, run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(self.target, run_name="__main__")
        except SystemExit as ended:
            return _status(ended.code)
        except (GeneratorError, StopAfterSteps, KeyboardInterrupt):
            raise
        except BaseException as error:  # the script's own: its traceback, as Python prints it
            _print_own_traceback(error)
            return 1
        return 0

    @contextlib.contextmanager
    def _as_main(self) -> Iterator[None]:
        argv, path = sys.argv[:], sys.path[:]
        sys.argv = [self.target, *self.args]  # runpy sets argv[0] to the file it runs
        first = os.getcwd() if self.module else os.path.dirname(os.path.abspath(self.target))
        if sys.path:
            sys.path[0] = first
        else:
            sys.path.append(first)
        try:
            yield
        finally:
            sys.argv, sys.path[:] = argv, path


def _status(code: object) -> int:
    """SystemExit's code as a process's status: None is 0, a message is 1 (printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_own_traceback(error: BaseException) -> None:
    """The traceback from the script's first frame on: runpy's and this module's are not
    the script's."""
    tb = error.__traceback__
    ours = (os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>")
    while tb is not None and tb.tb_frame.f_code.co_filename in ours:
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb)
