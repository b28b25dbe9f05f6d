"""``huichat bench KIND``: every kind the parser offers runs an entry point that exists."""

from __future__ import annotations

import argparse
import importlib
import inspect
from pathlib import Path

from benchmarks.cli import BENCHES, add_parser
from huichat.app.config import load_config


def _kinds() -> set[str]:
    parser = argparse.ArgumentParser()
    add_parser(parser)
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(subparsers.choices)


def test_every_bench_kind_has_an_entry_point_taking_args_config_and_zone() -> None:
    assert _kinds() == set(BENCHES)
    for module, entry in BENCHES.values():
        run = getattr(importlib.import_module(module), entry)
        assert list(inspect.signature(run).parameters)[:3] == ["args", "loaded", "zone"], (module, entry)


def test_the_served_configuration_keeps_the_default_model_as_an_empty_path(tmp_path: Path) -> None:
    from benchmarks.serve import _server_config

    config = tmp_path / "config.yaml"
    config.write_text(_server_config("", tmp_path / "data", "Asia/Shanghai", 1234, 5678), encoding="utf-8")
    loaded = load_config(config, env={})
    assert loaded.config.embedding.model_path == ""
    assert loaded.config.serve.port == 5678


def test_the_served_configuration_on_object_storage_reaches_the_bench_s3_server(tmp_path: Path) -> None:
    from benchmarks.counted_s3 import CountedS3, free_port
    from benchmarks.serve import _server_config
    from huichat.memory.objectstore import ObjectStore

    s3 = CountedS3.start(free_port())
    try:
        config = tmp_path / "config.yaml"
        config.write_text(_server_config("hash", tmp_path / "data", "UTC", 1234, 5678, s3), encoding="utf-8")
        loaded = load_config(config, env={})
        assert loaded.config.storage.uri == s3.uri and loaded.location.options == s3.options
        store = ObjectStore(loaded.config.storage.uri, loaded.config.storage.options)
        before = s3.counts()
        store.create("keys.json", b"{}")
        assert store.get("keys.json") is not None
        assert s3.counts() - before == {"PUT objects": 1, "GET objects": 1}  # every request counted once, by kind
    finally:
        s3.stop()
