"""The trading fake of ``benchmarks/model_path.py``: an OpenAI server in its own process.

``serve`` runs in a child process (``multiprocessing``, spawn). It starts the project's
``FakeOpenAIServer`` (``tests/fakes/openai_server.py``) with a brain that replays, one tool
call per reply with a short text, the calls a scripted roaster_A made in a scripted run of the
same seed, so that the model firm trades (buys green coffee, roasts, lists, sells) and its
context grows as in a real run. A compaction (summariser) request is answered with a factual
summary of a few hundred words instead; it is recognised by what the model is shown, not by
how the harness builds it: a request that offers no tools, whose system prompt is the
summariser's, or whose last user message asks for a summary.

``sink`` runs, in a child process of its own, the trivial loopback HTTP server (it reads a
request and answers ``{}``) against which the benchmark times its floor. The fake's child
writes, for every request the fake received, its raw body (``bodies.bin``: an 8-byte
little-endian length, then the bytes) and a line of ``requests.jsonl`` (compaction or not,
input and cached input tokens as the fake accounts them: cached is the longest prefix shared
with an earlier request). Nothing is kept in memory beyond what the fake's prefix accounting
needs.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: A last user message that asks for a summary ("Summarise this part of the agent's
#: history", "Write the summary now", "Please summarize ..."), as the compaction request
#: ends when it keeps the agent's tools.
_ASKS_FOR_SUMMARY = re.compile(
    r"\bsummari[sz]e\b|\b(?:write|give|produce|return)\b[^.]{0,40}\bsummary\b", re.IGNORECASE
)
_CALL_NAME = re.compile(r"CALLS (\w+)\(")


def _summary_texts() -> tuple[str, ...]:
    """The summariser's fixed texts from ``econbench.agents.compaction`` (whatever they are
    named today): its system prompt and any instruction string, minus the note header that
    heads an applied summary in the agent's own conversation."""
    from econbench.agents import compaction

    header = getattr(compaction, "SUMMARY_HEADER", "").split("{", 1)[0].strip()
    texts = []
    for name, value in vars(compaction).items():
        if name.isupper() and isinstance(value, str) and len(value) >= 12:
            if header and value.startswith(header):
                continue
            texts.append(value.split("{", 1)[0].strip())
    return tuple(t for t in texts if t)


def is_compaction(request: Any, texts: tuple[str, ...] = ()) -> bool:
    """Whether a ``BrainRequest`` asks for a summary of the history rather than a step."""
    if not request.tools:
        return True
    if any(t and t in request.system for t in texts):
        return True
    last = request.messages[-1] if request.messages else {}
    if last.get("role") != "user":
        return False
    content = str(last.get("content") or "")
    if content.lstrip().startswith("[Summary of earlier history"):
        return False  # an applied summary, not a request for one
    if any(t and t in content for t in texts):
        return True
    return bool(_ASKS_FOR_SUMMARY.search(content[:400] + content[-400:]))


def summary_text(request: Any) -> str:
    """A plausible factual summary (a few hundred words) of what the request shows."""
    seen: Counter[str] = Counter()
    for msg in request.messages:
        for call in msg.get("tool_calls") or []:
            seen[str(call.get("name"))] += 1
        seen.update(_CALL_NAME.findall(str(msg.get("content") or "")))
    calls = ", ".join(f"{name} x{n}" for name, n in seen.most_common()) or "none recorded"
    numbers = re.findall(r"\b\d+(?:\.\d+)?\b", json.dumps(request.messages[-3:]))[:40]
    lines = [
        "Factual record of the period summarised.",
        f"Tool calls made in this period: {calls}.",
        "Routine each day: viewed the trial balance, the open listings, the offers received "
        "and the payables; bought green coffee from the importer when the offer price was at "
        "or below the running average; roasted green coffee into roasted stock in batches "
        "sized to the expected demand; posted listings of roasted coffee at a markup over the "
        "unit cost; accepted offers from buyers whose price cleared the listing floor; paid "
        "invoices on or before their due day; waited for the next day when nothing was left.",
        "Open obligations at the end of the period: invoices not yet due are listed in the "
        "payables view and must be paid before their due day; listings still open remain on "
        "the market until sold or withdrawn; green coffee on hand is kept for the next roast.",
        "What worked: buying green coffee in moderate lots kept the cash balance positive; "
        "roasting soon after buying kept inventory fresh; listing at a steady markup sold most "
        "of the roasted stock within a few days. What failed: offers far below the floor were "
        "declined; a few listings expired unsold and were posted again at a lower price.",
        f"Figures seen most recently (prices, quantities, ids, days): {' '.join(numbers)}.",
        "Counterparties: the green-coffee importers, the cafés and the retailers that buy "
        "roasted coffee, and the other roasters competing on the same market; no agreement "
        "with another roaster was made, and no message promised anything not yet delivered.",
        "Cash, inventory and receivables are as the latest trial balance states; nothing "
        "outstanding is owed to the agent beyond the receivables listed there.",
    ]
    return "\n".join(lines)


def _sink(listener: socket.socket) -> None:
    """A trivial HTTP/1.1 keep-alive server: read one request, answer ``{}``, repeat."""
    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(1 << 20)
                    if not chunk:
                        break
                    buf += chunk
                if b"\r\n\r\n" not in buf:
                    break
                head, _, buf = buf.partition(b"\r\n\r\n")
                match = re.search(rb"(?i)content-length:\s*(\d+)", head)
                length = int(match.group(1)) if match else 0
                while len(buf) < length:
                    chunk = conn.recv(1 << 20)
                    if not chunk:
                        break
                    buf += chunk
                buf = buf[length:]
                conn.sendall(reply)


def sink(conn: Any) -> None:
    """The child process of the floor: a trivial HTTP server until the parent says stop."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    threading.Thread(target=_sink, args=(listener,), daemon=True).start()
    conn.send(listener.getsockname()[1])
    conn.recv()  # "stop"
    listener.close()


def serve(calls: list[dict[str, Any]], dump_dir: str, conn: Any) -> None:
    """The child process of a run: start the fake, send back its URL, and write what it
    receives until the parent says ``stop``; then send back the brain's counts."""
    sys.path.insert(0, str(ROOT))
    from tests.fakes.common import BrainReply, BrainRequest
    from tests.fakes.openai_server import FakeOpenAIServer

    texts = _summary_texts()
    queue = list(calls)
    counts = {"steps": 0, "summaries": 0, "past_the_script": 0}
    bodies = open(Path(dump_dir) / "bodies.bin", "wb")  # noqa: SIM115 (closed at the end)
    meta = open(Path(dump_dir) / "requests.jsonl", "w")  # noqa: SIM115

    def brain(request: BrainRequest) -> BrainReply:
        if is_compaction(request, texts):
            counts["summaries"] += 1
            return BrainReply(text=summary_text(request))
        counts["steps"] += 1
        if queue:
            call = queue.pop(0)
        else:  # the run asked for more steps than the scripted firm took: let a day pass
            counts["past_the_script"] += 1
            call = {"name": "wait_for_next_day", "arguments": {}}
        return BrainReply(
            text=f"Step {counts['steps']}: calling {call['name']}.", tool_calls=[call]
        )

    class RecordingServer(FakeOpenAIServer):
        """Writes each request out (and keeps none of it in memory) once it is answered."""

        def think(self, request: BrainRequest, fault: Any) -> tuple[BrainReply, dict[str, int]]:
            compaction = is_compaction(request, texts)
            reply, usage = super().think(request, fault)
            with self._lock:
                raw = self.raw_bodies[-1] if self.raw_bodies else b""
                self.raw_bodies.clear()
                self.requests.clear()
                self.headers.clear()
                self.brain_requests.clear()
                bodies.write(struct.pack("<Q", len(raw)) + raw)
                row = {"compaction": compaction, "input": usage["input"]}
                row["cached"] = usage["cached"]
                meta.write(json.dumps(row) + "\n")
            return reply, usage

    with RecordingServer(brain) as server:
        conn.send({"base_url": server.base_url})
        conn.recv()  # "stop"
    bodies.close()
    meta.close()
    conn.send({**counts, "left_in_script": len(queue)})
