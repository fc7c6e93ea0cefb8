"""The layout contract: layers checked by import-linter, and old import paths that still work."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from chronorag._compat import MOVED_MODULES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_old_import_path_warns_and_is_the_new_module(old):
    new = MOVED_MODULES[old]
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        mod = importlib.import_module(old)
    assert mod is importlib.import_module(new)
    assert mod.__spec__.name == new  # the real module keeps its own spec
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in seen)


def test_every_new_path_exists_and_no_stub_file_is_left_at_an_old_path():
    src = ROOT / "src"
    for old, new in MOVED_MODULES.items():
        assert importlib.util.find_spec(new) is not None, new
        assert not (src / (old.replace(".", "/") + ".py")).exists(), f"stale file at {old}"


def test_each_method_is_one_folder():
    pkg = ROOT / "src" / "chronorag"
    for folder in ("retrievers/star_rag", "retrievers/tgrag", "workflows/topg", "workflows/kg_irag",
                   "workflows/temptool"):
        assert (pkg / folder / "__init__.py").is_file(), folder
    # nothing method-specific is left in the base or adapter layers
    for stray in ("graphs/rule_graph.py", "graphs/timeslice.py", "graphs/proposition_graph.py",
                  "graphs/record_kg.py", "integrations/temporal_tools.py", "integrations/topg_extract.py"):
        assert not (pkg / stray).exists(), stray


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (the dev extra installs it)")
    r = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_readme_architecture_names_every_module():
    """The README's Architecture section matches the tree: every module and folder is named there."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Architecture")
    section = readme[start:readme.index("\n## ", start + 1)]
    pkg = ROOT / "src" / "chronorag"
    missing = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        if path.name == "__init__.py" or rel.parts[0] in ("data",):
            continue
        if f"`{path.name}`" not in section and f"`{rel.as_posix()}`" not in section:
            missing.append(rel.as_posix())
    assert not missing, f"README Architecture does not name: {missing}"


def test_every_deliberate_error_is_a_chronorag_error():
    """A ``raise`` of a builtin error in the package (``ValueError``, ``TypeError``, ...) is one a
    user cannot catch as a :class:`~chronorag.errors.ChronoRAGError`; each has its chronorag
    subclass (``ConfigError``, ``ArgumentTypeError``, ``MissingFileError``, ``OutOfRangeError``,
    ``UsageError``, ...), which is also the builtin a Python user expects."""
    import ast

    import chronorag.errors as errors

    # (AttributeError stays: a module's __getattr__ must raise it for hasattr and imports to work)
    builtin = {"ValueError", "TypeError", "FileNotFoundError", "IndexError", "KeyError", "Exception"}
    found = []
    for path in sorted((ROOT / "src" / "chronorag").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name) \
                    and node.exc.func.id in builtin:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} raise {node.exc.func.id}")
    assert not found, found
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.ChronoRAGError), name
