"""The loopback Hub misbehaving on request: faults that answer too slowly, too much, or never.

A mixin of tests/hubstub.py's request handler, used through `Hub.inject(route, action)`:

- "trickle": a 200 whose body comes one byte (never a newline) every `delay` seconds;
- "endless": a 200 whose body is one line that never ends, streamed as fast as the client reads;
- "hang": the connection is accepted and the request read, and nothing is ever answered
  (a Hub whose process is stopped while its port stays open).

Each ends when the client hangs up, when `Hub.stop()` releases it, or after MAX_SECONDS /
MAX_BYTES, so a client that never gives up (the code under test, at its worst) still returns
and a test can fail instead of hanging. `Fault.sent` counts the body bytes written.
"""

from __future__ import annotations

import socket
import time

MAX_SECONDS = 90.0  # a misbehaving answer lasts at most this long
MAX_BYTES = 64 * 1024 * 1024  # an endless line stops here: a client without a bound reads all of it
_CHUNK = b"x" * 65536


class MisbehaveHandler:
    def _misbehave(self, fault, method: str, path: str) -> None:
        self._log(method, path, 0 if fault.action == "hang" else 200, 0, 0)  # logged on arrival
        self.close_connection = True
        try:
            if fault.action == "hang":
                self.hub.released.wait(MAX_SECONDS)
                return
            self.send_response(200)
            events = self._route == "events"
            self.send_header("Content-Type", "text/event-stream" if events else "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            if events and fault.action == "endless":
                self.wfile.write(b"event: changes\ndata: ")
            self._body(fault)
        except OSError:
            pass  # the client gave up, as it should
        finally:
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _body(self, fault) -> None:
        end = time.monotonic() + MAX_SECONDS
        while time.monotonic() < end and not self.hub.released.is_set() and fault.sent < MAX_BYTES:
            piece = b"x" if fault.action == "trickle" else _CHUNK
            self.wfile.write(piece)
            self.wfile.flush()
            fault.sent += len(piece)
            if fault.action == "trickle":
                self.hub.released.wait(fault.delay)
