"""A stand-in for the public internet, for the egress guard's tests: a TLS
server on loopback that answers as GitHub, raw.githubusercontent.com and
skills.sh would (by Host header), a resolver that gives those names public
addresses, and a network backend that dials those public addresses to the
local server. The guard's address policy is the real one."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpcore
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from teachd.remote.egress import Egress, Limits

PUBLIC = {"api.github.com": "140.82.112.6", "raw.githubusercontent.com": "185.199.108.133",
          "github.com": "140.82.112.3", "skills.sh": "76.76.21.21", "skills.example": "93.184.216.34"}
Route = Callable[[BaseHTTPRequestHandler], tuple[int, dict[str, str], bytes]]


def _certs(names: list[str], folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA, and a certificate for ``names`` (and 127.0.0.1) signed by it."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "teachd test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    alt = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False).sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


class FakeInternet:
    """``routes``: (host, path with query) → handler. Every request is logged."""

    def __init__(self, tls: bool = True) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.log: list[tuple[str, str]] = []
        self.sni: list[str | None] = []
        self.folder = Path(tempfile.mkdtemp(prefix="teachd-net-"))
        ca, cert, key = _certs(sorted(PUBLIC), self.folder)
        self.ca = ca
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                host = (self.headers.get("Host") or "").split(":")[0]
                fake.log.append((host, self.path))
                route = fake.routes.get((host, self.path))
                if route is None:
                    status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
                else:
                    status, headers, body = route(self)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(cert, key)
            ctx.sni_callback = lambda sock, name, _ctx: fake.sni.append(name)  # type: ignore[assignment]
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeInternet:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- answers --------------------------------------------------------------
    def text(self, host: str, path: str, body: str | bytes, status: int = 200,
             content_type: str = "text/plain; charset=utf-8", **headers: str) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.routes[(host, path)] = lambda h: (status, {"Content-Type": content_type, **headers}, data)

    def json(self, host: str, path: str, data: Any) -> None:
        self.text(host, path, json.dumps(data), content_type="application/json")

    def redirect(self, host: str, path: str, to: str, status: int = 302) -> None:
        self.routes[(host, path)] = lambda h: (status, {"Location": to}, b"")

    def github_repo(self, owner: str, repo: str, files: dict[str, str], branch: str = "main") -> None:
        """A repository as the GitHub REST API and raw host show it."""
        self.json("api.github.com", f"/repos/{owner}/{repo}", {"full_name": f"{owner}/{repo}",
                                                               "default_branch": branch})
        tree = [{"path": p, "type": "blob", "size": len(t.encode()), "mode": "100644", "sha": "0" * 40}
                for p, t in sorted(files.items())]
        dirs = sorted({p.rsplit("/", 1)[0] for p in files if "/" in p})
        tree += [{"path": d, "type": "tree", "mode": "040000", "sha": "1" * 40} for d in dirs]
        self.json("api.github.com", f"/repos/{owner}/{repo}/git/trees/{branch}?recursive=1",
                  {"sha": "2" * 40, "tree": tree, "truncated": False})
        for p, t in files.items():
            self.text("raw.githubusercontent.com", f"/{owner}/{repo}/{branch}/{p}", t)

    # -- the client side ------------------------------------------------------
    def egress(self, resolver: dict[str, list[str]] | None = None, limits: Limits | None = None) -> Egress:
        answers = {**{h: [ip] for h, ip in PUBLIC.items()}, **(resolver or {})}
        ctx = ssl.create_default_context(cafile=str(self.ca))
        return Egress(resolver=DictResolver(answers), backend=Dialer(self.port), ssl_context=ctx, limits=limits)


class DictResolver:
    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers

    def resolve(self, host: str, port: int) -> list[str]:
        from teachd.core.errors import Unavailable

        if host not in self.answers:
            raise Unavailable(f"cannot resolve {host}")
        return list(self.answers[host])


class Dialer(httpcore.SyncBackend):
    """The test network: the public addresses above reach the local server; nothing else exists."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.dialled: list[tuple[str, int]] = []

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        self.dialled.append((host, port))
        if host not in PUBLIC.values():
            raise httpcore.ConnectError(f"no route to {host} in the test network")
        return super().connect_tcp("127.0.0.1", self.port, timeout, local_address, socket_options)
