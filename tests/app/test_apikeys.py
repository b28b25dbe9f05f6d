"""API keys: hashed at rest with argon2, shown once, revocable from another process."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pytest
from argon2 import PasswordHasher

from huichat.app.users.keys import KEYS_FILE, KeyRing, KeyRingError
from huichat.app.users.memories import UnknownUser

NOW = datetime(2026, 11, 25, 7, 0, tzinfo=UTC)


def test_a_key_is_stored_hashed_and_verifies(tmp_path: Path) -> None:
    ring = KeyRing(tmp_path)
    key, token = ring.create("alice", NOW)
    stored = (tmp_path / KEYS_FILE).read_text(encoding="utf-8")
    secret = token.split("_", 2)[2]
    assert secret not in stored and token not in stored
    assert key.hash.startswith("$argon2id$")
    assert stat.S_IMODE((tmp_path / KEYS_FILE).stat().st_mode) == 0o600
    assert ring.verify(token) == key
    assert ring.verify(token) == key  # remembered: argon2 is paid once
    assert ring.verify(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert ring.verify("hc_00000000_" + secret) is None
    assert ring.verify("Bearer nonsense") is None


class _Counting(PasswordHasher):
    """argon2's hasher (the vendor seam) with the secrets it verified listed."""

    checked: list[str]

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.checked.append(str(password))
        return super().verify(hash, password)


def test_a_wrong_secret_costs_argon2_once_and_never_shadows_the_right_one(tmp_path: Path) -> None:
    ring = KeyRing(tmp_path)
    key, token = ring.create("carol", NOW)
    ring._hasher = hasher = _Counting()
    checked = hasher.checked = []
    wrong, other = f"hc_{key.id}_{'w' * 43}", f"hc_{key.id}_{'v' * 43}"
    assert [ring.verify(wrong) for _ in range(5)] == [None] * 5
    assert ring.verify(other) is None and ring.verify(other) is None
    assert checked == ["w" * 43, "v" * 43]  # each wrong secret once: a resending flood costs nothing more
    assert ring.verify(token) == key  # the right secret is never refused for others' failures
    stored = (tmp_path / KEYS_FILE).read_text(encoding="utf-8")
    assert "w" * 43 not in stored and "v" * 43 not in stored
    ring.create("dave", NOW)  # the file changed, carol's key did not: still remembered
    assert ring.verify(wrong) is None and len(checked) == 3


def test_revoking_in_another_process_takes_effect_at_once(tmp_path: Path) -> None:
    server, cli = KeyRing(tmp_path), KeyRing(tmp_path)
    key, token = cli.create("bob", NOW)
    assert server.verify(token) == key and server.any_active()
    revoked = cli.revoke(key.id, NOW)
    assert revoked.revoked is not None
    assert server.verify(token) is None
    assert not server.any_active()
    assert [k.id for k in server.entries()] == [key.id]  # kept, marked revoked


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    ring = KeyRing(tmp_path)
    with pytest.raises(UnknownUser, match="not a user name"):
        ring.create("../etc", NOW)
    with pytest.raises(KeyRingError, match="no key with id"):
        ring.revoke("deadbeef", NOW)
    (tmp_path / KEYS_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(KeyRingError, match="cannot read the API key file"):
        ring.entries()


def test_the_keys_command_creates_lists_and_revokes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from huichat.app.wiring import main

    config = tmp_path / "config.yaml"
    config.write_text(f"storage:\n  data_dir: {tmp_path / 'data'}\n", encoding="utf-8")
    assert main(["--config", str(config), "keys", "create", "--user", "carol"]) == 0
    token = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("hc_"))
    key_id = token.split("_")[1]
    assert main(["--config", str(config), "keys", "list"]) == 0
    assert f"{key_id}  carol" in capsys.readouterr().out
    assert main(["--config", str(config), "keys", "revoke", key_id]) == 0
    assert main(["--config", str(config), "keys", "list"]) == 0
    listed = capsys.readouterr().out
    assert "revoked" in listed and token not in listed
    revoked_at = listed.split("  revoked ", 1)[1].split()[0]
    # revoked again: said so, with when (it said "revoked key … of user 'carol'" a second time)
    assert main(["--config", str(config), "keys", "revoke", key_id]) == 0
    assert capsys.readouterr().out == f"key {key_id} of user 'carol' was already revoked ({revoked_at})\n"
    assert main(["--config", str(config), "keys", "create", "--user", "Bad Name"]) == 1
    assert "not a user name" in capsys.readouterr().err
