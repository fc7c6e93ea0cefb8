"""Shared fixtures; every test runs offline (see chronorag.cli.OFFLINE_ENV)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chronorag.cli import set_offline_env

set_offline_env()

FIXTURES = Path(__file__).parent / "fixtures"
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def _chronorag_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["CHRONORAG_HOME"] = str(tmp_path_factory.mktemp("chronorag_home"))


@pytest.fixture(scope="session")
def minilm():
    from chronorag.graphs.encoders import SentenceTransformerEncoder

    return SentenceTransformerEncoder()


@pytest.fixture(scope="session")
def ecb_store():
    from chronorag.graphs.io import read_events

    return read_events(FIXTURES / "ecb_events.tsv", progress=False)


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory, minilm):
    from chronorag.cli import bundled_sample_path
    from chronorag.graphs.event_index import build_event_index
    from chronorag.graphs.io import read_events

    store = read_events(bundled_sample_path(), progress=False)
    out = tmp_path_factory.mktemp("idx") / "sample"
    return build_event_index(store, out, encoder=minilm, progress=False)


@pytest.fixture(scope="session")
def ecb_index(tmp_path_factory, minilm, ecb_store):
    from chronorag.graphs.event_index import build_event_index

    return build_event_index(ecb_store, tmp_path_factory.mktemp("ecb") / "idx", encoder=minilm, progress=False)


@pytest.fixture(scope="session")
def ecb_tools(ecb_index):
    from chronorag.workflows.temptool.tools import TemporalKGTools

    return TemporalKGTools(ecb_index)


@pytest.fixture(scope="session")
def topg_dir(tmp_path_factory, minilm):
    """A ToPG index of the ten-passage fixture corpus."""
    from chronorag.workflows.topg.index import build_topg_index, read_corpus

    out = tmp_path_factory.mktemp("topg") / "idx"
    idx, summary = build_topg_index(read_corpus(FIXTURES / "topg_corpus.json"), out, encoder=minilm,
                                    progress=False)
    assert summary["passages"] == 10 and summary["propositions"] >= 15
    return out
