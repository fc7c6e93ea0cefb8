"""Prompts of the TempTool agent (written for chronorag)."""

TOOL_GUIDE = """Tools over a temporal knowledge graph of dated events (head, relation, tail, time):
- Get_time(head, rel, tail): the dates on which head did rel to tail.
- Get_head_entity(tail, rel, begin_time, end_time, type): who did rel to tail within the time condition.
- Get_tail_entity(head, rel, begin_time, end_time, type): to whom head did rel within the time condition.

Argument rules:
1. head, tail and rel are copied word for word from the question (a substring of it); the tools map them to graph names.
2. Times are YYYY, YYYY-MM or YYYY-MM-DD. type is one of "in/on", "before", "after", "between".
   - "before X": begin_time="-inf", end_time=X, type="before".
   - "after X": begin_time=X, end_time="inf", type="after".
   - "in/on X": begin_time=X, end_time=X, type="in/on"; "between X and Y": begin_time=X, end_time=Y.
   - no time condition: begin_time="-inf", end_time="inf", type="in/on".
3. When the condition is another event ("before Germany ..."), first call Get_time for that event,
   then use its date in the next call. Never filter by a date you have not obtained yet.
4. "first" means the earliest matching event, "last" the latest. An observation lists a limited number
   of rows; the optional argument order="latest" or order="earliest" chooses which end it shows.
5. A "No match" observation means a name is not in the graph: use one of the nearest names it lists."""

NATIVE_SYSTEM = (
    "You answer questions about events in time by calling tools, one step at a time.\n\n"
    + TOOL_GUIDE
    + "\n\nWhen the observations are enough, reply with the answer only: entity names or dates as the "
    "tools wrote them, best first, separated by ' | '."
)

TAGGED_SYSTEM = (
    "You answer questions about events in time by calling tools.\n\n"
    + TOOL_GUIDE
    + """

Write your turn in this format:
<think>your reasoning</think>
<tool_call>
{"name": "Get_time", "arguments": {"head": "...", "rel": "...", "tail": "..."}}
</tool_call>
Several calls may go in one <tool_call> block, one JSON object per line. Results come back as
<obs>...</obs>. When you know the answer, write
<think>your reasoning</think>
<response>answer 1 | answer 2</response>"""
)

LIMIT_NOTE = (
    "The tool-call limit for this question is reached. Do not call tools again: answer now from "
    "the observations above, or say that they are not enough."
)

TAGGED_LIMIT_NOTE = LIMIT_NOTE + " Write the answer as <response>...</response>."

TAGGED_FORMAT_ERROR = (
    "Your turn had neither a readable <tool_call> nor a <response>. Call a tool with one JSON object "
    "per line inside <tool_call>...</tool_call>, or answer inside <response>...</response>."
)

NO_TOOL_NOTE = (
    "You answered without looking anything up. The answer must come from the knowledge graph: "
    "call one of the tools first, with arguments copied from the question."
)

TAGGED_NO_TOOL_NOTE = NO_TOOL_NOTE + " Write the call inside <tool_call>...</tool_call>."
