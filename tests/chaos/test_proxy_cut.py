"""The chaos proxy's cut is a real cut: a client waiting for an answer sees its connection end.

Why a test: the store-fault tests rely on it. A cut that closed sockets without shutting them
down left a client that had sent its request waiting for ever (the pump thread blocked in
``recv`` kept the socket alive, so no RST left): one chaos run ended as DEADLINE_EXCEEDED.
"""

from __future__ import annotations

import queue
import socket
import threading

import pytest

from tests.chaos.faults import CuttableProxy

pytestmark = pytest.mark.integration


def test_a_client_waiting_for_an_answer_sees_the_cut() -> None:
    upstream = socket.create_server(("127.0.0.1", 0))
    accepted: queue.Queue[socket.socket] = queue.Queue()
    threading.Thread(target=lambda: accepted.put(upstream.accept()[0]), daemon=True).start()
    proxy = CuttableProxy(upstream.getsockname()[:2])
    try:
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        client.sendall(b"request")
        server_side = accepted.get(timeout=5)
        server_side.settimeout(5)
        assert server_side.recv(16) == b"request"  # delivered; the upstream never answers
        proxy.cut()
        try:
            got = client.recv(16)
        except ConnectionResetError:
            got = b""  # a reset
        except TimeoutError:
            pytest.fail("the client still waits 5 s after the cut: the connection was not cut")
        assert got == b""  # an end of stream or a reset: the client learns at once
    finally:
        proxy.close()
        upstream.close()
