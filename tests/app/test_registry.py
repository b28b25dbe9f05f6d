"""One command registry: every command is a module with HELP, add_parser and run; plugins add more."""

from __future__ import annotations

import argparse
import importlib
import inspect

import pytest

from huichat.app import wiring


@pytest.mark.parametrize("name", sorted(wiring.COMMANDS))
def test_every_command_module_has_its_help_parser_and_run(name: str) -> None:
    module = importlib.import_module(wiring.COMMANDS[name])
    assert isinstance(module.HELP, str) and module.HELP
    parser = argparse.ArgumentParser(prog=f"huichat {name}")
    module.add_parser(parser)
    assert list(inspect.signature(module.run).parameters) == ["args", "runtime"]


def test_naming_a_command_loads_only_its_module() -> None:
    args, command = wiring._parse(["show", "a3f2c7"])
    assert args.command == "show" and args.turn_id == "a3f2c7"
    assert command is importlib.import_module("huichat.app.cli.show")


def test_the_full_help_lists_every_command_and_the_installed_plugins(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        wiring._parse(["--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    for name in [*wiring.COMMANDS, "bench"]:  # bench: the development install's plugin
        assert f"    {name} " in shown or f"    {name}\n" in shown, name


def test_a_plugin_command_is_found_through_its_entry_point() -> None:
    args, command = wiring._parse(["bench", "startup", "--runs", "1"])
    assert args.command == "bench" and args.bench == "startup" and command is not None
    assert command is importlib.import_module("benchmarks.cli")


def test_bench_without_the_benchmarks_installed_says_how_to_get_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(wiring, "_plugins", dict)
    with pytest.raises(SystemExit) as done:
        wiring._parse(["bench", "recall", "--data", "x"])
    assert done.value.code == wiring.EXIT_CONFIG
    said = capsys.readouterr().err
    assert said.startswith("huichat bench: the benchmarks are not installed") and "make setup" in said


def test_an_unknown_command_is_explained_by_the_full_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        wiring._parse(["recal", "x"])
    assert done.value.code == 2
    assert "invalid choice: 'recal'" in capsys.readouterr().err
