"""HTTPS for ``noughts web``: a phone's browser lends a page its camera only over HTTPS (or on
localhost), and ``http://192.168.…`` is neither.

``--tls`` makes a self-signed certificate once and keeps it with its key in the data folder
(``~/.local/share/noughts/web-tls``; the key readable by its owner alone). It names every address
a phone may use: ``localhost``, the host name (and ``NAME.local``), 127.0.0.1, ::1, the listening
address and the machine's addresses on its local networks as friend links find them
(:func:`noughts.web.share.lan_addresses`). A later start reuses it while it covers them all and has
a month left; otherwise (a new network, a new address) a new one is made. It cannot sign other
certificates (``CA:FALSE``), so a person who trusts it on a phone trusts nothing else with it.

``--cert FILE --key FILE`` take a real certificate and its key instead, checked here so that a
wrong file is one sentence at start, not a traceback from every worker.

``cryptography`` is imported only when a certificate is asked for.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import ipaddress
import os
import re
import socket
import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noughts import text
from noughts.errors import NoughtsError, SettingError

if TYPE_CHECKING:
    from cryptography import x509

__all__ = ["Certificate", "own_certificate", "self_signed", "wanted_names"]

FOLDER = "web-tls"  # in the data folder (noughts.paths.data_path)
CERT_FILE = "cert.pem"
KEY_FILE = "key.pem"
VALID_DAYS = 825  # the longest Apple's devices accept for a certificate a person trusts
RENEW_DAYS = 30  # a kept certificate with less left is made again
_DNS_NAME = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")


@dataclasses.dataclass(frozen=True)
class Certificate:
    """A certificate and key on disk, for uvicorn's ``ssl_certfile`` and ``ssl_keyfile``."""

    cert_file: Path
    key_file: Path
    fingerprint: str  # SHA-256 of the certificate, as a phone shows it: "AB:CD:…"
    made: bool = False  # made by this start (``--tls``), not kept from an earlier one


def wanted_names(listen_host: str = "127.0.0.1") -> tuple[list[str], list[str]]:
    """The host names and the addresses a server listening on ``listen_host`` is reached by.

    >>> names, addresses = wanted_names("127.0.0.1")
    >>> names[0], addresses[:2]
    ('localhost', ['127.0.0.1', '::1'])
    """
    from noughts.web.share import WILDCARDS, lan_addresses

    names = ["localhost"]
    addresses = ["127.0.0.1", "::1"]
    host = listen_host.strip("[]").lower()
    hostname = socket.gethostname().lower()
    for name in (hostname, f"{hostname}.local" if "." not in hostname else "", host):
        if name and name not in names and _DNS_NAME.match(name) and not _is_address(name):
            names.append(name)
    for address in (host, *lan_addresses()):
        if address not in WILDCARDS and _is_address(address):
            shown = str(ipaddress.ip_address(address.split("%")[0]))
            if shown not in addresses:
                addresses.append(shown)
    return names, addresses


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("%")[0])
    except ValueError:
        return False
    return True


def _need_cryptography() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise NoughtsError(text.WEB_TLS_NEEDS_CRYPTOGRAPHY) from None


def _fingerprint(certificate: x509.Certificate) -> str:
    from cryptography.hazmat.primitives import hashes

    return certificate.fingerprint(hashes.SHA256()).hex(":").upper()


# --tls: made once and kept ---------------------------------------------------------------------
def self_signed(listen_host: str = "127.0.0.1", folder: Path | None = None, *,
                now: datetime.datetime | None = None) -> Certificate:
    """The kept self-signed certificate if it still covers every name of :func:`wanted_names`,
    else a new one, written to ``folder`` (default: the data folder's ``web-tls``)."""
    _need_cryptography()
    if folder is None:
        from noughts.paths import data_path

        folder = data_path(FOLDER)
    now = now or datetime.datetime.now(datetime.UTC)
    names, addresses = wanted_names(listen_host)
    kept = _kept(folder, names, addresses, now)
    return kept if kept is not None else _make(folder, names, addresses, now)


def _kept(folder: Path, names: list[str], addresses: list[str], now: datetime.datetime) -> Certificate | None:
    """The certificate in ``folder``, if it and its key are there, belong together, are in date and
    cover ``names`` and ``addresses``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert_file, key_file = folder / CERT_FILE, folder / KEY_FILE
    try:
        certificate = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        covered = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, TypeError, x509.ExtensionNotFound):
        return None  # none yet, or damaged: made again
    if key.public_key() != certificate.public_key() or (key_file.stat().st_mode & 0o077):
        return None  # apart, or a key others could have read: a new pair

    if not certificate.not_valid_before_utc <= now <= certificate.not_valid_after_utc - datetime.timedelta(RENEW_DAYS):
        return None
    has_names = set(covered.get_values_for_type(x509.DNSName))
    has_addresses = {str(address) for address in covered.get_values_for_type(x509.IPAddress)}
    if not (set(names) <= has_names and set(addresses) <= has_addresses):
        return None  # a new network or a new name since it was made
    return Certificate(cert_file, key_file, _fingerprint(certificate))


def _make(folder: Path, names: list[str], addresses: list[str], now: datetime.datetime) -> Certificate:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"noughts web on {socket.gethostname()}"[:64])])
    alternatives: list[x509.GeneralName] = [x509.DNSName(name) for name in names]
    alternatives += [x509.IPAddress(ipaddress.ip_address(address)) for address in addresses]
    certificate = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))  # a phone whose clock is a little behind
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    cert_file, key_file = folder / CERT_FILE, folder / KEY_FILE
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write(key_file, key_pem, 0o600)  # the key first: a certificate never names a key not yet written
        _write(cert_file, certificate.public_bytes(serialization.Encoding.PEM), 0o644)
    except OSError as error:
        raise NoughtsError(text.web_tls_cannot_keep(str(folder), error.strerror or str(error))) from None
    return Certificate(cert_file, key_file, _fingerprint(certificate), made=True)


def _write(path: Path, data: bytes, mode: int) -> None:
    """``data`` in ``path`` whole or not at all, with ``mode`` from the start (never readable by
    others for a moment, whatever the umask)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(descriptor, "wb") as out:
            os.fchmod(out.fileno(), mode)  # O_CREAT's mode is narrowed by the umask; an old file kept its own
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise


# --cert and --key: a real certificate ----------------------------------------------------------
def own_certificate(cert_file: str | os.PathLike[str], key_file: str | os.PathLike[str]) -> Certificate:
    """A certificate and its private key as given, checked: a SettingError (``cert`` or ``key``)
    saying which file is wrong and how."""
    _need_cryptography()
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    cert_path, key_path = Path(cert_file).expanduser(), Path(key_file).expanduser()
    cert_data = _read(cert_path, "cert")
    key_data = _read(key_path, "key")
    try:
        chain = x509.load_pem_x509_certificates(cert_data)
    except ValueError:
        raise SettingError(text.web_tls_not_a_certificate(str(cert_path)), setting="cert") from None
    try:
        key: Any = serialization.load_pem_private_key(key_data, password=None)
    except TypeError:  # it wants a password
        raise SettingError(text.web_tls_key_encrypted(str(key_path)), setting="key") from None
    except (ValueError, UnsupportedAlgorithm):
        raise SettingError(text.web_tls_not_a_key(str(key_path)), setting="key") from None
    if key.public_key() != chain[0].public_key():
        raise SettingError(text.web_tls_key_mismatch(str(key_path), str(cert_path)), setting="key")
    try:  # what uvicorn will do with them: a key type TLS cannot use is said now, once
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert_path, key_path)
    except (ssl.SSLError, OSError) as error:
        reason = getattr(error, "reason", None) or str(error)
        raise SettingError(text.web_tls_refused(str(cert_path), str(reason)), setting="cert") from None
    return Certificate(cert_path, key_path, _fingerprint(chain[0]))


def _read(path: Path, setting: str) -> bytes:
    try:
        with path.open("rb") as file:
            return file.read(1 << 20)  # a certificate chain is a few kilobytes
    except OSError as error:
        raise SettingError(text.web_tls_unreadable(str(path), error.strerror or str(error)),
                           setting=setting) from None
