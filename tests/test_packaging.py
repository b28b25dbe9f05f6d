"""What ``pip install huichat`` puts on a machine: one import name, data read as package data, no benchmarks."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this checkout, installed (without its dependencies) into an empty folder."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = out.glob("huichat-*.whl")
    target = out / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return wheel


def test_the_wheel_installs_one_import_name_with_its_styles_configs_and_dashboard(installed: Path) -> None:
    names = zipfile.ZipFile(installed).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"huichat", next(t for t in tops if t.endswith(".dist-info"))}
    assert not any("benchmarks" in name or name.startswith("tests/") for name in names)
    for data in ("huichat/styles/chat.tcss", "huichat/configs/default.yaml", "huichat/app/serve/static/dashboard.html"):
        assert data in names
    assert "huichat/memory/kernel.py" in names and "huichat/__main__.py" in names
    top_level = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    entry = zipfile.ZipFile(installed).read(top_level).decode()
    assert "huichat = huichat.app.wiring:main" in entry


def test_the_installed_package_runs_from_outside_the_repository(installed: Path, tmp_path: Path) -> None:
    site = installed.parent / "site"
    config = tmp_path / "config.yaml"
    config.write_text(f"storage:\n  data_dir: {tmp_path / 'data'}\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(site), "HUICHAT_CONFIG": str(config)}
    where = subprocess.run(
        [sys.executable, "-c", "import huichat.app.tui.app as a, huichat; print(huichat.__file__); print(a.STYLES)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    package, styles = where.stdout.split()
    assert Path(package).is_relative_to(site) and (Path(styles) / "chat.tcss").is_file()
    assert Path(styles).is_relative_to(site)
    version = subprocess.run(
        [sys.executable, "-m", "huichat", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert version.returncode == 0 and version.stdout.startswith("huichat ")
    script = subprocess.run(
        [sys.executable, str(site / "bin" / "huichat"), "sessions"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert script.returncode == 0 and "no sessions yet" in script.stdout, script.stderr
