"""The link a friend is sent, and its QR code: an address that works from another device.

A server listening on every interface (``--host 0.0.0.0`` or ``::``) is reached by friends
through the machine's address on the local network, not through the ``127.0.0.1`` the person
may have typed; ``noughts web --public-url URL`` names the address outright (a proxy, a
domain). A server listening on loopback only can be reached from this machine alone, and the
page says so instead of offering a link that cannot work elsewhere.

>>> share = Share(listen_host="127.0.0.1")
>>> share.link("K7M2QXAB9CDE", "127.0.0.1:8000", "http")
('http://127.0.0.1:8000/r/K7M2QXAB9CDE', 'machine')
>>> Share(public_url="https://play.example.org/").link("K7M2QXAB9CDE", "127.0.0.1:8000", "http")
('https://play.example.org/r/K7M2QXAB9CDE', 'network')
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from noughts.errors import NoughtsError, SettingError

__all__ = ["Share", "check_public_url", "is_loopback", "lan_address", "lan_addresses", "qr_svg"]

WILDCARDS = ("0.0.0.0", "::", "", "[::]")
# Connecting a UDP socket sends nothing: it only asks the kernel which interface and address
# would carry packets there. Private addresses, so the answer is the local network's interface.
_PROBES = (("10.255.255.255", socket.AF_INET), ("192.168.255.255", socket.AF_INET),
           ("172.31.255.255", socket.AF_INET), ("fd00::1", socket.AF_INET6))


def lan_address() -> str | None:
    """This machine's address on its local network (no packet is sent), or None without one."""
    addresses = lan_addresses()
    return addresses[0] if addresses else None


def lan_addresses() -> list[str]:
    """Every address of this machine on its local networks, the one friends are sent first (no
    packet is sent); the HTTPS certificate of ``noughts web --tls`` names them all."""
    found: list[str] = []
    for target, family in _PROBES:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))
                address = str(probe.getsockname()[0])
        except OSError:
            continue
        if _usable(address) and address not in found:
            found.append(address)
    if found:
        return found
    try:  # no route to a private network: any address the host name resolves to that is not loopback
        for info in socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_DGRAM):
            address = str(info[4][0])
            if _usable(address) and address not in found:
                found.append(address)
    except OSError:
        pass
    return found


def _usable(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast)


def is_loopback(host: str) -> bool:
    """``localhost``, ``127.x.x.x`` or ``::1`` (a Host header's host part, brackets allowed)."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_public_url(url: str) -> str:
    """The address friends are sent: an http(s) address with a host, without the trailing slash."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        takes = "an address like http://192.168.1.20:8000 or https://games.example.org"
        raise SettingError(f"the public URL is {takes}, not {url[:60]!r}", setting="public_url", takes=takes,
                           shown=repr(url[:60]))
    return url.strip().rstrip("/")


def _split_host(host_header: str) -> tuple[str, str]:
    """('192.168.1.20', ':8000') from '192.168.1.20:8000'; IPv6 in brackets."""
    if host_header.startswith("["):
        name, _, rest = host_header[1:].partition("]")
        return name, rest
    name, colon, port = host_header.partition(":")
    return name, colon + port


class Share:
    """How this server is reached: ``public_url`` if configured, else from where it listens."""

    def __init__(self, public_url: str | None = None, listen_host: str = "127.0.0.1") -> None:
        self.public_url = public_url.rstrip("/") if public_url else None
        self.listen_host = listen_host
        self._lan: tuple[str | None] | None = None  # found once, when first needed

    def lan(self) -> str | None:
        if self._lan is None:
            self._lan = (lan_address(),)
        return self._lan[0]

    def base(self, host_header: str, scheme: str = "http") -> tuple[str, str]:
        """The address to give friends and how far it reaches: ``'network'`` or ``'machine'`` (this one only)."""
        if self.public_url:
            return self.public_url, "network"
        scheme = "https" if scheme in ("https", "wss") else "http"
        name, port = _split_host(host_header or "127.0.0.1")
        if not is_loopback(name) and name not in WILDCARDS:
            return f"{scheme}://{host_header}", "network"  # the page came by a name or address others can use
        if self.listen_host in WILDCARDS:
            lan = self.lan()
            if lan is not None:
                shown = f"[{lan}]" if ":" in lan else lan
                return f"{scheme}://{shown}{port}", "network"
        elif not is_loopback(self.listen_host):
            shown = f"[{self.listen_host}]" if ":" in self.listen_host else self.listen_host
            return f"{scheme}://{shown}{port}", "network"
        return f"{scheme}://{host_header or '127.0.0.1'}", "machine"

    def link(self, code: str, host_header: str, scheme: str = "http") -> tuple[str, str]:
        """The full link to game ``code`` and how far it reaches (see :meth:`base`)."""
        base, reach = self.base(host_header, scheme)
        return f"{base}/r/{code}", reach


def qr_svg(text: str) -> str:
    """A QR code of ``text`` as SVG (dark modules on white, a quiet zone around), for phones to scan."""
    try:
        import segno
    except ImportError:
        raise NoughtsError("the QR code needs segno: pip install 'noughts[web]'") from None
    import io

    code = segno.make(text, error="m", micro=False)
    out = io.BytesIO()
    code.save(out, kind="svg", scale=1, border=4, dark="#1d2433", light="#ffffff", xmldecl=False,
              svgns=True, title="QR code of the link", nl=False, unit=None, omitsize=True)
    return out.getvalue().decode("utf-8")
