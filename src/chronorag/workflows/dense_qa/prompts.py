"""Prompts of the dense QA graph."""

ANSWER_SYSTEM = (
    "You answer questions about dated events using only the numbered events given. "
    "Pay attention to the dates: words such as before, after, first, last and in <year> "
    "constrain which events count."
)

ANSWER_USER = (
    "Events:\n{events}\n\nQuestion: {question}\n\n"
    "List up to 10 short candidate answers, best first, one per line, each an entity name "
    "or a date exactly as written in the events. No explanations."
)
