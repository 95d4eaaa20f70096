"""``benchmarks/model_path.py`` runs and prints its figures (a smoke test; nothing timed).

Three days with roaster_A played through the real OpenAI SDK against the trading fake in a
separate process, in the default window and in an 8k window small enough to compact, so
that every figure line is printed and the compaction requests are told apart.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_model_path_prints_its_figures(monkeypatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.delitem(sys.modules, "model_path", raising=False)
    model_path = importlib.import_module("model_path")
    code = model_path.main(["--days", "3", "--windows", "default,8k", "--no-sweep"])
    out = capsys.readouterr().out
    assert code == 0, out
    for line in (
        "harness CPU per request:",
        "floor per request (json.dumps once + POST over loopback):",
        "average prompt tokens per step:",
        "bytes written per model firm (wchar):",
        "run directory:",
        "== model path figures (issue 27) ==",
        "load average at end:",
    ):
        assert out.count(line) >= 1, (line, out)

    requests = [
        (int(m[1]), int(m[2]), int(m[3]))
        for m in re.finditer(
            r"model requests: (\d+), of them compactions: (\d+) \(run reports (\d+)\)", out
        )
    ]
    shares = [
        float(s) / 100 for s in re.findall(r"prefix-cache share, all requests: ([\d.]+) %", out)
    ]
    assert len(requests) == len(shares) == 2, out
    (default_n, default_compactions, _), (small_n, small_compactions, reported) = requests
    assert default_n > 0 and default_compactions == 0
    assert small_compactions == reported > 0, "the fake must see the compactions the run made"
    assert small_n > small_compactions
    assert all(0 < share <= 1 for share in shares)
    compaction = re.findall(r"prefix-cache share, compaction requests: ([\d.]+) %", out)
    assert len(compaction) == 1 and 0 <= float(compaction[0]) <= 100
    floor = [float(f) for f in re.findall(r"floor per request [^:]*: ([\d.]+) ms", out)]
    assert len(floor) == 2 and all(f > 0 for f in floor)
