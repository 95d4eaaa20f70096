"""The OpenAI providers' requests as the SDK's ``create()`` would send them, made for less.

Why this path exists: per model request, ``create()`` encodes the whole conversation again
(``json.dumps`` of ~300 kB at the default 200k window, ~3.7 ms), walks the parameters through
its typed transform (~0.8 ms) and reads the reply into typed models before the provider turns
them back into plain data (~2.5 ms). That was most of the harness CPU per model request that
``benchmarks/model_path.py`` measures (issue 27: at most 3 ms, and at most twice the floor of
encoding the request once and posting it). Here:

- the body is assembled as bytes. JSON encoding is compositional: the conversation array is
  ``[`` + its messages' encodings joined by ``,`` + ``]``, and a message whose wire form does
  not depend on its place is encoded once and kept with it (``ChatMessage.memo``, under a key
  naming the settings its wire form depends on). Everything else in the body is what
  ``create()`` itself builds from the same arguments (:func:`sdk_request`, kept per setting),
  merged and encoded with the SDK's own encoder, so every byte sent is the byte ``create()``
  sends (``tests/agents/test_openai_fast_path.py`` compares them);
- the body is posted through the same client (``post``: the same headers, timeout, auth and
  error mapping) and the reply read as plain JSON (:func:`reply_data`), which is exactly what
  the typed models gave back as ``to_dict(mode="json")``: where the two could differ (numbers
  JSON cannot carry, nesting deeper than the models serialise, a reply that is not an object)
  the SDK's own models read it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import openai
from openai._utils._json import openapi_dumps

from econbench.agents.models.base import ChatMessage

_PLAIN_DEPTH = 64
"""Replies nested deeper than this are read by the SDK's models (which refuse to serialise
nesting past about 250 levels); real replies nest about six deep."""


class WireItems:
    """The wire items of the messages folded so far (Chat Completions: one per message;
    Responses: a message's input items), flat, and their JSON joined by ``,``.

    A message whose items do not depend on its place is passed with them, and the bytes of
    those items are kept with the message (``ChatMessage.memo`` under ``key``, which must name
    every setting besides the message that they depend on). Bytes are made when first asked
    for, so a request that goes through ``create()`` encodes nothing here.
    """

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.items: list[dict[str, Any]] = []
        self._joined = b""
        self._unjoined: list[tuple[Sequence[dict[str, Any]], ChatMessage | None]] = []

    def extend(self, items: Sequence[dict[str, Any]], message: ChatMessage | None) -> None:
        """Append ``items``; ``message`` when they do not depend on its place, else None."""
        if items:
            self.items.extend(items)
            self._unjoined.append((items, message))

    def copy(self) -> WireItems:
        twin = WireItems(self.key)
        twin.items = list(self.items)
        twin._joined = self._joined
        twin._unjoined = list(self._unjoined)
        return twin

    def joined(self) -> bytes:
        """``openapi_dumps(self.items)`` without its brackets."""
        if self._unjoined:
            parts = [self._joined] if self._joined else []
            for items, message in self._unjoined:
                if message is None:
                    parts.append(_joined(items))
                else:
                    parts.append(message.memo(self.key, lambda _m, items=items: _joined(items)))
            self._joined = b",".join(parts)  # the same value, only made: kept states stay valid
            self._unjoined = []
        return self._joined


@dataclass(frozen=True)
class Conversation:
    """The conversation of a request: the body field it travels in, the very list the
    request's keyword arguments hold there, and its items as folded (``wire``)."""

    field: str
    value: list[dict[str, Any]]
    wire: WireItems
    """The fold's items: they only ever grow, so while they are as many as ``value``'s,
    they are ``value``'s."""

    def encoded(self) -> bytes:
        """``openapi_dumps(self.value)``, from each settled message's kept bytes (encoded
        whole should the fold have gone on meanwhile)."""
        if len(self.wire.items) != len(self.value):
            return openapi_dumps(self.value)
        return b"[" + self.wire.joined() + b"]"


def _joined(items: Sequence[dict[str, Any]]) -> bytes:
    return b",".join(openapi_dumps(item) for item in items)


def encoded_body(
    body: Mapping[Any, Any],
    conversation: Conversation | None,
    kept: dict[str, tuple[Any, bytes]] | None = None,
) -> bytes:
    """``openapi_dumps(body)`` (what the SDK sends), the conversation spliced in from its
    messages' kept bytes when ``body`` holds it unchanged (``extra_body`` did not replace it).

    ``kept`` keeps the last encoding of each text field (the instructions: ~20 kB sent again
    with each call), reused while the text is the same, and of the tools, reused while they
    are the very same list (the providers keep it while the same tools are offered).
    Whatever does not encode (a lone surrogate, NaN) is encoded again as the SDK does, so it
    fails with the SDK's very error."""
    try:
        parts: list[bytes] = []
        for key, value in body.items():
            if (
                conversation is not None
                and key == conversation.field
                and (value is conversation.value)
            ):
                parts.append(openapi_dumps(key) + b":" + conversation.encoded())
                continue
            keeps = kept is not None and (
                type(value) is str or (type(value) is list and key == "tools")
            )
            last = kept.get(key) if keeps else None  # type: ignore[union-attr]
            if last is not None and (last[0] is value if type(value) is list else last[0] == value):
                parts.append(last[1])
                continue
            pair = openapi_dumps({key: value})[1:-1]
            if keeps:
                kept[key] = (value, pair)  # type: ignore[index]
            parts.append(pair)
        return b"{" + b",".join(parts) + b"}"
    except Exception:  # raise what the SDK raises for this body
        return openapi_dumps(body)


@dataclass(frozen=True)
class SdkRequest:
    """What a resource's ``create()`` hands to the client's ``post``: the path, the body it
    built (typed transform applied, unset parameters dropped) and the request options."""

    path: str
    body: Mapping[str, Any]
    options: Mapping[str, Any]
    cast_to: Any


async def sdk_request(resource: Any, kwargs: Mapping[str, Any]) -> SdkRequest:
    """Run ``resource.create(**kwargs)`` on a copy of the resource whose ``post`` only notes
    what it was given: the SDK's own body and options, without sending anything."""
    seen: dict[str, Any] = {}

    async def note(path: str, *, cast_to: Any, body: Any = None, options: Any = None, **rest: Any):
        if rest.get("stream"):
            raise ValueError("streaming requests are not assembled here")
        seen.update(path=path, body=body, options=dict(options or {}), cast_to=cast_to)

    probe = type(resource)(resource._client)
    probe._post = note
    await probe.create(**kwargs)
    return SdkRequest(seen["path"], seen["body"] or {}, seen["options"], seen["cast_to"])


def merged(body: Mapping[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """The SDK's merge of ``extra_body`` into the body (``_merge_mappings``): the extra values
    win, new keys go last, ``omit`` values are dropped."""
    if not extra:
        return dict(body)
    return {k: v for k, v in {**body, **extra}.items() if not isinstance(v, openai.Omit)}


def settings_key(value: Any, depth: int = 0) -> Hashable:
    """A key naming plain settings exactly (types included: ``1``, ``1.0`` and ``True``
    differ), or ``None`` for anything else (not kept)."""
    if value is None or type(value) in (str, bool, int, float):
        return (type(value), value)
    if depth > 8:
        return None
    if type(value) is dict:
        items = []
        for k, v in value.items():
            key = settings_key(v, depth + 1)
            if type(k) is not str or key is None:
                return None
            items.append((k, key))
        return (dict, tuple(items))
    if type(value) in (list, tuple):
        keys = tuple(settings_key(v, depth + 1) for v in value)
        return None if None in keys else (type(value), keys)
    return None


def reply_data(client: Any, response: Any, cast_to: Any) -> Any:
    """The reply as the SDK's ``create()`` and ``to_dict(mode="json", warnings=False)`` give
    it back: JSON of any content type, else the reply's text; plain JSON where that is what
    the typed models give back, and what they give back everywhere else."""
    content_type = response.headers.get("content-type", "*").split(";")[0]
    unusual: list[str] = []
    try:  # ``response.json()``, noting numbers JSON cannot carry
        data = json.loads(
            response.content,
            parse_constant=lambda name: unusual.append(name) or float(name),
            parse_float=lambda text: _noted_float(text, unusual),
        )
    except Exception:  # as the SDK: a JSON reply must parse, others are text
        if content_type.endswith("json"):
            raise
        return response.text
    if isinstance(data, dict) and not unusual and _shallow(data):
        return data
    model = client._process_response_data(data=data, cast_to=cast_to, response=response)
    return model.to_dict(mode="json", warnings=False) if hasattr(model, "to_dict") else model


def _noted_float(text: str, unusual: list[str]) -> float:
    value = float(text)
    if not math.isfinite(value):
        unusual.append(text)
    return value


def _shallow(data: dict[str, Any]) -> bool:
    """Whether ``data`` nests at most ``_PLAIN_DEPTH`` deep (a walk of its containers: a
    reply's are few, where counting its brackets first read every byte again)."""
    return _nests_within(data, _PLAIN_DEPTH)


def _nests_within(value: dict[str, Any] | list[Any], levels: int) -> bool:
    """Whether no container lies ``levels`` or more below ``value`` (depth-first, so an
    ordinary reply, a few levels deep, is checked in one short walk)."""
    if levels == 0:
        return False
    for item in value.values() if type(value) is dict else value:
        if type(item) in (dict, list) and not _nests_within(item, levels - 1):
            return False
    return True


def eligible(client: Any) -> bool:
    """Whether ``client`` is the SDK's plain ``AsyncOpenAI`` reading replies leniently (the
    one this module reproduces); any other client (a subclass such as Azure's, which routes on
    the body, a test double, strict validation) goes through ``create()``."""
    return type(client) is openai.AsyncOpenAI and not getattr(
        client, "_strict_response_validation", True
    )
