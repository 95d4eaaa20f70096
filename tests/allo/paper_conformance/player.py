"""The scripted player: the decision rules that produced the fixture's replies.

It sees only what a model sees (the request body) plus the episode's hidden class sequence
(``generate_stream(seed, StreamConfig()).classes``: the paper's generator, draw for draw) and
answers deterministically. The rules in words are in
``tests/allo/data/paper_requests/README.md`` ("The scripted player"); the solver code and the
constants are also in that folder's ``manifest.json`` (``scripted_player``), which
``tests/allo/test_paper_conformance.py`` checks against this module.

Notation: task n is the number printed in the last task the request shows ("Draw n of 60",
"Problem n of 60", "PROBLEM n of 60"); c(n) its class; s(n) how many of tasks 1..n have class
c(n); d the rank of n among the task numbers asked so far in the episode; k the attempt (1 +
the earlier requests whose task was n). A player commits iff s(n) >= 2.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

FAMILIES = (
    "lcg",
    "modpow",
    "continued_frac",
    "crt_solve",
    "josephus",
    "quadratic_map_mod",
    "xorshift_steps",
    "matrix_power_mod",
)
"""The paper's family order (``UNIFORM``): class c belongs to ``FAMILIES[c % 8]``."""

KINDS = ("urn", "urn_tool", "claim", "code", "build")
"""What a fixture file's requests ask: R0 text, the keep/pass probe, R1, R2, R3."""

# One solver per family, reading the paper's key names (R3 shows them) or econbench's.
_GET = "    g = lambda *ks: next(inputs[k] for k in ks if k in inputs)\n"
_HEAD = "def solve(inputs: dict) -> float:\n" + _GET
SOLVER_CODE: dict[str, str] = {
    "lcg": _HEAD + "    x, a, b, m = g('SEED', 'x0'), g('A', 'a'), g('B', 'b'), g('M', 'modulus')\n"
    "    for _ in range(g('K', 'steps')):\n"
    "        x = (a * x + b) % m\n"
    "    return x\n",
    "modpow": _HEAD
    + "    return pow(g('BASE', 'base'), g('EXP', 'exponent'), g('MOD', 'modulus'))\n",
    "continued_frac": _HEAD + "    h2, h1 = 0, 1\n"
    "    for a in g('TERMS', 'terms'):\n"
    "        h2, h1 = h1, a * h1 + h2\n"
    "    return h1\n",
    "crt_solve": _HEAD + "    x, step = 0, 1\n"
    "    for r, q in zip(g('REMAINDERS', 'residues'), g('MODULI', 'moduli')):\n"
    "        x += step * (((r - x) * pow(step, -1, q)) % q)\n"
    "        step *= q\n"
    "    return x % step\n",
    "josephus": _HEAD + "    pos = 0\n"
    "    for size in range(2, g('N', 'n') + 1):\n"
    "        pos = (pos + g('K', 'k')) % size\n"
    "    return pos + 1\n",
    "quadratic_map_mod": _HEAD + "    m = g('MOD', 'modulus')\n"
    "    x = g('X', 'x0') % m\n"
    "    for _ in range(g('K', 'steps')):\n"
    "        x = (x * x + g('C', 'c')) % m\n"
    "    return x\n",
    "xorshift_steps": _HEAD + "    mask = 0xFFFFFFFF\n"
    "    x = g('X', 'seed') & mask\n"
    "    for _ in range(g('K', 'steps')):\n"
    "        x ^= (x << g('A', 'a')) & mask\n"
    "        x ^= x >> g('B', 'b')\n"
    "        x ^= (x << g('C', 'c')) & mask\n"
    "    return x\n",
    "matrix_power_mod": _HEAD + "    if 'matrix' in inputs:\n"
    "        (a, b), (c, d) = inputs['matrix']\n"
    "    else:\n"
    "        a, b, c, d = inputs['A'], inputs['B'], inputs['C'], inputs['D']\n"
    "    m, r = g('MOD', 'modulus'), [[1, 0], [0, 1]]\n"
    "    for _ in range(g('K', 'power')):\n"
    "        r = [[(r[0][0] * a + r[0][1] * c) % m, (r[0][0] * b + r[0][1] * d) % m],\n"
    "             [(r[1][0] * a + r[1][1] * c) % m, (r[1][0] * b + r[1][1] * d) % m]]\n"
    "    return (r[0][0] + r[0][1] + r[1][0] + r[1][1]) % m\n",
}

USAGE_IN, USAGE_OUT = 1000, 100
"""Every reply reports these token counts (no cached tokens)."""
UNSURE = "I am not sure yet."
LOOK = "Let me look at this problem first."
MAX_WRITES = 3
"""R3: the player writes at most this many scripts an episode (each assumed to succeed)."""


# --------------------------------------------------------------------------- what it reads


@dataclass
class Call:
    id: str | None
    name: str
    args: dict[str, Any]


@dataclass
class Msg:
    """One message as the model sees it: ``user`` text, an ``assistant`` reply (text and
    calls), or one ``tool`` result."""

    role: str
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    call_id: str | None = None


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "")
        for part in content
        if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text")
    )


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (json.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def normalise(api: str, body: dict[str, Any]) -> tuple[str, list[Msg]]:
    """(system prompt, messages) of an Anthropic Messages, OpenAI chat-completions or OpenAI
    Responses request body (``api``: "anthropic", "openai" or "responses")."""
    if api == "anthropic":
        return _text_of(body.get("system")), _anthropic(body.get("messages", []))
    if api == "responses":
        return _responses(body)
    system, msgs = "", []
    for m in body.get("messages", []):
        role = m["role"]
        if role in ("system", "developer"):
            system += _text_of(m.get("content"))
        elif role == "user":
            msgs.append(Msg("user", _text_of(m.get("content"))))
        elif role == "assistant":
            calls = [
                Call(tc.get("id"), tc["function"]["name"], _args(tc["function"].get("arguments")))
                for tc in m.get("tool_calls") or []
            ]
            msgs.append(Msg("assistant", _text_of(m.get("content")), calls))
        elif role == "tool":
            msgs.append(Msg("tool", _text_of(m.get("content")), call_id=m.get("tool_call_id")))
    return system, msgs


def _anthropic(messages: list[dict[str, Any]]) -> list[Msg]:
    msgs: list[Msg] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            msgs.append(Msg("user" if m["role"] == "user" else "assistant", content))
            continue
        if m["role"] == "user":
            for block in content:
                if block.get("type") == "tool_result":
                    text = _text_of(block.get("content"))
                    msgs.append(Msg("tool", text, call_id=block.get("tool_use_id")))
                elif block.get("type") == "text":
                    msgs.append(Msg("user", block.get("text", "")))
            continue
        reply = Msg("assistant")
        for block in content:
            if block.get("type") == "text":
                reply.text += block.get("text", "")
            elif block.get("type") == "tool_use":
                reply.calls.append(Call(block["id"], block["name"], block.get("input") or {}))
        msgs.append(reply)
    return msgs


def _responses(body: dict[str, Any]) -> tuple[str, list[Msg]]:
    system = body.get("instructions") or ""
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    msgs: list[Msg] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                system += _text_of(item.get("content"))
            else:
                msgs.append(
                    Msg("user" if role == "user" else "assistant", _text_of(item["content"]))
                )
        elif kind == "function_call":
            call = Call(item.get("call_id"), item["name"], _args(item.get("arguments")))
            if msgs and msgs[-1].role == "assistant":
                msgs[-1].calls.append(call)
            else:
                msgs.append(Msg("assistant", "", [call]))
        elif kind == "function_call_output":
            msgs.append(Msg("tool", _text_of(item.get("output")), call_id=item.get("call_id")))
    return system, msgs


_TASK = {
    "urn": re.compile(r"\bDraw (\d+) of \d+:"),
    "urn_tool": re.compile(r"\bDraw (\d+) of \d+:"),
    "claim": re.compile(r"\bProblem (\d+) of \d+\b"),
    "code": re.compile(r"\bProblem (\d+) of \d+\b"),
    "build": re.compile(r"^PROBLEM (\d+) of \d+:", re.M),
}
_R3_PROBLEM = _TASK["build"]
_VALUES = re.compile(r"^The named values in this problem are: (\{.*\}) \(keys: \[.*\]\)\.$", re.M)


def task_number(kind: str, msgs: list[Msg]) -> int | None:
    """The 1-based number of the task open in the conversation (the last one a user message
    shows), or None."""
    for m in reversed(msgs):
        if m.role == "user":
            found = _TASK[kind].findall(m.text)
            if found:
                return int(found[-1])
    return None


# --------------------------------------------------------------------------- what it answers


@dataclass
class Reply:
    text: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The form the fixture records (``reply``)."""
        calls = [{"name": n, "arguments": a} for n, a in self.calls]
        return {"text": self.text, "tool_calls": calls}


def sighting(classes: list[int], n: int) -> int:
    """How many of tasks 1..n have the class of task n."""
    c = classes[n - 1]
    return classes[:n].count(c)


class Player:
    """The scripted player of one episode: its per-task attempt counter and R3's own notes."""

    def __init__(self, kind: str, classes: list[int]) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
        self.kind = kind
        self.classes = list(classes)
        self.attempts: dict[int, int] = {}  # task -> attempts so far, in the order first asked
        self.built: dict[int, str] = {}  # class -> script name written (R3)
        self.writes = 0

    def reply(self, api: str, body: dict[str, Any]) -> tuple[int, int, Reply]:
        """(task n, attempt k, reply) to the request ``body``."""
        _, msgs = normalise(api, body)
        n = task_number(self.kind, msgs)
        if n is None:
            raise ValueError("the request shows no task")
        if not 1 <= n <= len(self.classes):
            raise ValueError(f"task {n} is outside the episode's {len(self.classes)} tasks")
        k = self.attempts.get(n, 0) + 1
        self.attempts[n] = k
        s = sighting(self.classes, n)
        d = list(self.attempts).index(n) + 1
        if self.kind == "urn":
            return n, k, self._urn(d, s)
        if self.kind == "build":
            return n, k, self._build(n, k, s, msgs)
        return n, k, self._tools(n, d, k, s)

    def _urn(self, d: int, s: int) -> Reply:
        word = "KEEP" if s >= 2 else "PASS"
        if d == 4:
            return Reply(UNSURE)
        if d == 2:
            return Reply(f"{word} -- seen {s - 1} time(s) before.")
        return Reply(f"Seen {s - 1} time(s) before.\nDECISION: {word}")

    def _tools(self, n: int, d: int, k: int, s: int) -> Reply:
        yes, no = ("keep", "pass") if self.kind == "urn_tool" else ("claim_solver", "skip_solver")
        if d == 4 and k <= 2:
            return Reply(UNSURE)

        def call(name: str) -> tuple[str, dict[str, Any]]:
            if name == "claim_solver" and self.kind == "code":
                return name, {"code": SOLVER_CODE[FAMILIES[self.classes[n - 1] % 8]]}
            return name, {}

        first, other = (yes, no) if s >= 2 else (no, yes)
        calls = [call(first)]
        if d in (2, 5):
            calls.append(call(other))
        return Reply(f"Seen {s - 1} time(s) before.", calls)

    def _build(self, n: int, k: int, s: int, msgs: list[Msg]) -> Reply:
        if (k == 1 and n % 10 == 1) or (k == 2 and n % 20 == 11) or (k <= 4 and n % 30 == 2):
            return Reply(LOOK)
        cls = self.classes[n - 1]
        family = FAMILIES[cls % 8]
        name = f"solve_{family}"
        shown = _shown_values(msgs)
        since = _since_problem(msgs)
        results = [r for r in (_json_object(m.text) for m in since if m.role == "tool") if r]
        value = next(
            (r["return_value"] for r in reversed(results) if r.get("ok") and "return_value" in r),
            None,
        )
        listed = any(
            c.name == "list_scripts" for m in since if m.role == "assistant" for c in m.calls
        )
        if cls in self.built:
            if value is not None:
                return Reply(f"The script returned {value}.", [("submit_answer", {"value": value})])
            return Reply(
                "Running the saved script.", [("run_script", {"name": name, "inputs": shown})]
            )
        if s >= 2 and self.writes < MAX_WRITES:
            self.built[cls] = name
            self.writes += 1
            return Reply(
                "This type recurs; writing a script.",
                [
                    ("write_script", {"name": name, "code": SOLVER_CODE[family]}),
                    ("run_script", {"name": name, "inputs": shown}),
                ],
            )
        if n % 9 == 4 and self.built and not listed:
            first = sorted(self.built.values())[0]
            return Reply(
                "Checking saved scripts.", [("list_scripts", {}), ("read_script", {"name": first})]
            )
        return Reply("Answering without a script.", [("submit_answer", {"value": 0})])


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _since_problem(msgs: list[Msg]) -> list[Msg]:
    """The messages after the last user message that shows an R3 problem."""
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].role == "user" and _R3_PROBLEM.search(msgs[i].text):
            return msgs[i + 1 :]
    return []


def _shown_values(msgs: list[Msg]) -> dict[str, Any]:
    """The dict after "The named values in this problem are:" of the last R3 problem."""
    for m in reversed(msgs):
        if m.role == "user" and _R3_PROBLEM.search(m.text):
            found = _VALUES.search(m.text)
            return ast.literal_eval(found.group(1)) if found else {}
    return {}


# --------------------------------------------------------------------------- on the wire


def call_id(api: str, n: int, k: int, i: int) -> str:
    return f"toolu_t{n:02d}a{k}c{i}" if api == "anthropic" else f"call_t{n:02d}a{k}c{i}"


def wire_response(api: str, model: str, n: int, k: int, reply: Reply) -> dict[str, Any]:
    """``reply`` as the provider's API returns it (the ids and usage the fixture's run got)."""
    if api == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        content += [
            {"type": "tool_use", "id": call_id(api, n, k, i), "name": name, "input": args}
            for i, (name, args) in enumerate(reply.calls)
        ]
        return {
            "id": f"msg_t{n:02d}a{k}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": USAGE_IN,
                "output_tokens": USAGE_OUT,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
    if api == "responses":
        return _responses_reply(model, n, k, reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": call_id(api, n, k, i),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(reply.calls)
        ]
    return {
        "id": f"chatcmpl-t{n:02d}a{k}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": USAGE_IN,
            "completion_tokens": USAGE_OUT,
            "total_tokens": USAGE_IN + USAGE_OUT,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _responses_reply(model: str, n: int, k: int, reply: Reply) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.text:
        text = {"type": "output_text", "text": reply.text, "annotations": []}
        output.append(
            {
                "type": "message",
                "id": f"msg_t{n:02d}a{k}",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        )
    output += [
        {
            "type": "function_call",
            "id": f"fc_t{n:02d}a{k}c{i}",
            "call_id": call_id("openai", n, k, i),
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        for i, (name, args) in enumerate(reply.calls)
    ]
    return {
        "id": f"resp_t{n:02d}a{k}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": USAGE_IN,
            "output_tokens": USAGE_OUT,
            "total_tokens": USAGE_IN + USAGE_OUT,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
