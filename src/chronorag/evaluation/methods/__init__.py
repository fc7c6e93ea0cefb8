"""One small adapter per method, each registering itself with :func:`~chronorag.evaluation.runner.register_method`.

Importing this package registers the built-in methods; each adapter imports its method's
modules only when its factory runs, so registering costs nothing.
"""

from chronorag.evaluation.methods import dense, kg_irag, star_rag, tgrag, tools, topg

__all__ = ["dense", "kg_irag", "star_rag", "tgrag", "tools", "topg"]
