"""Old import paths (before the one-folder-per-method layout) keep working for one release.

``import chronorag.integrations.temporal_tools`` still works: a meta-path finder maps each
old module name to the module that now holds its code and emits a ``DeprecationWarning``
naming the new path. The old name and the new one are the same module object, so
monkeypatching either affects both. There are no stub files at the old paths: the tree
shows only where code lives now. To be removed in 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED_MODULES", "install"]

#: old module path -> new module path
MOVED_MODULES: dict[str, str] = {
    "chronorag.integrations.embeddings": "chronorag.graphs.encoders",
    "chronorag.integrations.vector_index": "chronorag.graphs.vectors",
    "chronorag.retrievers.event_index": "chronorag.graphs.event_index",
    "chronorag.graphs.tquestion": "chronorag.graphs.question",
    "chronorag.graphs.candidates": "chronorag.retrievers.reader",
    "chronorag.graphs.rule_graph": "chronorag.retrievers.star_rag.rule_graph",
    "chronorag.graphs.timeslice": "chronorag.retrievers.tgrag.timeslice",
    "chronorag.retrievers.tgrag_index": "chronorag.retrievers.tgrag.index",
    "chronorag.graphs.proposition_graph": "chronorag.workflows.topg.proposition_graph",
    "chronorag.integrations.topg_extract": "chronorag.workflows.topg.extraction",
    "chronorag.integrations.topg_property_graph": "chronorag.workflows.topg.property_graph",
    "chronorag.retrievers.topg": "chronorag.workflows.topg.retriever",
    "chronorag.graphs.record_kg": "chronorag.workflows.kg_irag.record_kg",
    "chronorag.integrations.records": "chronorag.workflows.kg_irag.sources",
    "chronorag.integrations.temporal_tools": "chronorag.workflows.temptool.tools",
    "chronorag.integrations.llama_index_tools": "chronorag.workflows.temptool.llama_index_tools",
    "chronorag.integrations.ragas_eval": "chronorag.evaluation.ragas",
    "chronorag.evaluation.passages": "chronorag.evaluation.methods.passages",
    "chronorag.workflows.kg_irag.evaluate": "chronorag.evaluation.methods.kg_irag_eval",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{self.old} moved to {self.new}; the old path will be removed in chronorag 0.3",
                      DeprecationWarning, stacklevel=3)
        module = importlib.import_module(self.new)
        self._real_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set the alias spec on the real module; give it its own back
        module.__spec__ = self._real_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(fullname, new))


def install() -> None:
    """Put the alias finder first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
