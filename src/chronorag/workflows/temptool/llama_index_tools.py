"""TempTool-R1's temporal tools as LlamaIndex ``FunctionTool``s (for LlamaIndex agents).

The same tools as :func:`chronorag.workflows.temptool.tools.make_langchain_tools`
(``Get_time``, ``Get_head_entity``, ``Get_tail_entity``) with the same argument schemas;
an agent sees the readable observation, and a bad argument comes back as an error
observation the agent can correct (``ToolOutput.is_error``).
"""

from __future__ import annotations

from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError

__all__ = ["make_llama_index_tools"]


def make_llama_index_tools(tools: Any) -> list[Any]:
    """The temporal tools over an index as LlamaIndex ``FunctionTool``s.

    Parameters
    ----------
    tools : TemporalKGTools or EventIndex
        The tools object, or a loaded index to build it from.

    Returns
    -------
    list of llama_index.core.tools.FunctionTool
    """
    from llama_index.core.tools import FunctionTool, ToolMetadata

    from chronorag.graphs.event_index import EventIndex
    from chronorag.workflows.temptool.tools import TemporalKGTools, make_langchain_tools

    if isinstance(tools, EventIndex):
        tools = TemporalKGTools(tools)
    if not isinstance(tools, TemporalKGTools):
        raise ArgumentTypeError(f"tools must be TemporalKGTools or an EventIndex, got {type(tools).__name__}")
    out = []
    for lc_tool in make_langchain_tools(tools):
        def run(_t: Any = lc_tool, **kwargs: Any) -> str:
            msg = _t.invoke({"name": _t.name, "args": kwargs, "id": "llamaindex", "type": "tool_call"})
            if getattr(msg, "status", "success") == "error":
                raise ConfigError(str(msg.content))
            return str(msg.content)

        out.append(FunctionTool.from_defaults(
            fn=run, tool_metadata=ToolMetadata(name=lc_tool.name, description=lc_tool.description,
                                               fn_schema=lc_tool.args_schema)))
    return out
