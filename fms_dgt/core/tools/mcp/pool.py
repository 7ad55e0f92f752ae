"""Per-record isolation of stateful MCP servers: a pool of clients, each lent to one session.

A server that keeps state (notes, a cart, a file system) would let one record see what another
did. With ``isolation: per_record`` the MCP engine lends each session (a record) a client of its
own for each server it calls, and gives it back at teardown:

* a client that has only served read-only tools (``readOnlyHint``) is lent again as it is;
* a client that served any other call is *dirty*: before it is lent again the server's declared
  reset tool (``reset_tool`` on the loader entry) is called, or, without one, the client is
  replaced by a fresh server (a new process for stdio, a new session for HTTP);
* when every client is lent (records in flight at once), a session waits a moment for one to come
  back, and opens another from the same spec only if none does (or while the pool holds fewer
  than ``max_clients``): starting a server costs far more than waiting for a record to finish.

The first client of a pool is the loader's shared connection (it only listed tools, so it is
clean); it is never closed here. Clients the pool opened are closed when replaced or when the
pool closes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from fms_dgt.core.tools.mcp.client import MCPClient
from fms_dgt.errors import MCPClientError

__all__ = ["ClientPool", "Lease"]


@dataclass(slots=True)
class Lease:
    """A client lent to one session, and whether the session changed the server's state."""

    client: MCPClient
    dirty: bool = False


class ClientPool:
    """The clients of one server under ``per_record`` isolation (see the module docstring).

    Args:
        base: the loader's shared client for the server (lent first, never closed here).
        reset_tool: the server's tool that clears its state, or None to start a fresh server.
        timeout: seconds for the reset call.
        max_clients: clients the pool opens without waiting first (the base one included).
        patience: seconds a session waits for a lent client before opening one beyond the limit.
    """

    def __init__(
        self,
        base: MCPClient,
        reset_tool: str | None,
        timeout: float | None = None,
        *,
        max_clients: int = 2,
        patience: float = 2.0,
    ) -> None:
        self.base = base
        self.spec = base.spec
        self.reset_tool = reset_tool
        self.timeout = timeout
        self.max_clients = max(1, max_clients)
        self.patience = patience
        self._idle: list[Lease] = [Lease(base)]
        self._owned: list[MCPClient] = []
        self._lock = threading.Lock()
        self._returned = threading.Condition(self._lock)
        #: How many times a dirty client was reset, and how many fresh servers were started.
        self.resets = 0
        self.restarts = 0

    def lease(self) -> Lease:
        """A clean client for a new session.

        Raises:
            MCPClientError: the reset call failed (the server cannot be made clean).
        """
        with self._lock:
            if not self._idle and 1 + len(self._owned) >= self.max_clients:
                # Every client is lent and the pool is full: wait for one (a record ends soon);
                # a session that waits too long (records needing several servers) opens another.
                self._returned.wait_for(lambda: bool(self._idle), timeout=self.patience)
            lease = self._idle.pop() if self._idle else None
        if lease is None:
            return Lease(self._open())
        if lease.dirty:
            lease = self._cleaned(lease)
        return lease

    def give_back(self, lease: Lease) -> None:
        """Return a lent client (dirty when the session changed the server's state)."""
        with self._lock:
            self._idle.append(lease)
            self._returned.notify()

    def _cleaned(self, lease: Lease) -> Lease:
        if self.reset_tool is not None:
            raw = lease.client.call_tool(self.reset_tool, {}, timeout=self.timeout)
            if raw.get("isError"):
                raise MCPClientError(
                    self.spec.name,
                    lease.client.transport,
                    f"tools/call {self.reset_tool} (reset between records)",
                    f"the reset tool answered with an error: {str(raw.get('content'))[:500]}",
                    "Fix the tool, or remove reset_tool to start a fresh server per record instead.",
                )
            self.resets += 1
            return Lease(lease.client)
        self._retire(lease.client)
        self.restarts += 1
        return Lease(self._open())

    def _open(self) -> MCPClient:
        client = MCPClient(self.spec).acquire()
        with self._lock:
            self._owned.append(client)
        return client

    def _retire(self, client: MCPClient) -> None:
        with self._lock:
            owned = client in self._owned
            if owned:
                self._owned.remove(client)
        if owned:
            client.release()

    def close(self) -> None:
        """Close every client this pool opened (the base client stays with its owner)."""
        with self._lock:
            owned, self._owned, self._idle = self._owned, [], []
        for client in owned:
            client.release()
