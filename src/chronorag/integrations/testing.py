"""Test double: a real HTTP server on 127.0.0.1 speaking the OpenAI protocol with scripted replies.

``ScriptedOpenAIServer`` is a *test double* for tests and offline examples. It serves
``POST /v1/chat/completions`` (plain and ``stream=true``, including ``tool_calls``),
``POST /v1/embeddings`` (deterministic hashed vectors), ``GET /v1/models`` and ``GET /health``, so
LangChain's ``ChatOpenAI``, LlamaIndex's ``OpenAILike`` and the ``openai`` client talk
to it over real sockets exactly as they talk to vLLM.

Each chat request takes the next scripted reply. A reply is

- a ``str``: an assistant message with that content;
- a ``dict`` with ``"content"`` and/or ``"tool_calls"`` (a list of
  ``{"name": ..., "arguments": {...}}``; ``arguments`` given as a string is sent
  verbatim, so a test can script malformed or double-encoded JSON);
- a ``dict`` with ``"body"`` (and optionally ``"status"``, default 200): that JSON body
  is sent verbatim, for malformed replies (``{"choices": []}``) and HTTP errors;
- a callable ``(request_json) -> str | dict``, for replies that depend on the prompt.

When the script is exhausted the server answers HTTP 500 with a message saying so
(a test should fail loudly, not hang). Every request body is kept in ``requests``.

Examples
--------
>>> with ScriptedOpenAIServer(["Paris"]) as srv:  # doctest: +SKIP
...     cfg = LLMConfig(base_url=srv.base_url)
...     chat(cfg, [{"role": "user", "content": "Capital of France?"}])
'Paris'
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError, UsageError

__all__ = ["Reply", "ScriptedOpenAIServer"]

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], "str | dict[str, Any]"]


def _count_tokens(text: str) -> int:
    return len(text.split())


def _prompt_text(req: dict[str, Any]) -> str:
    parts = []
    for m in req.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            parts.extend(p.get("text", "") for p in c if isinstance(p, dict))
    return "\n".join(parts)


class ScriptedOpenAIServer:
    """A threaded local OpenAI-protocol server with scripted replies (a test double).

    Parameters
    ----------
    replies : iterable of Reply
        Replies handed out in order, one per chat request.
    model : str
        Model name reported in responses and ``/v1/models``.
    embedding_dim : int
        Size of the vectors ``/v1/embeddings`` returns.
    """

    def __init__(self, replies: Iterable[Reply] = (), *, model: str = "chronorag",
                 embedding_dim: int = 32) -> None:
        self._replies = list(replies)
        for i, r in enumerate(self._replies):
            if not (isinstance(r, (str, dict)) or callable(r)):
                raise ArgumentTypeError(f"reply #{i} must be str, dict or callable, got {type(r).__name__}")
        if embedding_dim < 1:
            raise ConfigError(f"embedding_dim must be >= 1, got {embedding_dim}")
        self.model = model
        self.embedding_dim = embedding_dim
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control
    def add_replies(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        if self._httpd is None:
            raise UsageError("server not started; use `with ScriptedOpenAIServer(...) as srv:`")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedOpenAIServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def _send(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/health":  # as vLLM serves it (routers probe it)
                    self._send(200, {})
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "owned_by": "chronorag-test"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", "0"))
                try:
                    req = json.loads(self.rfile.read(n) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON"}})
                    return
                with server._lock:
                    server.requests.append(req)
                if self.path.endswith("/chat/completions"):
                    server._chat(self, req)
                elif self.path.endswith("/embeddings"):
                    self._send(200, server._embeddings(req))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- protocol
    def _next_reply(self, req: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if not self._replies:
                raise LookupError("scripted replies exhausted")
            r = self._replies.pop(0)
        if callable(r) and not isinstance(r, (str, dict)):
            r = r(req)
        if isinstance(r, str):
            return {"content": r}
        if not isinstance(r, dict):
            raise ArgumentTypeError(f"scripted reply must be str or dict, got {type(r).__name__}")
        return r

    def _chat(self, h: BaseHTTPRequestHandler, req: dict[str, Any]) -> None:
        try:
            reply = self._next_reply(req)
        except (LookupError, TypeError) as exc:
            h._send(500, {"error": {"message": f"ScriptedOpenAIServer: {exc}"}})  # type: ignore[attr-defined]
            return
        if "body" in reply:
            h._send(int(reply.get("status", 200)), reply["body"])  # type: ignore[attr-defined]
            return
        content = reply.get("content")
        calls = [
            {"id": f"call_{len(self.requests)}_{i}", "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c.get("arguments"), str)
                          else json.dumps(c.get("arguments", {}))}}
            for i, c in enumerate(reply.get("tool_calls", []))
        ]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        finish = "tool_calls" if calls else "stop"
        usage = {
            "prompt_tokens": _count_tokens(_prompt_text(req)),
            "completion_tokens": _count_tokens(content or "") + sum(
                _count_tokens(str(c["function"]["arguments"])) for c in calls),  # type: ignore[index,misc]
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        cid = f"chatcmpl-{len(self.requests)}"
        created = int(time.time())
        if not req.get("stream"):
            h._send(200, {  # type: ignore[attr-defined]
                "id": cid, "object": "chat.completion", "created": created, "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            })
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.end_headers()

        def emit(delta: dict[str, Any], fin: str | None = None, **extra: Any) -> None:
            chunk = {"id": cid, "object": "chat.completion.chunk", "created": created,
                     "model": self.model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": fin}], **extra}
            h.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())

        emit({"role": "assistant", "content": ""})
        if content:
            emit({"content": content})
        for i, c in enumerate(calls):
            emit({"tool_calls": [{"index": i, **c}]})
        emit({}, finish, usage=usage)
        h.wfile.write(b"data: [DONE]\n\n")
        h.wfile.flush()

    def _embeddings(self, req: dict[str, Any]) -> dict[str, Any]:
        inp = req.get("input", [])
        texts = [inp] if isinstance(inp, str) else list(inp)
        data = []
        for i, t in enumerate(texts):
            vec = []
            for j in range(self.embedding_dim):
                d = hashlib.blake2b(f"{j}:{t}".encode(), digest_size=4).digest()
                vec.append(int.from_bytes(d, "little") / 2**32 - 0.5)
            data.append({"object": "embedding", "index": i, "embedding": vec})
        return {"object": "list", "data": data, "model": req.get("model", self.model),
                "usage": {"prompt_tokens": sum(_count_tokens(str(t)) for t in texts),
                          "total_tokens": sum(_count_tokens(str(t)) for t in texts)}}
