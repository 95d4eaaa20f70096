"""Checkpoint files are written piece by piece and byte for byte as ``text.encode()``."""

from __future__ import annotations

import hashlib
import json

import pytest

from econbench.runs import checkpoint as checkpoint_module
from econbench.runs.checkpoint import read_checkpoint, write_atomic, write_checkpoint

PIECE = checkpoint_module._PIECE
TEXTS = [
    "",
    "x",
    "a" * (PIECE - 1) + "é☕",  # a two- and a three-byte character across the first edge
    "☕" * (PIECE + 5),
    "𝄞" * (2 * PIECE + 1),  # four bytes each (one code point, not a surrogate pair)
    ("line\n" * PIECE) + "end",
]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_a_text_is_written_as_it_encodes(tmp_path, text: str) -> None:
    path = tmp_path / "f.json"
    path.write_text("old", encoding="utf-8")
    write_atomic(path, text)
    assert path.read_bytes() == text.encode("utf-8")
    assert b"".join(checkpoint_module._utf8_pieces(text)) == text.encode("utf-8")
    write_atomic(path, text, durable=True)
    assert path.read_bytes() == text.encode("utf-8")


def test_a_text_that_cannot_be_encoded_fails_and_keeps_the_old_file(tmp_path) -> None:
    path = tmp_path / "f.json"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "a" * (PIECE + 3) + "\ud83d")
    assert path.read_text(encoding="utf-8") == "old"


@pytest.mark.parametrize("text", TEXTS[1:4], ids=range(3))
def test_the_state_is_hashed_and_sized_as_its_bytes(tmp_path, text: str) -> None:
    state = json.dumps({"s": text}, ensure_ascii=False)
    write_checkpoint(tmp_path, {"benchmark": "coffee", "day": 1}, state, durable=False)
    raw = (tmp_path / "checkpoint.json").read_bytes()
    head = json.loads(raw)
    assert head["state_bytes"] == len(state.encode("utf-8"))
    assert head["state_sha256"] == hashlib.sha256(state.encode("utf-8")).hexdigest()
    assert raw.endswith(b',"state":' + state.encode("utf-8") + b"}")
    assert read_checkpoint(tmp_path, "coffee")["state"] == {"s": text}
