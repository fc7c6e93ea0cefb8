"""Write notebooks/quickstart.ipynb from the cells below (run after editing them)."""

from pathlib import Path

import nbformat as nbf

CELLS = [
    ("md", "# chronorag quickstart\n\nIngest the bundled ICEWS14 sample, look at the temporal event store, "
           "and run a time-filtered dense retrieval. Everything runs offline; no LLM is needed."),
    ("code", "import os, tempfile\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
             "from chronorag.cli import bundled_sample_path\n"
             "from chronorag.graphs.io import read_events\n"
             "store = read_events(bundled_sample_path(), progress=False)\nstore"),
    ("md", "## The store\nColumnar, with indexes by subject, object, relation, (subject, relation), "
           "(relation, object) and time. Queries take TempTool-style time filters."),
    ("code", "ids = store.query(subject='John Kerry', relation='Consult', object='Sergey Viktorovich Lavrov',\n"
             "                  begin_time='2014-03', end_time='2014-03', type='in/on')\n"
             "[store.verbalize(int(i)) for i in ids[:3]]"),
    ("code", "before = store.query(subject='Xi Jinping', relation='Make a visit', end_time='2014-04', type='before')\n"
             "store.event(int(before[-1]))  # the last visit before April 2014"),
    ("md", "## Index and retrieve\nEach distinct (subject, relation, object) triple is embedded once with "
           "all-MiniLM-L6-v2; time is matched symbolically."),
    ("code", "from chronorag.integrations.event_index import build_event_index\n"
             "from chronorag.retrievers.dense import DenseEventRetriever\n"
             "index = build_event_index(store, tempfile.mkdtemp() + '/idx', progress=False)\n"
             "retriever = DenseEventRetriever(index, similarity_top_k=5, begin_time='2014-11', end_time='2014-11')\n"
             "for n in retriever.retrieve('Who did Barack Obama meet in China?'):\n"
             "    print(f'{n.score:.3f}', n.node.get_content())"),
    ("code", "assert all(n.node.metadata['start'].startswith('2014-11') for n in retriever.retrieve('Obama visits China'))"),
]

nb = nbf.v4.new_notebook()
nb["cells"] = [nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src) for kind, src in CELLS]
nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
out = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"
nbf.write(nb, out)
print(out)
