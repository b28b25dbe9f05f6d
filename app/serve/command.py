"""``huichat serve``: the command that starts the HTTP face."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import socket
import sys
from typing import TYPE_CHECKING

from huichat.app.errors import CommandError
from huichat.app.wording import plural

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "serve chat with memory (OpenAI-compatible), the memory API, a dashboard"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """Where to listen."""
    parser.add_argument("--host", metavar="ADDR", help="address to listen on (default serve.host, 127.0.0.1)")
    parser.add_argument("--port", type=_port, metavar="N", help="port to listen on (default serve.port, 8000)")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (1-65535)")
    return port


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything says the server runs (a busy port is one line)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)  # create_server repeats the address
        raise CommandError(f"cannot listen on {host}:{port}: {reason}") from None


_GRACE_SECONDS = 1
"""How long open connections may go on after SIGTERM or Ctrl-C before the server closes."""


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Serve until SIGTERM or Ctrl-C, and end within about two seconds of it."""
    import uvicorn

    from huichat.app.serve.app import create_app
    from huichat.app.serve.server import Server
    from huichat.app.users.keys import KeyRing, KeyRingError

    settings = runtime.loaded.config.serve
    host = args.host or settings.host
    port = args.port or settings.port
    try:
        active = [k for k in KeyRing.configured(runtime.loaded).entries() if k.active]
    except KeyRingError as exc:
        raise CommandError(str(exc)) from None
    listening = _listen(host, port)
    where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    print(f"huichat serve: {where}  ·  API docs {where}/docs  ·  dashboard {where}/v1/memory/viz", flush=True)
    if active:
        print(f"{plural(len(active), 'API key')} active: every request needs one.", flush=True)
    elif settings.allow_loopback_without_keys:
        print("no API key yet: clients on this machine are let in as the owner (serve.allow_loopback_without_keys).")
    else:
        print("no API key yet, so every request is refused: create one with `huichat keys create --user NAME`.")
    # connections get a moment to finish; replies still running are stopped (their question kept)
    app = create_app(runtime)
    server = Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="info",
            server_header=False,
            timeout_graceful_shutdown=_GRACE_SECONDS,
        ),
        app.state.service,
    )
    loop = asyncio.new_event_loop()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn has shut down, memory is closed
        loop.run_until_complete(server.serve(sockets=[listening]))
    # a search past its caller may still run in a worker thread (LanceDB and the model cannot be
    # interrupted): memory is closed, so the process ends without waiting for it
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
