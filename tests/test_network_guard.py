"""The repository's conftest: loopback works, anything else is refused, keys are cleared."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest
from tests.fakes.network import PROVIDER_ENV, NetworkBlockedError, NetworkGuard

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
#: The inner run needs none of the plugins (Hypothesis alone costs seconds to import).
QUIET_INNER_RUN = ("-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def test_a_loopback_server_is_reachable() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        accepted: list[bytes] = []

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                accepted.append(conn.recv(4))

        thread = threading.Thread(target=serve)
        thread.start()
        with socket.create_connection(("localhost", port), timeout=5) as client:
            client.sendall(b"ping")
        thread.join(timeout=5)
    assert accepted == [b"ping"]


@pytest.mark.parametrize(
    ("family", "address"),
    [
        (socket.AF_INET, ("192.0.2.1", 443)),  # TEST-NET-1: never routed
        (socket.AF_INET6, ("2001:db8::1", 443, 0, 0)),
        (socket.AF_INET, ("api.openai.com", 443)),
    ],
)
def test_other_addresses_are_refused_before_any_packet(
    network_guard: NetworkGuard, family: int, address: tuple
) -> None:
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        with pytest.raises(NetworkBlockedError, match="not loopback"):
            sock.connect(address)
        with pytest.raises(NetworkBlockedError):
            sock.connect_ex(address)
    assert len(network_guard.blocked) == 2
    network_guard.blocked.clear()  # provoked on purpose: do not fail this test at teardown


def test_keys_are_cleared_and_a_swallowed_refusal_still_fails_the_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One inner run (each costs seconds): a test sees no key, and a test whose code
    catches the refusal (as SDKs do before retrying) errors at teardown all the same."""
    pytester.makeconftest(ROOT_CONFTEST.read_text())
    pytester.makepyfile(
        f"""
        import os
        import socket

        def test_sees_no_key():
            assert [v for v in {list(PROVIDER_ENV)!r} if v in os.environ] == []

        def test_swallows():
            try:
                socket.create_connection(("192.0.2.1", 80), timeout=1)
            except OSError:
                pass
        """
    )
    for var in PROVIDER_ENV:
        monkeypatch.setenv(var, "sk-a-real-looking-key")
    result = pytester.runpytest_inprocess(*QUIET_INNER_RUN)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*the test tried to reach the network: ('192.0.2.1', 80)*"])
    assert os.environ["OPENAI_API_KEY"] == "sk-a-real-looking-key", "restored after the run"
