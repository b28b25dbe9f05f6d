"""The import direction: memory and providers never load each other, textual or the wrong vendor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _loaded_after(statement: str) -> set[str]:
    """The top-level packages loaded by ``statement`` in a fresh interpreter, huichat's own by their part
    (``huichat.memory``, ``huichat.app``, ``huichat.providers``)."""
    code = (
        f"import sys, json\n{statement}\n"
        "print(json.dumps(sorted('.'.join(m.split('.')[:2]) if m.startswith('huichat.') else m.split('.')[0] "
        "for m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import huichat.memory",
        "import huichat.memory.kernel, huichat.memory.store, huichat.memory.retrieval, huichat.memory.embedding, "
        "huichat.memory.timeparse",
        "import huichat.memory.imports.reader, huichat.memory.imports.summary, huichat.memory.imports.grouping",
    ],
)
def test_memory_loads_neither_textual_nor_litellm(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert "textual" not in loaded
    assert "litellm" not in loaded
    assert "huichat.memory" in loaded
    assert "huichat.providers" not in loaded and "huichat.app" not in loaded


@pytest.mark.parametrize(
    "statement", ["import huichat.providers", "import huichat.providers.llm, huichat.providers.toolcalls"]
)
def test_providers_load_neither_textual_nor_lancedb(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert "textual" not in loaded
    assert "lancedb" not in loaded
    assert "huichat.providers" in loaded
    assert "huichat.memory" not in loaded and "huichat.app" not in loaded


def test_session_module_does_not_import_textual() -> None:
    assert "textual" not in _loaded_after("import huichat.app.session")


@pytest.mark.parametrize(
    ("statement", "heavy_libraries"),
    [
        (
            "import huichat.app.wiring, huichat.app.config",
            ("torch", "lancedb", "litellm", "sentence_transformers", "textual"),
        ),
        (
            "import huichat.app.tui.app, huichat.app.tui.screens.chat",
            ("torch", "lancedb", "litellm", "sentence_transformers"),
        ),
    ],
)
def test_the_ui_paints_before_heavy_libraries_load(statement: str, heavy_libraries: tuple[str, ...]) -> None:
    loaded = _loaded_after(statement)
    for heavy in heavy_libraries:
        assert heavy not in loaded, heavy


def _full_names_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_opening_the_chat_builds_no_command_parser_and_paints_without_markdown() -> None:
    # `huichat` alone parses only the top-level options: no command modules, no benchmarks;
    # the chat screen and its greeting load no markdown-it (it comes with the first answer)
    loaded = _full_names_after(
        "from huichat.app.wiring import _parse\nargs, command = _parse(['--provider', 'x'])\n"
        "assert args.command is None and command is None\n"
        "import huichat.app.tui.app, huichat.app.tui.screens.chat, huichat.app.tui.widgets.chat_message"
    )
    assert not any(name.startswith(("benchmarks", "huichat.app.cli", "markdown_it")) for name in loaded)


def test_lancedb_loads_without_the_rest_client_which_still_loads_when_used() -> None:
    before = _full_names_after("import huichat.memory.store")
    assert "lancedb" in before
    assert not any(name.startswith("lance_namespace_urllib3_client.api") for name in before)
    after = _full_names_after(
        "import huichat.memory.store\nfrom lance_namespace_urllib3_client import ApiClient, TableApi\n"
        "import lance_namespace_urllib3_client as client\nassert client.__version__ and ApiClient and TableApi"
    )
    assert "lance_namespace_urllib3_client.api.table_api" in after


def test_litellm_imports_with_the_collector_paused_then_frozen_and_a_later_open_freezes_nothing(
    tmp_path: Path,
) -> None:
    # the first open imports litellm with the cyclic collector off, freezes what it built (so
    # later full collections skip it) and turns the collector back on; a second open (a server
    # opening another client) freezes nothing more: its requests' objects stay collectable
    code = (
        "import gc, json\n"
        "from huichat.app.config import load_config\nfrom huichat.app.wiring import runtime\n"
        "faces = runtime(load_config(None))\n"
        "paused = []\n"
        "import builtins\nreal_import = builtins.__import__\n"
        "def spy(name, *args, **kwargs):\n"
        "    if name == 'litellm' and not paused:\n"
        "        paused.append(gc.isenabled())\n"
        "    return real_import(name, *args, **kwargs)\n"
        "builtins.__import__ = spy\n"
        "faces.open_llm()\nbuiltins.__import__ = real_import\n"
        "first = gc.get_freeze_count()\n"
        "faces.open_llm()\n"
        "print(json.dumps([paused, first, gc.get_freeze_count(), gc.isenabled()]))"
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True, env=env
    )
    paused, first, second, enabled = json.loads(done.stdout.strip().splitlines()[-1])
    assert paused == [False]
    assert first > 100_000  # litellm's modules, classes and tables
    assert second == first
    assert enabled
