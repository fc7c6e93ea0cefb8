"""The ``chronorag`` command line.

::

    chronorag ingest KG.tsv.gz --out INDEX_DIR [--encoder minilm|static] [--index flat|hnsw]
    chronorag demo [--llm local [--local-model smollm2|gemma3-270m] | --llm-url URL]
    chronorag ask INDEX_DIR "question" [--method dense] [--llm-url URL] [--json]
    chronorag ask INDEX_DIR --questions FILE.jsonl --json [--method tools] [--reference YYYY-MM-DD]
    chronorag eval multitq INDEX_DIR QUESTIONS.jsonl --method dense [--limit N] [--out run.jsonl] [--judge]
    chronorag star-rag build INDEX_DIR
    chronorag tgrag index DOCS_DIR --out INDEX_DIR [--period P] [--add]
    chronorag sft cronquestions TRAJECTORIES.jsonl --out sft.jsonl
    chronorag ragas RUN.jsonl [--tool-calls [--reference REF.jsonl]] [--llm-url URL]
    chronorag report RUN1.jsonl [RUN2.jsonl ...] --out DIR
    chronorag topg index CORPUS --out INDEX_DIR [--llm-url URL] [--encoder minilm|static] [--add]
    chronorag eval 2wiki INDEX_DIR QUESTIONS.jsonl --method topg-local [--max-iter N] [--lam X]
    chronorag info INDEX_DIR
    chronorag kg-irag generate --source nyc-weather --n 600 --seed 0 --out QUESTIONS.jsonl
    chronorag kg-irag ask "question" --source nyc-weather [--method kg-irag] [--llm-url URL]
    chronorag eval kg-irag QUESTIONS.jsonl --source nyc-weather --method kg-irag|single-pass|limited|no-check
"""

# ruff: noqa: E402 - the SIGINT handler is installed before the command modules import

from __future__ import annotations

import contextlib
import os
import signal
import sys


def _exit_130(signum: int, frame: object) -> None:  # pragma: no cover - exercised in a subprocess
    os.write(2, b"chronorag: interrupted\n")
    os._exit(130)


#: Set by :func:`_interrupt` when a Ctrl-C arrived during a run of :func:`main`. Some libraries
#: turn the resulting ``KeyboardInterrupt`` into another error (a pybind11 extension interrupted
#: while it imports raises ``ImportError``, which chronorag reports as a missing extra), so an
#: error that follows a Ctrl-C is reported as the interruption it is.
_INTERRUPTED = False


def _interrupt(signum: int, frame: object) -> None:
    global _INTERRUPTED
    _INTERRUPTED = True
    raise KeyboardInterrupt


def _ignore_sigint_at_exit() -> None:  # pragma: no cover - exercised in a subprocess
    # Python resets Python-level SIGINT handlers to SIG_DFL while it finalises, so a Ctrl-C
    # after the command has finished would kill the process by the signal; the work is
    # done by then, so the Ctrl-C is ignored (an ignored signal stays ignored).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: True when this process is the ``chronorag`` console script:
#: then a Ctrl-C while the modules below import, or after ``main`` is done, exits 130 at once.
_CONSOLE = os.path.basename(sys.argv[0] if sys.argv else "") == "chronorag" \
    and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
if _CONSOLE:
    import atexit

    signal.signal(signal.SIGINT, _exit_130)
    atexit.register(_ignore_sigint_at_exit)  # registered first, so it runs last

import argparse

from chronorag.cli._common import (
    OFFLINE_ENV,
    _os_error_message,
    bundled_sample_path,
    set_offline_env,
)
from chronorag.cli.ask import _cmd_ask
from chronorag.cli.demo import add_demo_parser
from chronorag.cli.evaluate import _cmd_eval, _cmd_ragas, _cmd_report
from chronorag.cli.index import _cmd_info, _cmd_ingest
from chronorag.cli.kg_irag import _add_kg_irag
from chronorag.cli.methods import _cmd_star_build, _cmd_tgrag_index, _cmd_topg_index
from chronorag.cli.sft import _cmd_sft
from chronorag.errors import ChronoRAGError

__all__ = ["OFFLINE_ENV", "bundled_sample_path", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``chronorag`` command."""
    p = argparse.ArgumentParser(prog="chronorag", description="Temporal GraphRAG components.")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    sub = p.add_subparsers(dest="command", required=True)

    def add_encoder_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--encoder", default="minilm", choices=["minilm", "static"],
                        help="embedding model: MiniLM (default) or static (distilled, fast)")
        sp.add_argument("--cache", default=None, help="embedding cache file (default: $CHRONORAG_HOME/embeddings.sqlite)")

    sp = sub.add_parser("ingest", help="build an index directory from a KG file")
    sp.add_argument("kg", help="events file: ICEWS-style .tsv[.gz], .csv or .jsonl")
    sp.add_argument("--out", required=True,
                    help="index directory: new, empty, or a chronorag index (replaced atomically; "
                         "any other non-empty directory is refused)")
    sp.add_argument("--format", choices=["tsv", "csv", "jsonl"], default=None)
    sp.add_argument("--on-error", choices=["raise", "skip"], default="raise",
                    help="malformed lines: fail (default) or skip and report")
    sp.add_argument("--index", choices=["flat", "hnsw"], default="flat")
    sp.add_argument("--store", default=None, metavar="URL",
                    help="keep the index in PostgreSQL + pgvector (postgresql://user@host/db); DIR then "
                         "holds only a manifest without the password (give it via PGPASSWORD or ~/.pgpass)")
    sp.add_argument("--append", action="store_true",
                    help="add the KG's events to the index already in DIR (in memory or PostgreSQL)")
    sp.add_argument("--replace", action="store_true",
                    help="allow replacing an index of the other kind (in-memory <-> PostgreSQL) in DIR")
    add_encoder_opts(sp)
    sp.set_defaults(func=_cmd_ingest)

    add_demo_parser(sub, add_encoder_opts)

    from chronorag.evaluation import METHODS

    sp = sub.add_parser("ask", help="answer one question, or a JSONL file of questions, over an index")
    sp.add_argument("index_dir")
    sp.add_argument("question", nargs="?", default=None)
    sp.add_argument("--questions", default=None,
                    help="JSONL file, one {\"question\": ...} per line, answered in order in one process")
    sp.add_argument("--reference", default=None,
                    help="reference date (YYYY-MM-DD) for relative dates such as 'last year' "
                         "(default: the KG's last date, stated in the answer)")
    sp.add_argument("--method", default="dense", choices=sorted(METHODS))
    sp.add_argument("--llm-url", default=None, help="OpenAI-compatible endpoint (default: no-LLM mode)")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.add_argument("--deadline", type=float, default=None,
                    help="seconds per question for the tools agent (default 300)")
    sp.set_defaults(func=_cmd_ask)

    sp = sub.add_parser("eval", help="evaluate a method on a question file")
    sp.add_argument("dataset", choices=["multitq", "time-longqa", "jsonl", "2wiki", "graphrag-bench"])
    sp.add_argument("index_dir")
    sp.add_argument("questions")
    sp.add_argument("--method", default="dense", choices=sorted(METHODS))
    sp.add_argument("--limit", type=int, default=None)
    sp.add_argument("--out", default=None,
                    help="run file (JSONL) to write; replaced atomically when the run ends "
                         "(default: a new unique file in the temp directory)")
    sp.add_argument("--llm-url", default=None)
    sp.add_argument("--deadline", type=float, default=None,
                    help="seconds per question for the tools agent (default 300)")
    sp.add_argument("--max-iter", type=int, default=None, help="ToPG: Suggestion-Selection iterations")
    sp.add_argument("--lam", type=float, default=None, help="ToPG: structural weight lambda")
    sp.add_argument("--token-budget", type=int, default=None,
                    help="graphrag-bench: context tokens per question (default 1000)")
    sp.add_argument("--judge", action="store_true",
                    help="also score the first answer with an LLM judge (majority of 3 calls; needs --llm-url)")
    sp.add_argument("--judge-votes", type=int, default=3, help="judge calls per answer (odd)")
    sp.set_defaults(func=_cmd_eval)

    sp = sub.add_parser("star-rag", help="STAR-RAG jobs")
    ssub = sp.add_subparsers(dest="star_command", required=True)
    b = ssub.add_parser("build", help="build the rule graph of an index directory")
    b.add_argument("index_dir")
    b.add_argument("--min-support", type=float, default=0.02, help="Apriori minimum support")
    b.add_argument("--k-type", type=int, default=2, help="labels kept per entity")
    b.add_argument("--window-days", type=int, default=30, help="local time window for event pairs")
    b.set_defaults(func=_cmd_star_build)

    sp = sub.add_parser("tgrag", help="T-GRAG jobs")
    tsub = sp.add_subparsers(dest="tgrag_command", required=True)
    b = tsub.add_parser("index", help="index period documents (one file per period) into a T-GRAG index")
    b.add_argument("docs", help="a directory of .md/.txt files named by period (2019.md), or one file with --period")
    b.add_argument("--out", required=True, help="index directory")
    b.add_argument("--period", default=None, help="period of the given documents (default: file name)")
    b.add_argument("--add", action="store_true", help="add new periods to an existing index")
    b.add_argument("--chunk-tokens", type=int, default=1000)
    b.add_argument("--llm-url", default=None, help="extract with an LLM (default: spaCy, no LLM)")
    add_encoder_opts(b)
    b.set_defaults(func=_cmd_tgrag_index)

    sp = sub.add_parser("topg", help="ToPG jobs")
    tsub = sp.add_subparsers(dest="topg_command", required=True)
    b = tsub.add_parser("index", help="build a ToPG proposition graph from a corpus")
    b.add_argument("corpus", help="JSON list of {title, text} or {context} records, or a folder of .txt/.md files")
    b.add_argument("--out", required=True, help="index directory (replaced atomically)")
    b.add_argument("--llm-url", default=None, help="extract with an LLM (default: spaCy, no LLM)")
    b.add_argument("--add", action="store_true", help="add the passages to an existing index")
    b.add_argument("--no-communities", action="store_true", help="skip the Leiden communities (Global mode)")
    add_encoder_opts(b)
    b.set_defaults(func=_cmd_topg_index)

    sp = sub.add_parser("sft", help="write TempTool SFT records (tagged protocol, correct answers only)")
    sp.add_argument("source", choices=["cronquestions", "reasoner"],
                    help="cronquestions: convert tool trajectories; reasoner: run the no-LLM reasoner on questions")
    sp.add_argument("path", help="trajectory file, or a question JSONL with gold answers")
    sp.add_argument("--out", required=True)
    sp.add_argument("--index", default=None, help="index directory (reasoner source)")
    sp.add_argument("--limit", type=int, default=None)
    sp.set_defaults(func=_cmd_sft)

    sp = sub.add_parser("ragas", help="RAGAS scores of a run file from `eval` (LLM-free and temporal "
                                      "metrics; LLM metrics with --llm-url; tool-call accuracy with --tool-calls)")
    sp.add_argument("predictions", help="the run file (JSONL) `chronorag eval --out` wrote")
    sp.add_argument("--tool-calls", action="store_true",
                    help="score tool-call traces with RAGAS ToolCallAccuracy in strict order")
    sp.add_argument("--reference", default=None,
                    help="with --tool-calls: question file with reference_tool_calls, or a run file whose traces "
                         "are the reference (default: reference_tool_calls in the predictions)")
    sp.add_argument("--llm-url", default=None,
                    help="OpenAI-compatible endpoint for faithfulness, answer correctness and context precision")
    sp.add_argument("--embedding-url", default=None, help="embeddings endpoint (default: --llm-url)")
    sp.add_argument("--embedding-model", default=None, help="embeddings model name (default: the LLM model name)")
    sp.set_defaults(func=_cmd_ragas)

    sp = sub.add_parser("report", help="side-by-side HTML report (with PNG figures) of run files from `eval`")
    sp.add_argument("runs", nargs="+", help="run files (JSONL) written by `chronorag eval --out`")
    sp.add_argument("--out", required=True, help="directory for index.html and the PNGs (created if missing)")
    sp.add_argument("--title", default=None)
    sp.set_defaults(func=_cmd_report)

    sp = sub.add_parser("info", help="print an index directory's metadata")
    sp.add_argument("index_dir")
    sp.set_defaults(func=_cmd_info)

    _add_kg_irag(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``chronorag`` console script.

    Expected failures (bad input files, damaged or foreign index files, a locked or
    refused output directory, operating-system errors such as a permission denied)
    print one line ``chronorag CMD: error: ...`` naming the file and the fix, and
    return 2. Ctrl-C (SIGINT) at any moment, imports included, returns 130 (the console
    script exits 130 even for a Ctrl-C while its modules import or while it cleans up).
    Anything else is a bug and keeps its traceback.
    """
    import threading

    global _INTERRUPTED
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if in_main else None
    if in_main:
        _INTERRUPTED = False
        signal.signal(signal.SIGINT, _interrupt)  # Ctrl-C -> KeyboardInterrupt, remembered
    try:
        return _main(argv)
    except Exception:
        if not _INTERRUPTED:
            raise
        return _interrupted("chronorag")  # a library turned the Ctrl-C into another error
    except KeyboardInterrupt:  # while parsing or importing, before a command ran
        if in_main and _CONSOLE:  # a second Ctrl-C while reporting: just leave
            signal.signal(signal.SIGINT, _exit_130)
        return _interrupted("chronorag")
    finally:
        if in_main:
            signal.signal(signal.SIGINT, _exit_130 if _CONSOLE else (previous or signal.default_int_handler))


def _main(argv: list[str] | None) -> int:
    set_offline_env()
    argv = list(sys.argv[1:] if argv is None else argv)
    raw = list(argv)
    pos = [i for i, a in enumerate(argv) if not a.startswith("-")]
    if len(pos) >= 2 and argv[pos[0]] == "eval" and argv[pos[1]] == "kg-irag":
        argv[pos[0]], argv[pos[1]] = "kg-irag", "eval"  # `eval kg-irag ...` is `kg-irag eval ...`
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if (extra and args.command == "ask" and args.question is None and len(extra) == 1
            and not extra[0].startswith("-")):
        # `ask INDEX --method m "question"`: argparse (before Python 3.12) takes the optional
        # question as absent at INDEX and leaves it over; it is the question
        args.question = extra[0]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.argv = raw
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return _interrupted(f"chronorag {args.command}")
    except BrokenPipeError:  # `chronorag ... | head`: the reader left; say nothing, as Unix tools do
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if _INTERRUPTED:  # a library turned the Ctrl-C into another error
            return _interrupted(f"chronorag {args.command}")
        message = _expected_message(exc)
        if message is None:  # a bug: keep its traceback
            raise
        print(f"chronorag {args.command}: error: {message}", file=sys.stderr)
        return 2


def _interrupted(who: str) -> int:
    """Say that the run was interrupted and nothing it was writing changed; return 130."""
    print(f"{who}: interrupted; any index or output file being written was left as it was before this run",
          file=sys.stderr)
    return 130


def _expected_message(exc: Exception) -> str | None:
    """The one-line message of an expected failure, or None for a bug."""
    import sqlite3

    if isinstance(exc, (ChronoRAGError, ValueError, FileNotFoundError, NotADirectoryError)):
        return _message(exc)
    if isinstance(exc, OSError):
        return _os_error_message(exc)
    if isinstance(exc, RecursionError):
        return "an input is nested too deeply to read (deeply nested JSON?); check the files given"
    if isinstance(exc, sqlite3.Error):
        return f"embedding cache: {exc}; pass another --cache file or set CHRONORAG_HOME"
    return None


def _message(exc: BaseException) -> str:
    """The one-line message of an expected error (never empty)."""
    text = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        text = str(exc.args[0])
    return text or f"{type(exc).__name__} (no details)"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
