"""Prompts and JSON schemas of ToPG (written for chronorag; not copied from the paper).

Extraction (entities, then propositions), Select, Eval (sufficiency), NextQ (follow-up
questions), Decompose (Global seeding), intermediate community answers and the final
answer. Every reply is JSON, requested with a JSON schema through
:meth:`chronorag.integrations.llm.ChatLLM.complete_json`. The step prompts describe each
field in words and show no example reply: a small model copies an example's placeholder
(SmolLM2 answered Eval with ``<short answer>`` and the final answer with ``...``), while the
schema already fixes the reply's shape.
"""

from __future__ import annotations

NER_SYSTEM = (
    "You find the named things in a text: people, organisations, places, works, events, "
    "products, laws, diseases, drugs and other proper or technical names. Reply with JSON only."
)
NER_USER = (
    "Example\nTitle: Marie Curie\nText: Marie Curie shared the 1903 Nobel Prize in Physics with "
    "Pierre Curie and Henri Becquerel. She was born in Warsaw.\n"
    'Reply: {{"entities": ["Marie Curie", "Nobel Prize in Physics", "Pierre Curie", '
    '"Henri Becquerel", "Warsaw"]}}\n\n'
    "Title: {title}\nText: {text}\nReply:"
)
ENTITY_SCHEMA = {
    "type": "object",
    "properties": {"entities": {"type": "array", "items": {"type": "string"}}},
    "required": ["entities"],
}

PROP_SYSTEM = (
    "You rewrite a text as a list of short, self-contained factual statements. Each "
    "statement says one thing, names its subjects in full (no pronouns such as he, she, it, "
    "they) and lists the given entities it mentions. Reply with JSON only."
)
PROP_USER = (
    "Example\nTitle: Marie Curie\nEntities: Marie Curie, Nobel Prize in Physics, Pierre Curie, "
    "Henri Becquerel, Warsaw\nText: Marie Curie shared the 1903 Nobel Prize in Physics with "
    "Pierre Curie and Henri Becquerel. She was born in Warsaw.\n"
    'Reply: {{"propositions": ['
    '{{"text": "Marie Curie shared the 1903 Nobel Prize in Physics with Pierre Curie and Henri '
    'Becquerel.", "entities": ["Marie Curie", "Nobel Prize in Physics", "Pierre Curie", '
    '"Henri Becquerel"]}}, '
    '{{"text": "Marie Curie was born in Warsaw.", "entities": ["Marie Curie", "Warsaw"]}}]}}\n\n'
    "Title: {title}\nEntities: {entities}\nText: {text}\nReply:"
)
PROP_SCHEMA = {
    "type": "object",
    "properties": {
        "propositions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string"},
                               "entities": {"type": "array", "items": {"type": "string"}}},
                "required": ["text", "entities"],
            },
        }
    },
    "required": ["propositions"],
}

SELECT_SYSTEM = (
    "You filter candidate facts for a question. Keep a fact when it could help answer the "
    "question, directly or as one step of a chain of facts; drop facts about other things. "
    "Reply with JSON only."
)
SELECT_USER = (
    "Question: {question}\n\nCandidate facts:\n{facts}\n\n"
    'Reply with a JSON object whose "keep" lists the numbers of the useful facts.'
)
SELECT_SCHEMA = {
    "type": "object",
    "properties": {"keep": {"type": "array", "items": {"type": "integer"}}},
    "required": ["keep"],
}

EVAL_SYSTEM = (
    "You decide whether the collected facts are enough to answer a question. Answer only "
    "from the facts. Reply with JSON only."
)
EVAL_USER = (
    "Question: {question}\n\nFacts:\n{facts}\n\n"
    'Reply with a JSON object: "sufficient" is true when the facts answer the question and false '
    'otherwise; "answer" is that answer in a few words, or an empty string when they do not answer it.'
)
#: longest short answer Eval may give; the grammar of a constrained server ends the string there
EVAL_ANSWER_MAX_CHARS = 200
#: longest follow-up question NextQ may write
QUESTION_MAX_CHARS = 200

EVAL_SCHEMA = {
    "type": "object",
    "properties": {"sufficient": {"type": "boolean"},
                   "answer": {"type": "string", "maxLength": EVAL_ANSWER_MAX_CHARS}},
    "required": ["sufficient", "answer"],
}

NEXTQ_SYSTEM = (
    "The facts collected so far do not answer a question. Write the few follow-up questions "
    "whose answers are still missing, each naming the entities it is about. Reply with JSON only."
)
NEXTQ_USER = (
    "Question: {question}\n\nFacts so far:\n{facts}\n\n"
    'Reply with a JSON object whose "questions" lists at most {max_q} follow-up questions.'
)
QUESTIONS_SCHEMA = {
    "type": "object",
    "properties": {"questions": {"type": "array", "items": {"type": "string"}}},
    "required": ["questions"],
}

DECOMPOSE_SYSTEM = (
    "You split a broad question into narrower questions that together cover its different "
    "aspects. Reply with JSON only."
)
DECOMPOSE_USER = ('Question: {question}\n\nReply with a JSON object whose "questions" lists {m} distinct, '
                  'narrower questions.')

PARTIAL_SYSTEM = (
    "You write a partial answer to a question from one group of related notes, and rate how "
    "useful the notes were for the question from 0 (useless) to 100 (essential). Reply with JSON only."
)
PARTIAL_USER = (
    "Question: {question}\n\nNotes:\n{notes}\n\n"
    'Reply with a JSON object: "answer" says what these notes tell about the question; "score" rates '
    'from 0 to 100 how useful they were.'
)
PARTIAL_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "number"}},
    "required": ["answer", "score"],
}

ANSWER_SYSTEM = (
    "You answer a question using only the numbered facts or reports given. Be concise for "
    "factual questions and thorough for open questions. Reply with JSON only."
)
ANSWER_USER = 'Facts:\n{facts}\n\nQuestion: {question}\n\nReply with a JSON object whose "answer" is your answer.'
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
