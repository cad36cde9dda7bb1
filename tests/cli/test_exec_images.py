"""`exec -i FILE` (issue 24 item 7): images go with the prompt in each provider's own format,
judged by the official SDKs' request types; they survive a resume; every bad input is exit 2
before any request. Real CLI, real recording servers on 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import TypeAdapter
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SCRIPTS, SESSION, canonical_snapshot, vtcode
from tests.sdk_judge import judge_anthropic, judge_openai

ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def _png() -> bytes:
    """A real 1x1 PNG (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


PNG = _png()
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"


def _config(tmp: Path, server: SSEServer, kind: str, model: str = "m", extra: str = "") -> None:
    home = tmp / ".home"
    home.mkdir(exist_ok=True)
    base = server.url + ("/v1" if kind != "anthropic" else "")
    (home / "config.toml").write_text(
        f'[agent]\nprovider = "local"\n\n[providers.local]\nkind = "{kind}"\n'
        f'base_url = "{base}"\nmodel = "{model}"\n{extra}'
    )


def _images(tmp: Path) -> None:
    (tmp / "shot.png").write_bytes(PNG)
    (tmp / "photo.png").write_bytes(JPEG)  # named .png, a JPEG inside: typed by content


def _run(tmp: Path, *args: str) -> Any:
    return vtcode(
        ["exec", "-q", "--session-id", SESSION, "-i", "shot.png", "-i", "photo.png", *args],
        tmp,
        env=ENV,
    )


def test_openai_chat_sends_image_url_parts(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path, sse_server, "openai")
    _images(tmp_path)
    sse_server.queue(ScriptedReply.sse_file("llamacpp_openai_text.sse"))
    run = _run(tmp_path, "what is in these?")
    assert run.returncode == 0, run.stderr
    body = sse_server.requests[0].json()
    judge_openai(body)
    user = body["messages"][1]
    assert user["role"] == "user"
    assert user["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _b64(PNG)}},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + _b64(JPEG)}},
        {"type": "text", "text": "what is in these?"},
    ]


def test_responses_sends_input_image(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path, sse_server, "openai-responses")
    _images(tmp_path)
    sse_server.queue(ScriptedReply.sse_file("responses_text.sse"))
    run = _run(tmp_path, "what is in these?")
    assert run.returncode == 0, run.stderr
    body = sse_server.requests[0].json()
    TypeAdapter(ResponseCreateParamsStreaming).validate_python(body, strict=True)
    assert body["input"][0] == {
        "role": "user",
        "content": [
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{_b64(PNG)}",
                "detail": "auto",
            },
            {
                "type": "input_image",
                "image_url": f"data:image/jpeg;base64,{_b64(JPEG)}",
                "detail": "auto",
            },
            {"type": "input_text", "text": "what is in these?"},
        ],
    }


def test_anthropic_sends_base64_image_blocks(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path, sse_server, "anthropic", "claude-sonnet-4-5")
    _images(tmp_path)
    sse_server.queue(ScriptedReply.sse_file("anthropic_text.sse"))
    run = _run(tmp_path, "what is in these?")
    assert run.returncode == 0, run.stderr
    body = sse_server.requests[0].json()
    judge_anthropic(body)
    assert body["messages"][0] == {
        "role": "user",
        "content": [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": _b64(PNG)},
            },
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/jpeg", "data": _b64(JPEG)},
            },
            {"type": "text", "text": "what is in these?"},
        ],
    }


def test_images_survive_a_resume(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _config(tmp_path, sse_server, "openai")
    _images(tmp_path)
    sse_server.queue(*(ScriptedReply.sse_file("llamacpp_openai_text.sse") for _ in range(2)))
    first = _run(tmp_path, "what is in these?")
    assert first.returncode == 0, first.stderr
    session = tmp_path / ".vtcode" / "sessions" / SESSION
    kept = sorted(p.name for p in (session / "images").iterdir())
    assert kept == sorted(
        [f"{hashlib.sha256(PNG).hexdigest()}.png", f"{hashlib.sha256(JPEG).hexdigest()}.jpg"]
    )
    assert base64.b64encode(PNG).decode() not in (session / "transcript.jsonl").read_text()
    (tmp_path / "shot.png").unlink()  # the session's copy is what a resume sends
    (tmp_path / "gif.png").write_bytes(GIF)
    again = vtcode(
        ["exec", "-q", "resume", SESSION, "-i", "gif.png", "and now?"], tmp_path, env=ENV
    )
    assert again.returncode == 0, again.stderr
    body = sse_server.requests[1].json()
    judge_openai(body)
    parts = body["messages"][1]["content"]
    assert parts[0]["image_url"]["url"] == "data:image/png;base64," + _b64(PNG)
    assert body["messages"][-1] == {  # the resume's own prompt carries its own image
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": "data:image/gif;base64," + _b64(GIF)}},
            {"type": "text", "text": "and now?"},
        ],
    }
    check = vtcode(["validate", "--strict", str(session / "events.jsonl")], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    # the events of an image run are those of any run: upstream's ThreadEvent has no user
    # message item (only `interjected.image_count` for steering), so nothing new is logged
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_replay_script_must_say_its_model_takes_images(tmp_path: Path) -> None:
    _images(tmp_path)
    script = tmp_path / "s.toml"
    body = '[[turn]]\ntext = "A red dot."\nstop_reason = "end_turn"\n'
    script.write_text(body)
    refused = _run(tmp_path, "--script", str(script), "look")
    assert refused.returncode == 2, refused.stderr
    assert "-i: 2 image(s) attached, but the replay script's model takes no images" in (
        refused.stderr
    )
    assert "images = true" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / ".vtcode" / "sessions" / SESSION).exists()
    script.write_text("[provider]\nimages = true\n\n" + body)
    ok = _run(tmp_path, "--script", str(script), "look")
    assert ok.returncode == 0, ok.stderr


def _fifo(tmp: Path) -> str:
    os.mkfifo(tmp / "pipe.png")
    return "pipe.png"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t: "nope.png", "-i nope.png: no such file"),
        (
            lambda t: (t / "notes.png").write_text("hello") and "notes.png",
            "-i notes.png: not a PNG",
        ),
        (
            lambda t: (t / "big.png").write_bytes(PNG + b"\0" * (5 << 20)) and "big.png",
            "-i big.png: the image is larger than the limit of 5 MiB",
        ),
        (_fifo, "-i pipe.png: cannot read the image: not a regular file"),
        (lambda t: (t / "dir.png").mkdir() or "dir.png", "--image': File 'dir.png' is a directory"),
    ],
)
def test_bad_image_files_are_exit_2_before_any_request(
    tmp_path: Path, sse_server: SSEServer, make: Any, message: str
) -> None:
    _config(tmp_path, sse_server, "openai")
    name = make(tmp_path)
    run = vtcode(["exec", "-q", "--session-id", SESSION, "-i", name, "hi"], tmp_path, env=ENV)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and "Traceback" not in run.stderr
    assert not sse_server.requests
    assert not (tmp_path / ".vtcode" / "sessions" / SESSION).exists()


def test_text_only_model_and_missing_prompt_are_exit_2(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "openai", "gpt-3.5-turbo")
    _images(tmp_path)
    run = _run(tmp_path, "hi")
    assert run.returncode == 2
    assert "openai model 'gpt-3.5-turbo' does not accept images" in run.stderr
    _config(tmp_path, sse_server, "openai", "qwen2.5-coder", "images = false\n")
    local = _run(tmp_path, "hi")
    assert local.returncode == 2
    assert "-i: 2 image(s) attached, but providers.local.images = false" in local.stderr
    too_many = vtcode(["exec", "-q", *["-i", "shot.png"] * 21, "hi"], tmp_path, env=ENV)
    assert too_many.returncode == 2 and "at most 20" in too_many.stderr
    streamed = vtcode(
        ["exec", "-q", "--input-format", "stream-json", "-i", "shot.png"],
        tmp_path,
        env=ENV,
        input='{"type":"user","text":"hi"}\n',
    )
    assert streamed.returncode == 2 and "-i: images go with the prompt" in streamed.stderr
    assert not sse_server.requests


def test_images_true_overrides_the_table(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path, sse_server, "openai", "gpt-3.5-turbo", "images = true\n")
    _images(tmp_path)
    sse_server.queue(ScriptedReply.sse_file("llamacpp_openai_text.sse"))
    run = _run(tmp_path, "hi")
    assert run.returncode == 0, run.stderr
    assert len(sse_server.requests[0].json()["messages"][1]["content"]) == 3


def test_shipped_scripts_folder_is_untouched() -> None:
    """No shipped replay script claims images: a run with -i on one stays exit 2."""
    assert not any("images = true" in p.read_text() for p in SCRIPTS.glob("*.toml"))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
