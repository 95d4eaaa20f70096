"""The provider plumbing every HTTP provider shares: Retry-After, redaction, overflow, stops."""

from __future__ import annotations

import email.utils
import time

import httpx2
import pytest

from econbench.agents.models._http import (
    REDACTED,
    is_context_overflow,
    redact,
    retry_after_seconds,
    retry_info_seconds,
)
from econbench.agents.models.base import ModelOutput
from econbench.agents.models.record import output_from_dict, output_to_dict
from econbench.agents.models.stop import RAW_STOP_REASONS, STOP_REASONS, normalised_stop
from econbench.agents.tools import ToolCall

KEY = "sk-proj-SECRET0123456789abcdWXYZ"


# --------------------------------------------------------------------------- retry-after
def test_retry_after_seconds_milliseconds_and_dates() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "0.5"}) == 0.5
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    # Milliseconds win when both are sent; an unreadable one falls back to the other.
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after-ms": "soon", "retry-after": "9"}) == 9.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    future = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 100 < (retry_after_seconds({"retry-after": future}) or 0) <= 120
    assert retry_after_seconds({"retry-after": "-3"}) == 0.0


@pytest.mark.parametrize("value", ["soon", "inf", "nan", "", "Someday, 99 Foo 20xx"])
def test_retry_after_that_is_not_a_wait_is_ignored(value: str) -> None:
    assert retry_after_seconds({"retry-after": value}) is None


def test_retry_after_reads_real_headers_case_insensitively() -> None:
    assert retry_after_seconds(httpx2.Headers({"Retry-After": "7"})) == 7.0
    assert retry_after_seconds(httpx2.Headers({"Retry-After-Ms": "20"})) == 0.02
    assert retry_after_seconds(None) is None and retry_after_seconds({}) is None


def test_retry_info_from_a_gemini_error_body() -> None:
    info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}
    other = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT"}
    assert retry_info_seconds({"error": {"details": [other, info]}}) == 12.0
    assert retry_info_seconds({"details": [info]}) == 12.0
    assert retry_info_seconds([{**info, "retryDelay": "1.500s"}]) == 1.5
    for delay in ("1.2.3s", "12", "-1s", "soon"):  # once a crash on "1.2.3s"
        assert retry_info_seconds([{**info, "retryDelay": delay}]) is None
    assert retry_info_seconds(None) is None and retry_info_seconds({"error": "x"}) is None


# --------------------------------------------------------------------------- redaction
@pytest.mark.parametrize(
    "echo",
    [
        KEY,
        f"{KEY[:8]}**********{KEY[-4:]}",
        f"sk-…{KEY[-4:]}",
        f"sk-...{KEY[-4:]}",
        f"{KEY[:5]}•••• {KEY[-4:]}",
        f"****{KEY[-4:]}",
    ],
)
def test_a_key_leaves_no_trace_whole_or_masked(echo: str) -> None:
    text = redact(f"Incorrect API key provided: {echo}. See the dashboard.", [KEY])
    assert KEY[-4:] not in text and KEY[8:20] not in text and KEY not in text
    assert text.startswith("Incorrect API key provided: ") and REDACTED in text


def test_keylike_strings_go_even_when_the_key_is_unknown() -> None:
    google = "AIzaSyA1234567890abcdefghijklmnopqrstu"
    text = redact(f"bad keys sk-ant-api03-abcdef123456 and {google}; keep sk-1 and key-value")
    assert "abcdef123456" not in text and google not in text
    assert "sk-1" in text and "key-value" in text


def test_redaction_leaves_other_text_alone_and_ignores_short_or_missing_keys() -> None:
    plain = "HTTP 500 api_error: upstream overloaded"
    assert redact(plain, [None, "", "abc", KEY]) == plain
    assert redact("code 1234 of abcd", ["abcd"]) == f"code 1234 of {REDACTED}"


# --------------------------------------------------------------------------- overflow
@pytest.mark.parametrize(
    ("status", "message", "code"),
    [
        (400, "This model's maximum context length is 128000 tokens.", "context_length_exceeded"),
        (None, "context_length_exceeded", "context_length_exceeded"),  # inside a 200 body
        (400, "the request exceeds the available context size", "exceed_context_size_error"),
        (400, "prompt is too long: 215321 tokens > 200000 maximum", None),
        (413, "Request exceeds the maximum size", None),
        (400, "The input token count (1048577) exceeds the maximum number of tokens", None),
        (422, "input is too long for the model's context window", None),
        (500, "whatever", "context_length_exceeded"),  # the code decides alone
    ],
)
def test_overflows_of_every_provider_are_recognised(
    status: int | None, message: str, code: str | None
) -> None:
    assert is_context_overflow(status, message, code)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "Unsupported parameter: 'temperature'"),
        (429, "prompt is too long"),  # a rate limit, whatever it says
        (500, "maximum context length"),
        (401, "invalid x-api-key"),
    ],
)
def test_other_errors_are_not_overflows(status: int, message: str) -> None:
    assert not is_context_overflow(status, message)


# --------------------------------------------------------------------------- stop reasons
def test_every_raw_word_maps_into_the_closed_vocabulary_without_ambiguity() -> None:
    seen: dict[str, str] = {}
    for table in RAW_STOP_REASONS.values():
        for raw, stop in table.items():
            assert stop in STOP_REASONS
            assert seen.setdefault(raw, stop) == stop


@pytest.mark.parametrize(
    ("raw", "calls", "stop"),
    [
        ("stop", False, "end"),
        ("end_turn", False, "end"),
        ("stop", True, "tool_calls"),  # Gemini's finish reason for a function call
        ("tool_use", True, "tool_calls"),
        ("tool_calls", True, "tool_calls"),
        ("length", False, "length"),
        ("max_tokens", True, "length"),  # cut off mid-call: still a truncation
        ("MAX_TOKENS", False, "length"),
        ("content_filter", False, "content_filter"),
        ("refusal", False, "content_filter"),
        ("safety", False, "content_filter"),
        ("repetition", False, "other"),
        ("incomplete", False, "other"),
        (None, False, "end"),
        (None, True, "tool_calls"),
    ],
)
def test_normalised_stop(raw: str | None, calls: bool, stop: str) -> None:
    assert normalised_stop(raw, calls) == stop


def test_model_output_stop_is_derived_and_never_a_stored_field() -> None:
    out = ModelOutput(model="m", tool_calls=[ToolCall("buy", {})], stop_reason="stop")
    assert out.stop == "tool_calls" and out.stop_reason == "stop"
    assert "stop" not in ModelOutput.__dataclass_fields__
    assert list(output_to_dict(out)) == [  # what recordings, caches and replays store
        "model",
        "text",
        "tool_calls",
        "reasoning",
        "usage",
        "cost_usd",
        "stop_reason",
        "provider_data",
    ]
    assert output_from_dict(output_to_dict(out)).stop == "tool_calls"  # replays get it back
