"""HTTPS for ``noughts web`` (a phone's browser lends its camera only to a secure page): ``--tls``
makes a self-signed certificate once and keeps it, ``--cert``/``--key`` take a real one.

Real ``noughts web`` processes on free ports, spoken to over TLS by clients that trust only the
certificate the server was given or made, and check the host name against it.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import ipaddress
import json
import re
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from websockets.sync.client import connect
from websockets.typing import Origin

from child_signals import stop
from noughts.web import tls
from noughts.web.share import lan_addresses, qr_svg
from test_cli import assert_one_line_error, run_main
from test_web_scale import ENV, free_port, redis_server, wait_until  # noqa: F401  (redis_server: a fixture)

pytestmark = pytest.mark.slow

WAIT = 20.0
FINGERPRINT = re.compile(r"SHA-256 fingerprint is ([0-9A-F]{2}(?::[0-9A-F]{2}){31})")


class Server:
    """One ``noughts web`` process serving HTTPS, its output in a file (never a pipe nobody reads)."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, output: Path, trusted: Path) -> None:
        self.process, self.port, self.output, self.trusted = process, port, output, trusted

    @property
    def said(self) -> str:
        return self.output.read_text(encoding="utf-8")

    def context(self) -> ssl.SSLContext:
        """A client context trusting only ``trusted`` (the certificate, or its CA), host names checked."""
        return ssl.create_default_context(cafile=str(self.trusted))

    def get(self, path: str, host: str = "127.0.0.1") -> tuple[int, bytes]:
        with urllib.request.urlopen(f"https://{host}:{self.port}{path}", context=self.context(),
                                    timeout=WAIT) as reply:
            return reply.status, reply.read()

    def presented(self) -> bytes:
        """The certificate the server shows a client, as DER."""
        import socket

        with socket.create_connection(("127.0.0.1", self.port), timeout=WAIT) as raw, \
                self.context().wrap_socket(raw, server_hostname="localhost") as secure:
            certificate = secure.getpeercert(binary_form=True)
        assert certificate is not None
        return certificate


@contextlib.contextmanager
def web(folder: Path, *flags: str, data: Path | None = None, trusted: Path | None = None) -> Iterator[Server]:
    """``noughts web`` with these flags (and the data folder ``data``) until it answers /healthz over HTTPS."""
    port = free_port()
    output = folder / f"web-{port}.txt"
    env = dict(ENV, XDG_DATA_HOME=str(data or folder / "data"))
    trusted = trusted or (data or folder / "data") / "noughts" / "web-tls" / "cert.pem"
    with output.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "noughts", "web", "--port", str(port), "--no-scores",
                                    *flags], env=env, stdout=sink, stderr=subprocess.STDOUT)
    server = Server(process, port, output, trusted)

    def healthy() -> bool:
        if "Ctrl-C stops the server" not in server.said:
            return False
        status, body = server.get("/healthz")
        return status == 200 and bool(json.loads(body)["ok"])

    try:
        wait_until(healthy, f"noughts web {' '.join(flags)} on port {port}", process)
        yield server
    finally:
        stop(process)


def fingerprint_of(der: bytes) -> str:
    return ":".join(f"{byte:02X}" for byte in hashlib.sha256(der).digest())


def printed_fingerprint(server: Server) -> str:
    found = FINGERPRINT.search(server.said)
    assert found, server.said
    return found.group(1)


def play_one_move(server: Server, host: str) -> dict[str, Any]:
    """Over wss: a game against the computer, one move; the ``joined`` message."""
    with connect(f"wss://{host}:{server.port}/ws", ssl=server.context(), open_timeout=WAIT,
                 origin=Origin(f"https://{host}:{server.port}")) as ws:  # as a browser sends it
        def until(kind: str) -> dict[str, Any]:
            while True:
                message: dict[str, Any] = json.loads(ws.recv(timeout=WAIT))
                assert message["type"] != "error", message
                if message["type"] == kind:
                    return message

        until("welcome")
        ws.send(json.dumps({"type": "play_computer", "opponent": "easy", "first": "you", "name": "Ann"}))
        joined = until("joined")
        state = until("state")
        ws.send(json.dumps({"type": "move", "cell": 4, "game": state["game"]}))
        while state["cells"][4] is None:
            state = until("state")
        assert state["cells"][4] == state["seats"][0]["mark"]
        return joined


# --tls: the page and a game over HTTPS and wss ------------------------------------------------
def test_tls_serves_the_page_and_a_game_over_https_and_wss_with_links_that_say_https(tmp_path: Path) -> None:
    with web(tmp_path, "--tls") as server:
        for host in ("127.0.0.1", "localhost"):  # each checked against the certificate's names
            status, page = server.get("/", host)
            assert status == 200 and b'<script type="module" src="/static/app.js">' in page
        joined = play_one_move(server, "localhost")
        assert joined["url"] == f"https://localhost:{server.port}/r/{joined['room']}"
        status, qr = server.get(f"/r/{joined['room']}/qr.svg", "localhost")
        assert status == 200 and qr.decode() == qr_svg(joined["url"])  # the QR code is of the https link
        assert f"open https://127.0.0.1:{server.port}/" in server.said
        with pytest.raises(OSError):  # nothing in plain HTTP
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=WAIT)


def test_the_fingerprint_printed_is_the_certificates_the_server_presents(tmp_path: Path) -> None:
    with web(tmp_path, "--tls") as server:
        presented = server.presented()
        printed = printed_fingerprint(server)
    kept = ssl.PEM_cert_to_DER_cert(server.trusted.read_text())
    assert presented == kept
    assert printed == fingerprint_of(presented)
    assert "a new self-signed certificate" in server.said and str(server.trusted.parent) in server.said


def test_the_certificate_is_kept_reused_and_its_key_readable_by_its_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with web(tmp_path, "--tls", data=data) as first:
        fingerprint = printed_fingerprint(first)
    folder = data / "noughts" / "web-tls"
    assert (folder / "key.pem").stat().st_mode & 0o777 == 0o600
    assert folder.stat().st_mode & 0o777 == 0o700
    with web(tmp_path, "--tls", data=data) as second:
        assert printed_fingerprint(second) == fingerprint
        assert fingerprint_of(second.presented()) == fingerprint
        assert "the self-signed certificate kept in" in second.said


def test_the_certificate_names_every_address_a_phone_may_use(tmp_path: Path) -> None:
    with web(tmp_path, "--tls", "--host", "0.0.0.0") as server:
        certificate = x509.load_der_x509_certificate(server.presented())
        said = server.said
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    addresses = {str(address) for address in names.get_values_for_type(x509.IPAddress)}
    assert {"127.0.0.1", "::1", *lan_addresses()} <= addresses
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert certificate.not_valid_after_utc - certificate.not_valid_before_utc <= datetime.timedelta(days=826)
    assert isinstance(certificate.public_key(), ec.EllipticCurvePublicKey)
    if lan_addresses():  # the address to open on the phone, in https
        lan = lan_addresses()[0]
        shown = f"[{lan}]" if ":" in lan else lan
        assert f"https://{shown}:{server.port}/" in said


def kept_certificate(folder: Path, names: list[str], addresses: list[str],
                     now: datetime.datetime | None = None) -> str:
    """A certificate kept in ``folder`` as --tls keeps one, for these names only; its fingerprint."""
    return tls._make(folder, names, addresses, now or datetime.datetime.now(datetime.UTC)).fingerprint


def test_a_new_certificate_is_made_when_the_kept_one_no_longer_covers_the_addresses(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "noughts" / "web-tls"
    names, addresses = tls.wanted_names("0.0.0.0")
    # made on another network: the machine's addresses there are not its addresses here
    old = kept_certificate(folder, names, ["127.0.0.1", "::1", "192.168.77.20"])
    assert set(addresses) - {"127.0.0.1", "::1", "192.168.77.20"}, "the machine has an address of its own"
    with web(tmp_path, "--tls", "--host", "0.0.0.0") as server:
        new = printed_fingerprint(server)
        assert "a new self-signed certificate" in server.said
        certificate = x509.load_der_x509_certificate(server.presented())
    assert new != old and fingerprint_of(certificate.public_bytes(serialization.Encoding.DER)) == new
    covered = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(addresses) <= {str(address) for address in covered.get_values_for_type(x509.IPAddress)}


def test_a_kept_certificate_is_made_again_when_it_is_nearly_out_of_date_or_its_key_was_exposed(
        tmp_path: Path) -> None:
    names, addresses = tls.wanted_names("127.0.0.1")
    now = datetime.datetime.now(datetime.UTC)
    old = kept_certificate(tmp_path, names, addresses, now - datetime.timedelta(days=tls.VALID_DAYS - 10))
    renewed = tls.self_signed("127.0.0.1", tmp_path, now=now)
    assert renewed.made and renewed.fingerprint != old
    assert tls.self_signed("127.0.0.1", tmp_path, now=now) == dataclass_kept(renewed)
    (tmp_path / "key.pem").chmod(0o644)
    exposed = tls.self_signed("127.0.0.1", tmp_path, now=now)
    assert exposed.made and exposed.fingerprint != renewed.fingerprint
    assert (tmp_path / "key.pem").stat().st_mode & 0o777 == 0o600


def dataclass_kept(certificate: tls.Certificate) -> tls.Certificate:
    import dataclasses

    return dataclasses.replace(certificate, made=False)


# --cert and --key: a real certificate ------------------------------------------------------------
def issued(folder: Path) -> tuple[Path, Path, Path]:
    """A certificate for localhost and 127.0.0.1 issued by a CA of the test's own: (CA, chain, key) files."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    ca_file, chain_file, key_file = folder / "ca.pem", folder / "chain.pem", folder / "key.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return ca_file, chain_file, key_file


def test_a_real_certificate_and_key_are_served_as_given(tmp_path: Path) -> None:
    ca_file, chain_file, key_file = issued(tmp_path / "real")
    with web(tmp_path, "--cert", str(chain_file), "--key", str(key_file), trusted=ca_file) as server:
        assert server.get("/")[0] == 200
        play_one_move(server, "127.0.0.1")
        leaf = server.presented()
        assert printed_fingerprint(server) == fingerprint_of(leaf)
        assert "self-signed" not in server.said
    assert not (tmp_path / "data").exists()  # nothing made


def test_tls_is_served_by_every_worker_process(tmp_path: Path, redis_server: str) -> None:  # noqa: F811
    with web(tmp_path, "--tls", "--workers", "2", "--redis", f"{redis_server}/3") as server:
        for _ in range(4):  # the kernel hands connections to either process
            assert server.get("/healthz")[0] == 200
            play_one_move(server, "localhost")


def bad_pairs(folder: Path) -> list[tuple[list[str], str]]:
    """(flags, what the one line says) for certificate and key files that cannot be served."""
    _, chain_file, key_file = issued(folder / "one")
    _, other_chain, other_key = issued(folder / "two")
    garbage = folder / "garbage.pem"
    garbage.write_text("not a certificate\n")
    locked = folder / "locked.pem"
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    locked.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.BestAvailableEncryption(b"secret")))
    missing = folder / "missing.pem"
    return [
        (["--cert", str(chain_file)], "--cert and --key go together"),
        (["--key", str(key_file)], "--cert and --key go together"),
        (["--cert", str(missing), "--key", str(key_file)], f"--cert: cannot read '{missing}' (No such file"),
        (["--cert", str(chain_file), "--key", str(missing)], f"--key: cannot read '{missing}' (No such file"),
        (["--cert", str(garbage), "--key", str(key_file)], f"--cert: '{garbage}' is not a PEM certificate"),
        (["--cert", str(chain_file), "--key", str(garbage)], f"--key: '{garbage}' is not a PEM private key"),
        (["--cert", str(chain_file), "--key", str(other_key)],
         f"--key: '{other_key}' is not the private key of the certificate '{chain_file}'"),
        (["--cert", str(other_chain), "--key", str(key_file)],
         f"--key: '{key_file}' is not the private key of the certificate '{other_chain}'"),
        (["--cert", str(chain_file), "--key", str(locked)],
         f"--key: '{locked}' is a private key locked with a password"),
        (["--cert", str(key_file), "--key", str(chain_file)], f"--cert: '{key_file}' is not a PEM certificate"),
    ]


def test_a_certificate_or_key_that_cannot_be_served_is_one_sentence_naming_its_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for flags, said in bad_pairs(tmp_path):
        status, out, err = run_main(capsys, "web", *flags, "--no-scores", "--port", "0")
        assert_one_line_error(status, err)
        assert out == "" and err.startswith(f"noughts: {said}"), (flags, err)


def test_a_data_folder_that_cannot_be_written_is_one_sentence(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocked))
    status, _, err = run_main(capsys, "web", "--tls", "--no-scores", "--port", "0")
    assert_one_line_error(status, err, "cannot keep the HTTPS certificate in", str(blocked))


# the page in a real browser: a secure page, its websocket wss ----------------------------------
def test_in_a_browser_the_page_on_a_network_address_is_secure_and_its_websocket_is_wss(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    from noughts import players
    from noughts.web import running
    from noughts.web.share import lan_address
    from test_web_browser import CHROMIUM_ARGS, chromium_path

    lan = lan_address()
    assert lan is not None, "this test opens the page by the machine's network address, as a phone does"
    shown = f"[{lan}]" if ":" in lan else lan
    certificate = tls.self_signed("0.0.0.0", tmp_path)
    with running(host="0.0.0.0", tls=certificate, db=str(tmp_path / "noughts.db"), notify=lambda line: None) as base, \
            sync_playwright() as playwright:
        address = f"https://{shown}:{base.rsplit(':', 1)[1]}/"
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:  # the person accepted the certificate's warning
            page = browser.new_context(ignore_https_errors=True).new_page()
            sockets: list[str] = []
            page.on("websocket", lambda ws: sockets.append(ws.url))
            page.goto(address)
            expect(page.locator("#opponent option")).to_have_count(len(players.names()))  # the welcome came
            assert page.evaluate("window.isSecureContext && !!navigator.mediaDevices")  # the camera can be asked for
            assert sockets == [f"wss://{shown}:{base.rsplit(':', 1)[1]}/ws"]
        finally:
            browser.close()
