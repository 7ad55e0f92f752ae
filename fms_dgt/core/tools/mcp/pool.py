"""Per-record isolation of stateful MCP servers: a pool of clients lent to sessions.

A server that keeps state (notes, a cart, a file system) would let one record see what another
did. With ``isolation: per_record`` the MCP engine leases each session (a record) a client per
server it calls, and gives it back at teardown. A session never sees another's state:

* a session that has only called read-only tools (``readOnlyHint``) holds a **shared** lease on a
  *clean* client: any number of such sessions use one clean server at once, since none of them
  changes what the others read (a clean notebook is empty for all of them);
* a session about to call any other tool needs a client of its **own** (an exclusive lease). It
  gives its shared lease back first, then takes a clean client to itself: what it read so far it
  read on a clean server, and the client it moves to is clean too. Sessions waiting for an
  exclusive lease go first: no new shared lease is given while one waits;
* a client that served an exclusive lease is *dirty* when the session changed something: before
  it is lent again the server's declared reset tool (``reset_tool`` on the loader entry) is called,
  or, without one, the client is replaced by a fresh server (a new process for stdio, a new session
  for HTTP);
* when no client is free, a session waits up to ``patience`` for one, and opens another from the
  same spec only if none comes (or while the pool holds fewer than ``max_clients``): starting a
  server costs far more than waiting for a record to finish with one.

The first client of a pool is the loader's shared connection (it only listed tools, so it is
clean); it is never closed here. Clients the pool opened are closed when replaced or when the
pool closes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from fms_dgt.core.tools.mcp.client import MCPClient
from fms_dgt.errors import MCPClientError

__all__ = ["ClientPool", "Lease"]


@dataclass(slots=True)
class Lease:
    """A client lent to one session.

    Attributes:
        client: the client.
        dirty: the session changed the server's state (only on an exclusive lease).
        shared: the client is shared with other sessions that only read (the lease is for
            read-only calls).
    """

    client: MCPClient
    dirty: bool = False
    shared: bool = False


@dataclass(slots=True, eq=False)
class _Slot:
    """One client of the pool and who holds it."""

    client: MCPClient
    readers: int = 0  # sessions holding it for read-only calls (it is clean while they do)
    held: bool = False  # lent to one session, or being reset or replaced
    dirty: bool = False  # the last session changed the server's state: clean it before lending

    @property
    def free(self) -> bool:
        return not self.held and not self.readers


class ClientPool:
    """The clients of one server under ``per_record`` isolation (see the module docstring).

    Args:
        base: the loader's shared client for the server (lent first, never closed here).
        reset_tool: the server's tool that clears its state, or None to start a fresh server.
        timeout: seconds for the reset call.
        max_clients: clients the pool opens without waiting first (the base one included).
        patience: seconds a session waits for a client before opening one beyond the limit.
    """

    def __init__(
        self,
        base: MCPClient,
        reset_tool: str | None,
        timeout: float | None = None,
        *,
        max_clients: int = 1,
        patience: float = 2.0,
    ) -> None:
        self.base = base
        self.spec = base.spec
        self.reset_tool = reset_tool
        self.timeout = timeout
        self.max_clients = max(1, max_clients)
        self.patience = patience
        self._slots: list[_Slot] = [_Slot(base)]
        self._owned: list[MCPClient] = []
        self._opening = 0
        self._writers = 0  # sessions waiting for an exclusive lease
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        #: How many times a dirty client was reset, and how many fresh servers were started.
        self.resets = 0
        self.restarts = 0

    @property
    def clients(self) -> int:
        """The clients the pool holds (the base one included)."""
        with self._lock:
            return len(self._slots)

    def lease(self, *, shared: bool = False) -> Lease:
        """A clean client for a session: shared with other read-only sessions, or its own.

        Raises:
            MCPClientError: the reset call failed (the server cannot be made clean).
        """
        slot = self._claim(shared)
        if slot is None:
            slot = self._open(shared)
        elif slot.dirty:
            self._clean(slot)
            if shared:
                self._share(slot)
        return Lease(slot.client, shared=shared)

    def give_back(self, lease: Lease) -> None:
        """Return a lent client (dirty when the session changed the server's state)."""
        with self._changed:
            slot = next((s for s in self._slots if s.client is lease.client), None)
            if slot is not None:
                if lease.shared:
                    slot.readers -= 1
                else:
                    slot.held = False
                slot.dirty = slot.dirty or lease.dirty
            self._changed.notify_all()

    # ------------------------------------------------------------------ choosing a client

    def _claim(self, shared: bool) -> _Slot | None:
        """A slot claimed for the session (joined, or held while it is cleaned), or None when the
        session should open a new client (the pool is not full, or it waited long enough)."""
        deadline = time.monotonic() + self.patience
        writer = 0 if shared else 1
        with self._changed:
            self._writers += writer
            try:
                while True:
                    slot = self._free_slot(shared)
                    if slot is not None:
                        return slot
                    remaining = deadline - time.monotonic()
                    if len(self._slots) + self._opening < self.max_clients or remaining <= 0:
                        self._opening += 1
                        return None
                    self._changed.wait(remaining)
            finally:
                self._writers -= writer

    def _free_slot(self, shared: bool) -> _Slot | None:
        """(Lock held.) A clean shared slot to join, else a free slot, claimed; None if none."""
        if shared:
            if self._writers:
                return None  # a session waiting for a client of its own goes first
            joined = next((s for s in self._slots if s.readers and not s.held), None)
            if joined is not None:
                joined.readers += 1
                return joined
        free = [s for s in self._slots if s.free]
        slot = next((s for s in free if not s.dirty), free[0] if free else None)
        if slot is not None:
            if shared and not slot.dirty:
                slot.readers = 1
            else:
                slot.held = True  # the session's own, or shared once it is clean
        return slot

    def _share(self, slot: _Slot) -> None:
        """A slot just cleaned for a read-only session: others may join it."""
        with self._changed:
            slot.held = False
            slot.readers += 1
            self._changed.notify_all()

    # ------------------------------------------------------------------ opening and cleaning

    def _open(self, shared: bool) -> _Slot:
        try:
            client = MCPClient(self.spec).acquire()  # it connects on first use, outside the lock
        except BaseException:
            with self._lock:
                self._opening -= 1
            raise
        with self._changed:
            self._opening -= 1
            slot = _Slot(client, readers=int(shared), held=not shared)
            self._slots.append(slot)
            self._owned.append(client)
            self._changed.notify_all()
        return slot

    def _clean(self, slot: _Slot) -> None:
        """Reset (or replace) the server of a dirty slot the session holds."""
        if self.reset_tool is None:
            self._replace(slot)
            return
        try:
            raw = slot.client.call_tool(self.reset_tool, {}, timeout=self.timeout)
        except MCPClientError:
            self._drop(slot)
            raise
        if raw.get("isError"):
            self._drop(slot)
            raise MCPClientError(
                self.spec.name,
                slot.client.transport,
                f"tools/call {self.reset_tool} (reset between records)",
                f"the reset tool answered with an error: {str(raw.get('content'))[:500]}",
                "Fix the tool, or remove reset_tool to start a fresh server per record instead.",
            )
        slot.dirty = False
        with self._lock:
            self.resets += 1

    def _replace(self, slot: _Slot) -> None:
        old, slot.client = slot.client, MCPClient(self.spec).acquire()
        with self._lock:
            self._owned.append(slot.client)
            self.restarts += 1
        self._retire(old)
        slot.dirty = False

    def _drop(self, slot: _Slot) -> None:
        """Take a slot whose server cannot be made clean out of the pool."""
        with self._changed:
            if slot in self._slots:
                self._slots.remove(slot)
            self._changed.notify_all()
        self._retire(slot.client)

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
            owned, self._owned, self._slots = self._owned, [], []
        for client in owned:
            client.release()
