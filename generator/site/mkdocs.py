"""Build the site with mkdocs, strictly: a broken link or anchor fails the build; only into a
folder that is new, empty or marked as the site's (owned.py), since mkdocs empties it first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from generator.errors import SiteBuildError
from generator.site import owned


def build_site(config: Path, site_dir: Path) -> None:
    if not Path(config).exists():
        raise SiteBuildError(f"no mkdocs config at {config}; run from the project folder")
    owned.claim_folder(site_dir, owned.SITE)
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
               "-f", str(config), "-d", str(Path(site_dir).resolve())]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's notice about MkDocs 2
    process = subprocess.run(command, capture_output=True, text=True, env=env)
    if process.returncode != 0:
        lines = [line for line in (process.stderr + process.stdout).splitlines()
                 if line.startswith(("WARNING", "ERROR")) or "Error" in line]
        reason = lines[0].strip() if lines else f"mkdocs exited with status {process.returncode}"
        raise SiteBuildError(f"mkdocs build --strict failed: {reason}")
