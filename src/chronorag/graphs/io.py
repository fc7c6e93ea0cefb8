"""Streaming loaders for temporal event files: ICEWS-style TSV(.gz), CSV, JSONL.

Formats
-------
TSV (``.tsv``, ``.txt``, optionally ``.gz``)
    ``subject<TAB>relation<TAB>object<TAB>time`` or with a fifth ``end`` column; no
    header. This is the ICEWS/MultiTQ layout in ``../shared/data``.
CSV (``.csv``, optionally ``.gz``)
    A header row with ``subject, relation, object, start`` (or ``time``) and optional
    ``end`` and ``text``; other columns become the event's attributes.
JSONL (``.jsonl``, ``.ndjson``, optionally ``.gz``)
    One object per line with the same keys; an ``attrs`` object and any other keys
    become attributes.

In every format an empty ``end`` (an empty fifth TSV field, e.g. a trailing tab; an
empty CSV cell; ``""`` or ``null`` in JSONL) means "no end": a point event. Files may
start with a UTF-8 byte-order mark; it is not part of the first name.

Malformed lines fail the load by default with ``file:line`` and the reason; with
``on_error="skip"`` they are skipped and counted in :attr:`TemporalEventStore.load_report`.
"""

from __future__ import annotations

import csv
import errno
import gzip
import io
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chronorag.errors import ChronoRAGError, ConfigError, DataFormatError, MissingFileError
from chronorag.graphs.store import EventStoreBuilder, LoadReport, TemporalEventStore

__all__ = ["FORMATS", "detect_format", "read_events"]

FORMATS = ("tsv", "csv", "jsonl")
_CORE = ("subject", "relation", "object")


def detect_format(path: str | os.PathLike[str]) -> str:
    """Guess the format from the file name (``.tsv[.gz]``, ``.csv[.gz]``, ``.jsonl[.gz]``).

    Raises
    ------
    DataFormatError
        When the extension is not one of the known ones.
    """
    name = Path(path).name.lower()
    name = name.removesuffix(".gz")
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    fmt = {"tsv": "tsv", "txt": "tsv", "csv": "csv", "jsonl": "jsonl", "ndjson": "jsonl"}.get(ext)
    if fmt is None:
        raise DataFormatError(
            f"cannot tell the format of {str(path)!r} from its extension; pass fmt= one of {FORMATS}"
        )
    return fmt


class _Progress:
    """Byte-based progress over the raw (possibly compressed) file."""

    def __init__(self, raw: Any, total: int, enabled: bool, desc: str) -> None:
        self.raw = raw
        self.bar = None
        self.last = 0
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="B", unit_scale=True, desc=desc, leave=False)

    def tick(self) -> None:
        if self.bar is not None:
            pos = self.raw.tell()
            self.bar.update(pos - self.last)
            self.last = pos

    def close(self) -> None:
        if self.bar is not None:
            self.tick()
            self.bar.close()


def _rows_tsv(fh: io.TextIOBase) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for lineno, line in enumerate(fh, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) not in (4, 5):
            yield lineno, f"expected 4 or 5 tab-separated fields, got {len(parts)}"
            continue
        row: dict[str, Any] = {"subject": parts[0], "relation": parts[1], "object": parts[2],
                               "start": parts[3]}
        if len(parts) == 5 and parts[4].strip():
            row["end"] = parts[4]
        yield lineno, row


def _rows_csv(fh: io.TextIOBase) -> Iterator[tuple[int, dict[str, Any] | str]]:
    reader = csv.DictReader(fh)
    header = reader.fieldnames or []
    start_col = "start" if "start" in header else "time" if "time" in header else None
    missing = [c for c in _CORE if c not in header] + ([] if start_col else ["start"])
    if missing:
        raise DataFormatError(f"CSV header {header} lacks column(s) {missing}")
    for rec in reader:
        lineno = reader.line_num
        if None in rec or any(v is None for v in rec.values()):
            yield lineno, f"expected {len(header)} comma-separated fields"
            continue
        assert start_col is not None  # a header without it raised above
        yield lineno, _split_row(rec, start_col)


def _split_row(rec: dict[str, Any], start_col: str) -> dict[str, Any]:
    row = {k: rec[k] for k in _CORE}
    row["start"] = rec[start_col]
    if rec.get("end") is not None and str(rec["end"]).strip():
        row["end"] = rec["end"]
    if rec.get("text") not in (None, ""):
        row["text"] = rec["text"]
    attrs = dict(rec.get("attrs") or {}) if isinstance(rec.get("attrs"), dict) else {}
    for k, v in rec.items():
        if k not in (*_CORE, start_col, "end", "text", "attrs"):
            attrs[k] = v
    if attrs:
        row["attrs"] = attrs
    return row


def _rows_jsonl(fh: io.TextIOBase) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for lineno, line in enumerate(fh, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            yield lineno, f"invalid JSON ({exc.msg})"
            continue
        except RecursionError:
            yield lineno, "JSON nested too deeply"
            continue
        if not isinstance(rec, dict):
            yield lineno, f"expected a JSON object, got {type(rec).__name__}"
            continue
        start_col = "start" if "start" in rec else "time" if "time" in rec else None
        missing = [c for c in _CORE if c not in rec] + ([] if start_col else ["start"])
        if missing:
            yield lineno, f"missing key(s) {missing}"
            continue
        if "attrs" in rec and not isinstance(rec["attrs"], dict):
            yield lineno, "'attrs' must be an object"
            continue
        assert start_col is not None  # a record without it was skipped above
        yield lineno, _split_row(rec, start_col)


_READERS = {"tsv": _rows_tsv, "csv": _rows_csv, "jsonl": _rows_jsonl}


def read_events(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    on_error: str = "raise",
    progress: bool = True,
    builder: EventStoreBuilder | None = None,
) -> TemporalEventStore:
    """Stream an event file into a :class:`TemporalEventStore`.

    Parameters
    ----------
    path : path-like
        The file; ``.gz`` files are decompressed on the fly.
    fmt : {"tsv", "csv", "jsonl"}, optional
        Defaults to :func:`detect_format`.
    on_error : {"raise", "skip"}
        ``"raise"`` (default) stops at the first malformed line with a
        :class:`~chronorag.errors.DataFormatError` naming ``file:line`` and the reason;
        ``"skip"`` skips such lines and counts them in ``store.load_report``.
    progress : bool
        Show a progress bar (bytes read).
    builder : EventStoreBuilder, optional
        Append to this builder (to merge several files) instead of a new one.

    Returns
    -------
    TemporalEventStore
        With ``load_report`` set to a :class:`~chronorag.graphs.store.LoadReport`.
    """
    if on_error not in ("raise", "skip"):
        raise ConfigError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory; pass the events file itself", str(p))
    if not p.is_file():
        raise MissingFileError(f"no such event file: {p}")
    fmt = detect_format(p) if fmt is None else fmt
    if fmt not in FORMATS:
        raise DataFormatError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    b = builder if builder is not None else EventStoreBuilder()
    report = LoadReport(path=str(p))
    with open(p, "rb") as raw:
        stream: Any = gzip.GzipFile(fileobj=raw) if p.name.lower().endswith(".gz") else raw
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="" if fmt == "csv" else None)
        bar = _Progress(raw, p.stat().st_size, progress, desc=f"reading {p.name}")
        try:
            for lineno, row in _READERS[fmt](text):
                report.n_lines = lineno
                if lineno % 65536 == 0:
                    bar.tick()
                reason = row if isinstance(row, str) else None
                if not isinstance(row, str):
                    try:
                        b.add(row["subject"], row["relation"], row["object"], row["start"],
                              row.get("end"), text=row.get("text"), attrs=row.get("attrs"))
                        report.n_events += 1
                        continue
                    except ChronoRAGError as exc:
                        reason = str(exc)
                if on_error == "raise":
                    raise DataFormatError(f"{p}:{lineno}: {reason}")
                report.n_skipped += 1
                if len(report.examples) < 5:
                    report.examples.append(f"{p.name}:{lineno}: {reason}")
        except UnicodeDecodeError as exc:
            raise DataFormatError(f"{p}: not UTF-8 text near line {report.n_lines + 1}: {exc}") from None
        except csv.Error as exc:  # e.g. a field over the csv module's 131,072-character limit
            raise DataFormatError(f"{p}: unreadable CSV near line {report.n_lines + 1} ({exc}); a field that "
                                  "long is usually an unbalanced quote") from None
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            from chronorag.graphs.persist import gzip_error_message

            raise DataFormatError(gzip_error_message(p, exc)) from None
        finally:
            bar.close()
    store = b.build()
    store.load_report = report
    return store
