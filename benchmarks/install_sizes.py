"""Installed size of chronorag's base and of each extra, from the distributions in this venv.

Usage::

    python benchmarks/install_sizes.py

For the base and for each extra of ``pyproject.toml``, the dependency closure is resolved over the installed
distributions (markers evaluated for this interpreter) and the sizes of their files (from
each distribution's RECORD) are added up. An extra's figure is what it adds on top of the
base. Requirements that are not installed here are listed as missing.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import sys

from packaging.requirements import Requirement


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


DISTS = {_norm(d.metadata["Name"]): d for d in md.distributions()}


def _size(dist: md.Distribution) -> int:
    total = 0
    for f in dist.files or []:
        try:
            total += os.path.getsize(dist.locate_file(f))
        except OSError:
            pass
    return total


def closure(reqs: list[str], extras: tuple[str, ...] = ()) -> tuple[set[str], set[str]]:
    seen: set[str] = set()
    missing: set[str] = set()
    todo = [(Requirement(r), extras) for r in reqs]
    while todo:
        req, ex = todo.pop()
        env_ok = req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (ex or ("",)))
        if not env_ok:
            continue
        name = _norm(req.name)
        if name in seen:
            continue
        d = DISTS.get(name)
        if d is None:
            missing.add(name)
            continue
        seen.add(name)
        for sub in d.requires or []:
            r = Requirement(sub)
            if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in (tuple(req.extras) or ("",))):
                todo.append((r, tuple(req.extras)))
    return seen, missing


def main() -> None:
    from pathlib import Path

    import tomllib

    proj = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    base, base_missing = closure(proj["dependencies"])
    mb = lambda names: round(sum(_size(DISTS[n]) for n in names) / 2**20, 1)  # noqa: E731
    out = {"python": sys.version.split()[0],
           "base": {"distributions": len(base), "MiB": mb(base), "missing": sorted(base_missing)}}
    for ex, reqs in proj["optional-dependencies"].items():
        names, missing = closure(reqs)
        add = names - base
        out[ex] = {"adds_distributions": len(add), "adds_MiB": mb(add), "missing_here": sorted(missing),
                   "largest": sorted(((n, round(_size(DISTS[n]) / 2**20, 1)) for n in add),
                                     key=lambda x: -x[1])[:4]}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
