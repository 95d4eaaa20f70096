"""The viewer's server under slow and idle clients (issue 22, item 15): 300 idle connections
once made 302 threads that lived forever. Real sockets on the loopback; the timeouts are
short so the tests are quick (their bounds only prove that nothing hangs)."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from econbench.runs.viewer import Catalog, ViewerServer, serve_in_thread


@contextmanager
def serving(root: Path, **limits: Any) -> Iterator[ViewerServer]:
    """A viewer on an empty folder, with ``limits`` (idle_timeout, max_threads, …)."""
    server = ViewerServer(Catalog(root), **limits)
    serve_in_thread(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def idle_clients(server: ViewerServer, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections that send nothing."""
    clients = [socket.create_connection(server.server_address[:2], timeout=5) for _ in range(count)]
    try:
        yield clients
    finally:
        for client in clients:
            client.close()


def get(server: ViewerServer, path: str = "/api/runs", timeout: float = 10) -> int:
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def closed_by_server(client: socket.socket, within: float) -> bool:
    """Whether the server closes ``client`` within ``within`` seconds (EOF or a reset)."""
    client.settimeout(within)
    try:
        return client.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def eventually(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_idle_connections_hold_no_thread_and_a_request_still_answers(tmp_path: Path) -> None:
    with serving(tmp_path, idle_timeout=30, max_threads=4, max_waiting=400) as server:
        assert get(server) == 200
        baseline = threading.active_count()
        with idle_clients(server, 300):
            time.sleep(0.3)  # time enough to accept them all and start a thread for each
            assert threading.active_count() <= baseline
            assert get(server) == 200  # answered during the flood, at once
            assert eventually(lambda: threading.active_count() <= baseline)  # its thread ends


def test_idle_connections_are_closed_after_the_idle_timeout(tmp_path: Path) -> None:
    with serving(tmp_path, idle_timeout=0.5) as server, idle_clients(server, 20) as clients:
        assert all(closed_by_server(client, within=5) for client in clients)
        assert get(server) == 200


def test_the_oldest_idle_connections_go_first_when_too_many_wait(tmp_path: Path) -> None:
    with (
        serving(tmp_path, idle_timeout=30, max_waiting=8) as server,
        idle_clients(server, 20) as clients,
    ):
        assert all(closed_by_server(client, within=5) for client in clients[:12])
        assert not any(closed_by_server(client, within=0.05) for client in clients[12:])
        assert get(server) == 200


def test_a_client_that_trickles_its_request_is_cut_off(tmp_path: Path) -> None:
    """A byte now and then, each well within the idle timeout, must not hold a thread:
    the whole request has to arrive within the timeout."""
    with serving(tmp_path, idle_timeout=0.5) as server:
        client = socket.create_connection(server.server_address[:2], timeout=5)
        try:
            client.sendall(b"GET /api/runs HTTP/1.0\r\n")
            deadline = time.monotonic() + 5
            cut = False
            while time.monotonic() < deadline and not cut:
                try:
                    client.sendall(b"X")
                except (BrokenPipeError, ConnectionResetError):
                    cut = True
                    break
                cut = closed_by_server(client, within=0.1)
            assert cut, "the server still waits for a request that never ends"
        finally:
            client.close()


def test_requests_beyond_max_threads_wait_their_turn(tmp_path: Path) -> None:
    with serving(tmp_path, idle_timeout=0.5, max_threads=2) as server:
        baseline = threading.active_count()
        with idle_clients(server, 6) as stalled:
            for client in stalled:
                client.sendall(b"GET /api/runs HTTP/1.0\r\n")  # then nothing: each takes a turn
            time.sleep(0.2)  # time enough to start a thread for each
            peak = [threading.active_count()]

            def watch() -> None:
                while not done.is_set():
                    peak.append(threading.active_count())
                    time.sleep(0.01)

            done = threading.Event()
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            try:
                assert get(server, timeout=15) == 200  # after the stalled ones time out
            finally:
                done.set()
                watcher.join(5)
        assert max(peak) <= baseline + 2 + 1  # two handlers, and the watcher itself


def test_closing_the_server_closes_the_waiting_connections(tmp_path: Path) -> None:
    before = threading.active_count()
    server = ViewerServer(Catalog(tmp_path), idle_timeout=30)
    serve_in_thread(server)
    with idle_clients(server, 5) as clients:
        time.sleep(0.1)
        server.shutdown()
        server.server_close()
        assert all(closed_by_server(client, within=5) for client in clients)
    assert eventually(lambda: threading.active_count() <= before)


@pytest.mark.parametrize("limits", [{"idle_timeout": 0}, {"max_threads": 0}, {"max_waiting": 0}])
def test_limits_that_could_not_serve_are_refused(tmp_path: Path, limits: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="idle_timeout must be positive"):
        ViewerServer(Catalog(tmp_path), **limits)
