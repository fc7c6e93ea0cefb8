"""A fresh venv with the base install (plus faiss-cpu) answers with the default encoder, without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _index_reachable() -> bool:
    r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                        str(ROOT / ".pytest_cache" / "pipcheck"), "tqdm"],
                       capture_output=True, text=True, timeout=120)
    return r.returncode == 0


@pytest.mark.slow
def test_lean_install_answers_without_torch() -> None:
    if not _index_reachable():
        pytest.skip("the package index is not reachable, so no fresh venv can be installed")
    r = subprocess.run(["bash", str(ROOT / "scripts" / "check_lean_install.sh")],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert "lean install OK" in r.stdout and "answer:" in r.stdout
