"""``huichat serve``: the HTTP face — OpenAI-compatible chat with memory, the memory API, the dashboard.

One module per concern: ``app`` (the factory), ``auth`` and ``ratelimit`` (who may ask, how
often), ``bodylimit``, ``conversations`` (which session a request continues), ``chat`` and
``memory_api`` (the routes), ``transcripts`` (reading files safely), ``dashboard``, ``jobs``.
"""

from __future__ import annotations

from app.runtime import Runtime


def run_server(runtime: Runtime, host: str | None, port: int | None) -> int:
    """Serve until interrupted; return the exit status."""
    import uvicorn

    from app.apikeys import KeyRing, KeyRingError
    from app.serve.app import create_app

    settings = runtime.loaded.config.serve
    host = host or settings.host
    port = port or settings.port
    try:
        active = [k for k in KeyRing(runtime.loaded.paths.data_dir).entries() if k.active]
    except KeyRingError as exc:
        print(f"huichat: error: {exc}")
        return 1
    where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    print(f"huichat serve: {where}  ·  API docs {where}/docs  ·  dashboard {where}/v1/memory/viz", flush=True)
    if active:
        print(f"{len(active)} API key(s) active: every request needs one.", flush=True)
    elif settings.allow_loopback_without_keys:
        print("no API key yet: clients on this machine are let in as the owner (serve.allow_loopback_without_keys).")
    else:
        print("no API key yet, so every request is refused: create one with `huichat keys create --user NAME`.")
    uvicorn.run(create_app(runtime), host=host, port=port, log_level="info", server_header=False)
    return 0
