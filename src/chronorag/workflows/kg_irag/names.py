"""KG-iRAG's method names, in a module of their own so the CLI can list them without LangGraph."""

from __future__ import annotations

__all__ = ["METHODS"]

#: the full loop and the paper's baseline and ablations
METHODS = ("kg-irag", "single-pass", "limited", "no-check")
