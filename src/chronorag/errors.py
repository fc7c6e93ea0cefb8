"""The one errors module of chronorag.

Every error chronorag raises on purpose derives from :class:`ChronoRAGError`, so
callers can catch the whole family; each also derives from the builtin exception a
Python user would expect (``ValueError`` for bad values, ``KeyError`` for unknown
names, ``ImportError`` for a missing optional extra).
"""

from __future__ import annotations

__all__ = [
    "ArgumentTypeError",
    "ChronoRAGError",
    "ConfigError",
    "DataFormatError",
    "IndexBusyError",
    "IndexFormatError",
    "IntervalOrderError",
    "LLMEchoError",
    "LLMError",
    "MissingExtraError",
    "MissingFileError",
    "OutOfRangeError",
    "OutputExistsError",
    "StoreConnectionError",
    "TimeParseError",
    "UnknownNameError",
    "UsageError",
]


class ChronoRAGError(Exception):
    """Base class of every error raised by chronorag."""


class ConfigError(ChronoRAGError, ValueError):
    """A bad argument or setting (a graph's context field, a retriever option, an LLM object);
    the message names the setting, the value and what is accepted."""


class ArgumentTypeError(ChronoRAGError, TypeError):
    """An argument of the wrong type (a path where an index is expected, a number where a list
    is); the message names the argument, what was given and what is accepted."""


class MissingFileError(ChronoRAGError, FileNotFoundError):
    """An input file or directory that does not exist; the message names the path."""


class OutOfRangeError(ChronoRAGError, IndexError):
    """An id outside the ids an index or graph holds; the message names the id and the range."""


class UsageError(ChronoRAGError, RuntimeError):
    """An object used before it is ready or on a machine that cannot run it (a test server not
    started, ``gpu=True`` without a GPU); the message says what to do first."""


class TimeParseError(ChronoRAGError, ValueError):
    """A time expression could not be parsed (e.g. ``"2010-13-01"`` or ``"yesterday"``)."""


class IntervalOrderError(ChronoRAGError, ValueError):
    """An interval or a time window whose begin lies after its end."""


class DataFormatError(ChronoRAGError, ValueError):
    """A malformed record in an input file; the message names ``file:line`` and the reason."""


class UnknownNameError(ChronoRAGError, KeyError):
    """An entity, relation, method or other name that is not known."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class IndexFormatError(ChronoRAGError, ValueError):
    """An index directory that is missing files or was written by an incompatible version."""


class IndexBusyError(ChronoRAGError, RuntimeError):
    """Another process is writing the same index directory (it holds the writer lock)."""


class OutputExistsError(ChronoRAGError, FileExistsError):
    """An output path that chronorag will not replace (a file, or a directory it did not write)."""


class StoreConnectionError(ChronoRAGError, ConnectionError):
    """A database behind an index cannot be used: unreachable, refused credentials, or a
    missing extension; the message names the URL without its password."""


class MissingExtraError(ChronoRAGError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


class LLMError(ChronoRAGError, RuntimeError):
    """The LLM endpoint is not configured, unreachable, or returned an unusable reply."""


class LLMEchoError(LLMError):
    """The LLM repeated its prompt instead of answering (what a base, not instruction-tuned,
    model does); counted as the ``llm.echo`` fallback."""


def missing_extra(package: str, extra: str) -> MissingExtraError:
    """Build the error raised when the optional ``package`` (from ``extra``) is absent.

    Parameters
    ----------
    package : str
        Import name of the missing package, e.g. ``"faiss"``.
    extra : str
        Name of the chronorag extra that provides it, e.g. ``"cpu"``.
    """
    return MissingExtraError(
        f"{package!r} is not installed; install it with: pip install 'chronorag[{extra}]'"
    )
