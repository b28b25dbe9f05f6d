"""``huichat forget --purge``: the turn's text is gone from every file under the data folder, its place stays."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import zipfile
from pathlib import Path

import zstandard

from huichat.app.config import load_config
from huichat.app.prompt_history import FILE_NAME, PromptHistory
from huichat.app.wiring import runtime
from huichat.memory.imports.sidecar import append_records, record, sidecar_of
from huichat.memory.transcript import TurnChunker
from tests.app.test_cli import _huichat, store

__all__ = ["store"]

MARKER = "QX7-purge-marker-独一无二"


def _contents(name: str, data: bytes) -> list[bytes]:
    """A file's bytes, and those of what it holds when it is compressed or an archive."""
    found = [data]
    try:
        if name.endswith((".zst", ".tar.zst")):
            found += _contents(name.removesuffix(".zst"), zstandard.ZstdDecompressor().decompressobj().decompress(data))
        elif name.endswith(".gz"):
            found += _contents(name.removesuffix(".gz"), gzip.decompress(data))
        elif name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                found += [b for info in archive.infolist() for b in _contents(info.filename, archive.read(info))]
        elif name.endswith(".tar"):
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                for member in archive.getmembers():
                    handle = archive.extractfile(member)
                    if handle is not None:
                        found += _contents(member.name, handle.read())
    except (OSError, ValueError, zstandard.ZstdError, zipfile.BadZipFile, tarfile.TarError):
        pass
    return found


def _holding(root: Path, text: str) -> list[str]:
    """Every file under ``root`` that holds ``text`` in any encoding a file here uses."""
    forms = {text.encode(), json.dumps(text)[1:-1].encode(), text.lower().encode()}
    return [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*"))
        if path.is_file() and any(form in blob for blob in _contents(path.name, path.read_bytes()) for form in forms)
    ]


def test_purge_leaves_no_copy_of_the_text_anywhere_under_the_data_folder(
    store: tuple[Path, list[str]], tmp_path: Path
) -> None:
    config, _ = store
    data = tmp_path / "data"
    kernel = runtime(load_config(config)).open_kernel()
    session = kernel.resume_session(kernel.sessions()[0].session_id)
    from huichat.memory.turns import Message, SessionTitle, TurnDraft
    from tests.conftest import NOW

    secret = kernel.append_turn(
        session,
        TurnDraft((Message("user", f"记住我的口令 {MARKER}"), Message("assistant", f"好的，{MARKER} 已记下")), NOW),
    )
    after = kernel.append_turn(session, TurnDraft((Message("user", "下一句话"), Message("assistant", "好")), NOW))
    kernel.correct(secret.id, f"更正：口令是 {MARKER}-2", NOW)
    # a title made locally from the message's first clause: every turn's topic (话题) holds it
    kernel.set_title(secret.session_file, SessionTitle(f"记住我的口令 {MARKER}", "local", 2))
    kernel.close()
    transcript = data / "sessions" / secret.session_file
    # what else a user's data folder holds: the prompt, an import record, an export, a torn write
    PromptHistory(data / FILE_NAME).add(f"记住我的口令 {MARKER}")
    PromptHistory(data / FILE_NAME).add("一个别的问题")
    # a regenerated reply kept beside the turn's answer, in its source record
    alternative = record("alternative", id="m9", after=f"{secret.id}.0", text=f"{MARKER} 的另一版回答")
    append_records(sidecar_of(transcript), [alternative])
    assert _huichat(config, "export", "--format", "jsonl", "--out", str(data / "exports" / "all.jsonl")).returncode == 0
    torn = (
        f"\n## cut\n\n[id:{secret.id} | prev: x | next: none  ]\n<!-- huichat:turn {{}} -->\n记住我的口令 {MARKER[:8]}"
    )
    transcript.with_name(transcript.name + ".torn-20261124T000000Z").write_text(torn, encoding="utf-8")
    # the index holds it in several versions (written, re-indexed with its correction)
    assert _holding(data, MARKER)
    assert any(".lancedb" in name for name in _holding(data, MARKER))

    purged = _huichat(config, "forget", "--purge", f"id:{secret.id}")
    assert purged.returncode == 0, purged.stderr
    assert purged.stdout.startswith(f"purged turn {secret.id}: its text is gone from its transcript and the index")
    assert purged.stderr == ""

    assert _holding(data, MARKER) == []
    # the transcript keeps the turn's place: the chain and the other turns' ids are as they were
    parsed = TurnChunker.read_file(TurnChunker(), transcript)
    assert not parsed.problems and secret.id in parsed.forgotten
    assert [t.id for t in parsed.turns][-1] == after.id and parsed.turns[-1].prev_id == secret.id
    assert PromptHistory(data / FILE_NAME).entries == ["一个别的问题"]
    assert _huichat(config, "show", secret.id).returncode == 1
    assert "话题: (purged)" in _huichat(config, "show", after.id).stdout
    assert "下一句话" in _huichat(config, "recall", "下一句话").stdout  # the index still works, rebuilt
    undo = _huichat(config, "forget", "--undo", secret.id)
    assert undo.returncode == 1 and f"turn {secret.id} was purged: its text is gone for good" in undo.stderr
    again = _huichat(config, "forget", "--purge", secret.id)
    assert again.stdout.strip() == f"turn {secret.id} was purged already"
    reindexed = _huichat(config, "reindex")
    assert reindexed.returncode == 0 and _holding(data, MARKER) == []
