"""``huichat bench KIND``: every kind the parser offers runs an entry point that exists."""

from __future__ import annotations

import argparse
import importlib
import inspect

from benchmarks.cli import BENCHES, add_parser


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
