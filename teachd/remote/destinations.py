"""Where an agent's browser may go when the agent is not the daemon's owner.

The daemon's Chromium runs on the owner's machine, inside the owner's
network. A person's ``/mcp`` session that could point it at ``127.0.0.1``,
``10.x`` or the cloud metadata address and read the page back would make
the daemon a proxy into that network. So for anyone but the owner, every
request of that browser (every page, frame, subresource, WebSocket) is held
to the egress guard's own address judgement (:mod:`teachd.remote.addresses`,
the IANA special-purpose registries): loopback, private and other
special-purpose destinations are refused, whatever skill names them
(teachd.runner.policy: the rule of every run's browser).

Names are resolved through an injectable resolver (tests have no public
DNS); every address in the answer must be acceptable. Resolution happens
again in Chromium, so a name whose answer changes between the two lookups
(DNS rebinding) is not covered by this check alone; literal addresses,
``localhost`` names and stable names are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from compiler import urls
from teachd.core.errors import TeachdError
from teachd.remote.addresses import literal_ip, name_refusal, refusal
from teachd.remote.egress import Resolver, SystemResolver

_NO_NETWORK = ("about:", "data:", "blob:", "javascript:", "chrome-error:")


@dataclass
class Destinations:
    """The network rule of a person's (not the owner's) agent browser."""

    resolver: Resolver = field(default_factory=SystemResolver)
    allowed: frozenset[str] = frozenset()  # origins the daemon's owner lets everyone reach (team_origins)
    _answers: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    _nowhere: set[tuple[str, int]] = field(default_factory=set)  # names that resolved to nothing

    def refusal(self, url: str) -> str | None:
        """Why the browser may not reach ``url``; None when it may."""
        text = url.strip()
        if text.lower().startswith(_NO_NETWORK):
            return None  # nothing leaves the browser
        if text.lower().startswith(("ws:", "wss:")):
            text = "http" + text[2:]  # a WebSocket goes where its http(s) twin goes
        web = urls.parse_web(text)
        if web is None:
            return f"{url} is not an http(s) address"
        why, _addresses = self.place(web.hostname, web.effective_port, web.origin)
        return why

    def place(self, host: str, port: int, named: str = "") -> tuple[str | None, list[str]]:
        """Why ``host:port`` may not be reached (and no address), or None and
        the addresses it was judged by — the ones to connect to (the proxy
        connects to exactly these: no second lookup). ``named``: how the
        refusal names it (an origin; ``host:port`` by default)."""
        named = named or (f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        if self._allowed_place(host, port):
            literal = literal_ip(host)
            return None, [str(literal)] if literal is not None else self._resolve(host, port)
        why = name_refusal(host)
        if why:
            return f"{named} is refused: {why}", []
        literal = literal_ip(host)
        if literal is not None:
            why = refusal(literal)
            return (f"{named} is refused: {why}", []) if why else (None, [str(literal)])
        addresses = self._resolve(host, port)
        for address in addresses:
            ip = literal_ip(address)
            why = refusal(ip) if ip is not None else "not an address"
            if why:
                return f"{named} ({address}) is refused: {why}", []
        return None, addresses

    def _allowed_place(self, host: str, port: int) -> bool:
        """``host:port`` is one of the allowed origins' (a proxy's CONNECT names no scheme)."""
        return (host.lower(), port) in self._allowed_places

    @cached_property
    def _allowed_places(self) -> frozenset[tuple[str, int]]:
        """The allowed origins as (host, port), read once."""
        webs = (urls.parse_web(origin) for origin in self.allowed)
        return frozenset((web.hostname, web.effective_port) for web in webs if web is not None)

    def _resolve(self, host: str, port: int) -> list[str]:
        key = (host, port)
        if key not in self._answers:
            try:
                answer = self.resolver.resolve(host, port)
            except TeachdError:
                answer = []
            if not answer:  # unresolvable: refused as nowhere
                self._nowhere.add(key)
            self._answers[key] = answer or ["0.0.0.0"]
        return self._answers[key]

    def nowhere(self, host: str, port: int) -> bool:
        """``host`` names no address at all (refused, but nothing there could have been reached)."""
        return (host, port) in self._nowhere
