"""chronorag: temporal GraphRAG components for LlamaIndex and LangGraph."""

__version__ = "0.1.0"
