"""The import direction: memory and providers never load each other, textual or the wrong vendor."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import memory",
        "import memory.kernel, memory.store, memory.retrieval, memory.embedding, memory.timeparse",
        "import memory.imports.reader, memory.imports.summary, memory.imports.synthetic, memory.imports.grouping",
    ],
)
def test_memory_loads_neither_textual_nor_litellm(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert "textual" not in loaded
    assert "litellm" not in loaded
    assert "providers" not in loaded and "app" not in loaded


@pytest.mark.parametrize("statement", ["import providers", "import providers.llm, providers.toolcalls"])
def test_providers_load_neither_textual_nor_lancedb(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert "textual" not in loaded
    assert "lancedb" not in loaded
    assert "memory" not in loaded and "app" not in loaded


def test_session_module_does_not_import_textual() -> None:
    assert "textual" not in _loaded_after("import app.session")


@pytest.mark.parametrize(
    ("statement", "heavy_libraries"),
    [
        ("import app.__main__, app.config", ("torch", "lancedb", "litellm", "sentence_transformers", "textual")),
        ("import app.tui, app.screens.chat", ("torch", "lancedb", "litellm", "sentence_transformers")),
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
        "from app.wiring import _parse\nargs = _parse(['--provider', 'x'])\nassert args.command is None\n"
        "import app.tui, app.screens.chat, app.widgets.chat_message"
    )
    assert not any(name.startswith(("benchmarks", "app.commands", "markdown_it")) for name in loaded)


def test_lancedb_loads_without_the_rest_client_which_still_loads_when_used() -> None:
    before = _full_names_after("import memory.store")
    assert "lancedb" in before
    assert not any(name.startswith("lance_namespace_urllib3_client.api") for name in before)
    after = _full_names_after(
        "import memory.store\nfrom lance_namespace_urllib3_client import ApiClient, TableApi\n"
        "import lance_namespace_urllib3_client as client\nassert client.__version__ and ApiClient and TableApi"
    )
    assert "lance_namespace_urllib3_client.api.table_api" in after
