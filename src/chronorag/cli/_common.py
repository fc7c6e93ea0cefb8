"""Helpers shared by the command modules: the offline environment, the bundled sample, messages."""

from __future__ import annotations

import argparse
import os
from importlib import resources
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
}


def set_offline_env() -> None:
    """Set the offline variables (and ``TIKTOKEN_CACHE_DIR``) unless the user set them."""
    for k, v in OFFLINE_ENV.items():
        os.environ.setdefault(k, v)
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        import importlib.util

        try:  # located without importing llama_index.core (seconds), so `ask` starts fast
            spec = importlib.util.find_spec("llama_index.core")
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            cache = Path(next(iter(spec.submodule_search_locations))) / "_static" / "tiktoken_cache"
            os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


def bundled_sample_path() -> Path:
    """The bundled sample: 9,165 real ICEWS14 events among 16 diplomatic actors."""
    return Path(str(resources.files("chronorag") / "data" / "icews14_diplomacy_sample.tsv.gz"))


def _short(text: str, n: int = 300) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 3] + "..."


def _deadline_opt(args: argparse.Namespace) -> dict[str, Any]:
    """``deadline_s`` for methods that take it (only when the user set --deadline)."""
    d = getattr(args, "deadline", None)
    if d is None:
        return {}
    if d <= 0:
        raise ConfigError(f"--deadline must be > 0 seconds, got {d}")
    return {"deadline_s": d}


def _sha256(path: str | os.PathLike[str]) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _os_error_message(exc: OSError) -> str:
    """A one-line message naming the file and what to do, for an operating-system error."""
    name = exc.filename if exc.filename is not None else ""
    if isinstance(exc, PermissionError):
        return (f"permission denied: {name}; check its permissions (ls -l) or choose a path "
                "you can read and write")
    if isinstance(exc, IsADirectoryError):
        return f"{name} is a directory; pass a file"
    if isinstance(exc, NotADirectoryError):
        return f"{name}: a part of this path is not a directory"
    if isinstance(exc, FileNotFoundError):
        return str(exc) if not exc.filename else f"no such file or directory: {name}"
    if exc.errno == 28:  # ENOSPC
        where = f" writing {name}" if name else ""
        return f"no space left on the device{where}; free some space and run again"
    return f"{name}: {exc.strerror or exc}" if name else str(exc)
