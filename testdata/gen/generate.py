#!/usr/bin/env python3
"""Generate the CAPRKE2 bootstrap-Secret test fixtures of rke2-payload.

Run from anywhere:  python3 testdata/gen/generate.py

Outputs (all under testdata/):
  secrets/*.yaml|*.json   Secrets shaped like `kubectl get secret -o yaml|json` prints them
  secrets/*.userdata      the exact user data each Secret decodes to
  secrets/INDEX.json      machine-readable facts about every fixture, computed from the
                          generator's own inputs (independent of the Rust decoder)
  bad/*                   malformed inputs the decoder must reject cleanly
  manifests/*.yaml        the Cluster API objects (and Secrets) CAPRKE2 renders each fixture from
  manifests/INDEX.json    which manifest gives which user data, and where a render may differ
  README.md               one line per fixture

Requirements: Python 3.11, the standard library and `cryptography` (only used to create
the fake CA key material the first time; the result is cached in gen/keys/).

Everything is deterministic.  The only random input is the key material, which is
created once and then reused from gen/keys/, so re-running gives byte-identical files.

The user-data text is rendered by hand so that it has the same bytes as the Go
text/template output of CAPRKE2 v0.25.0 (cloud-config) and the same JSON shape as the
Butane -> Ignition 3.3.0 output (Ignition).  The `*-main-branch` variants follow CAPRKE2's
`main` branch instead (commit c8a3286a): the `ingress-controller` key of config.yaml, the
traefik components in `disable`, and `dbus.service` in the Ignition install unit.  gzip streams come from Python's zlib, so
their bytes differ from Go's compress/flate; only the decompressed content is meant to
match.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import json
import re
import shutil
import struct
import sys
import unicodedata
import urllib.parse
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path

TESTDATA = Path(__file__).resolve().parent.parent
GEN = TESTDATA / "gen"
KEYS = GEN / "keys"
SECRETS = TESTDATA / "secrets"
BAD = TESTDATA / "bad"

# --------------------------------------------------------------------------------------
# Cluster-wide inputs
# --------------------------------------------------------------------------------------

CLUSTER = "demo"
NAMESPACE = "default"
VERSION = "v1.32.5+rke2r1"
TOKEN = hashlib.sha256(b"rke2-payload fixture join token for cluster demo").hexdigest()[:32]
ENDPOINT_HOST = "demo-apiserver.example.internal"
TLS_SAN = ["demo.example.com", ENDPOINT_HOST]  # endpoint host is always appended last
SERVER_IPV4 = "https://10.0.1.10:9345"
SERVER_IPV6 = "https://[fd00::a]:9345"
AIRGAP_CHECKSUM = hashlib.sha256(b"rke2-payload fixture airgap artifacts").hexdigest()
CP_PRE_COMMANDS = ["sysctl --system", "swapoff -a"]
POST_COMMAND = 'echo "rke2 bootstrap finished on $(hostname)" >> /var/log/caprke2-post.log'
# extra post commands of init-cloud-config-extras: a backslash + single quotes, and a
# printable non-ASCII character (Go %q keeps it as is)
EXTRA_POST_COMMANDS = [
    "printf 'rke2\\tready\\n' > /run/caprke2.ready",
    'logger -t caprke2 "init done \u2713"',
]
NTP_SERVERS = ["0.pool.ntp.org", "time.example.internal"]
CIS_PROFILE = "cis"
BASE_TIME = dt.datetime(2026, 1, 1, 0, 0, 0, tzinfo=dt.timezone.utc)
UUID_NS = uuid.UUID("6b1f4c1e-2f7a-4d0e-9a51-7c2d0f3e8a10")

OWNER = "root:root"

# spec.files entry present in every variant: exactly 50 bytes
SYSCTL_FILE = ("/etc/sysctl.d/90-rke2.conf", "net.ipv4.ip_forward = 1\nvm.max_map_count = 262144\n", "0644")
assert len(SYSCTL_FILE[1]) == 50

CA_PURPOSES = [
    # (Secret suffix, cert path, key path)
    ("ca", "/var/lib/rancher/rke2/server/tls/server-ca.crt", "/var/lib/rancher/rke2/server/tls/server-ca.key"),
    ("cca", "/var/lib/rancher/rke2/server/tls/client-ca.crt", "/var/lib/rancher/rke2/server/tls/client-ca.key"),
    ("peer-etcd", "/var/lib/rancher/rke2/server/tls/etcd/peer-ca.crt", "/var/lib/rancher/rke2/server/tls/etcd/peer-ca.key"),
    ("etcd", "/var/lib/rancher/rke2/server/tls/etcd/server-ca.crt", "/var/lib/rancher/rke2/server/tls/etcd/server-ca.key"),
]

REGISTRY_HOST = "registry.example.internal:5000"
REGISTRY_USER = "robot$ci"
REGISTRY_PASSWORD = "fixture-only-registry-password"
S3_ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
S3_SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
ENCRYPTION_KEY = hashlib.sha256(b"rke2-payload fixture secretbox key").digest()  # 32 bytes

# A stand-in for the CIS node preparation script (not upstream's text): the same one the
# renderer writes (crates/payload-preview/src/render/cis.rs), of upstream's length (1,131 bytes),
# with tab characters like the real one.
CIS_SCRIPT = (
    '#!/bin/bash\n'
    '# CIS node preparation (stand-in written by rke2-payload for previews: CAPRKE2 writes its own\n'
    '# script here; this one does the same steps and has the same size, so sizes are real).\n'
    'set -e\n'
    '\n'
    'if id etcd >/dev/null 2>&1; then\n'
    "\techo 'etcd user is present'\n"
    'else\n'
    '\tuseradd -r -c "etcd user" -s /sbin/nologin -M etcd -U\n'
    'fi\n'
    '\n'
    'found=false\n'
    'for conf in /usr/share/rke2/rke2-cis-sysctl.conf \\\n'
    '\t/usr/local/share/rke2/rke2-cis-sysctl.conf \\\n'
    '\t/opt/rke2/share/rke2/rke2-cis-sysctl.conf; do\n'
    '\tif [ -f "$conf" ]; then\n'
    '\t\tfound=true\n'
    '\t\tcp -f "$conf" /etc/sysctl.d/90-rke2-cis.conf\n'
    '\tfi\n'
    'done\n'
    '\n'
    'if [ "$found" = false ]; then\n'
    "\techo 'no RKE2 CIS kernel parameters file was found'\n"
    '\texit 1\n'
    'fi\n'
    '\n'
    'sysctl -p /etc/sysctl.d/90-rke2-cis.conf\n'
    '#--------------------------------------------------------------------\n'
    '#--------------------------------------------------------------------\n'
    '#--------------------------------------------------------------------\n'
    '#--------------------------------------------------------------------\n'
    '#--------------------------------------------------------------------\n'
    '#-----------------------------------------------------------------\n'
)
assert len(CIS_SCRIPT) == 1131


SSHD_SNIPPET = (
    "# Use most defaults for sshd configuration.\n"
    "Subsystem sftp internal-sftp\n"
    "ClientAliveInterval 180\n"
    "UseDNS no\n"
    "UsePAM yes\n"
    "PrintLastLog no # handled by PAM\n"
    "PrintMotd no # handled by PAM\n"
)

RKE2_INSTALL_UNIT = (
    "[Unit]\n"
    "Description=rke2-install\n"
    "Wants=network-online.target\n"
    "After=network-online.target network.target\n"
    "ConditionPathExists=!/etc/cluster-api/bootstrap-success.complete\n"
    "[Service]\n"
    "User=root\n"
    "# To not restart the unit when it exits, as it is expected.\n"
    "Type=oneshot\n"
    "ExecStart=/etc/rke2-install.sh\n"
    "[Install]\n"
    "WantedBy=multi-user.target\n"
)

# The same unit on CAPRKE2's main branch (bootstrap/internal/ignition/butane/butane.go after
# v0.25.0): the install waits for D-Bus too.
RKE2_INSTALL_UNIT_MAIN = RKE2_INSTALL_UNIT.replace(
    "Wants=network-online.target\n", "Wants=network-online.target dbus.service\n").replace(
    "After=network-online.target network.target\n", "After=network-online.target network.target dbus.service\n")
assert RKE2_INSTALL_UNIT_MAIN.count("dbus.service") == 2

CHRONY_TAIL = (
    "driftfile /var/lib/chrony/drift\n"
    "makestep 1.0 3\n"
    "rtcsync\n"
    "ntsdumpdir /var/lib/chrony\n"
    "logdir /var/log/chrony\n"
    "include /etc/chrony.d/*.conf\n"
    "sourcedir /run/chrony-dhcp\n"
)

CLOUD_CONFIG_HEADER = "## template: jinja\n#cloud-config\n"
SENTINEL = "echo success > /run/cluster-api/bootstrap-success.complete"
ARTIFACTS_CHECK = "[[ $(sha256sum /opt/rke2-artifacts/sha256sum*.txt | awk '{print $1}') == {} ]] || exit 1"

# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def gz(data: bytes, level: int) -> bytes:
    """gzip with mtime 0 and Go's header (OS byte 0xff "unknown"; XFL 2 at level 9, else 0).

    Only the header matches Go; the deflate stream itself differs from compress/flate."""
    out = bytearray(gzip.compress(data, compresslevel=level, mtime=0))
    assert out[:4] == b"\x1f\x8b\x08\x00" and out[8] == (2 if level == 9 else 0)
    out[9] = 0xFF
    return bytes(out)


def clip(text: str) -> str:
    """YAML literal block with clip chomping: non-empty content ends in exactly one \\n."""
    stripped = text.rstrip("\n")
    return stripped + "\n" if stripped else ""


def stable_pick(seed: str, alphabet: str, n: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:n])


NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery SimpleNameGenerator alphabet


def go_quote(s: str) -> str:
    """Go's strconv.Quote (%q) for valid UTF-8 strings."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\a":
            out.append("\\a")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\v":
            out.append("\\v")
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        elif o < 0x80:
            out.append(ch)
        else:
            cat = unicodedata.category(ch)
            printable = not (cat.startswith("C") or cat.startswith("Z"))
            if printable:
                out.append(ch)
            elif o <= 0xFFFF:
                out.append("\\u%04x" % o)
            else:
                out.append("\\U%08x" % o)
    out.append('"')
    return "".join(out)


def go_json(obj, indent: int | None = None) -> str:
    """encoding/json output: compact (or MarshalIndent), HTML-safe escaping of < > &."""
    if indent is None:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(obj, ensure_ascii=False, indent=indent)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# ---- YAML scalar styles as emitted by go-yaml (v2 via sigs.k8s.io/yaml, and v3) ----------

_YAML_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*|0[0-7_]+|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+)$")
_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_YAML_SPECIAL_FLOAT = re.compile(r"^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$")
_YAML_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
_YAML_TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?$")
_YAML_BOOL_NULL = {"true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~", ""}
_YAML_OLD_BOOL = {
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
    "on", "On", "ON", "off", "Off", "OFF",
}


def _resolves_to_non_string(s: str) -> bool:
    return bool(
        s in _YAML_BOOL_NULL
        or s in _YAML_OLD_BOOL
        or _YAML_INT.match(s)
        or _YAML_FLOAT.match(s)
        or _YAML_SPECIAL_FLOAT.match(s)
        or _YAML_BASE60.match(s)
        or _YAML_TIMESTAMP.match(s)
    )


def _plain_allowed(s: str) -> bool:
    # libyaml emitter analysis, block context, for the single-line strings used here
    if s == "" or s != s.strip(" ") or "\n" in s or "\t" in s:
        return False
    if s[0] in "-?:,[]{}#&*!|>'\"%@`" and not (s[0] in "-?:" and len(s) > 1 and s[1] != " "):
        return False
    if ": " in s or " #" in s or s.endswith(":"):
        return False
    return all(0x20 <= ord(c) < 0x7F or ord(c) > 0xA0 for c in s)


def yaml_scalar(s: str) -> str:
    """Style chosen by go-yaml for a string value (single line only)."""
    assert "\n" not in s, s
    if _resolves_to_non_string(s):
        return go_quote(s)  # double quoted (ASCII inputs only, so Go and YAML escapes agree)
    if _plain_allowed(s):
        return s
    if all(0x20 <= ord(c) < 0x7F for c in s):
        return "'" + s.replace("'", "''") + "'"
    return go_quote(s)


# ---- A YAML subset read and written with yaml.v3 semantics ------------------------------
# CAPRKE2 re-encodes user-written YAML in two places: the webhook's CorrectArbitraryData
# (additionalUserData.data values) and cloudinit's cleanupAdditionalCloudInit
# (additionalUserData.config).  Both Unmarshal with gopkg.in/yaml.v3 into interface{} and
# Encode with SetIndent(2).  Only the shapes the fixtures use are supported: block mappings
# and sequences, flow collections on one line, plain / quoted scalars on one line, literal
# block scalars, comment lines.  Anything else raises, so a new input cannot be silently
# mis-rendered.


class YamlSubsetError(ValueError):
    pass


_V3_NULL = {"", "~", "null", "Null", "NULL"}
_V3_TRUE = {"true", "True", "TRUE"}
_V3_FALSE = {"false", "False", "FALSE"}


def _v3_resolve_plain(s: str):
    """What yaml.v3 decodes a plain scalar into (interface{} target)."""
    if s in _V3_NULL:
        return None
    if s in _V3_TRUE:
        return True
    if s in _V3_FALSE:
        return False
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", s):
        return int(s)
    if (_YAML_INT.match(s) or _YAML_FLOAT.match(s) or _YAML_SPECIAL_FLOAT.match(s)
            or _YAML_TIMESTAMP.match(s)):
        raise YamlSubsetError(f"numeric/timestamp plain scalar not supported: {s!r}")
    if s[0] in "&*!|>%@`":
        raise YamlSubsetError(f"anchors, aliases, tags and reserved indicators not supported: {s!r}")
    return s


def _strip_comment(s: str) -> str:
    """Plain text up to an inline comment (' #'), trailing spaces removed."""
    pos = s.find(" #")
    if pos >= 0:
        s = s[:pos]
    return s.rstrip(" ")


def _quoted(s: str, pos: int) -> tuple[str, int]:
    """A quoted scalar starting at s[pos]; returns (value, index after the closing quote)."""
    q = s[pos]
    out = []
    i = pos + 1
    while i < len(s):
        c = s[i]
        if q == "'":
            if c == "'":
                if s[i + 1:i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                return "".join(out), i + 1
            out.append(c)
        else:
            if c == '"':
                return "".join(out), i + 1
            if c == "\\":
                esc = s[i + 1:i + 2]
                simple = {"\\": "\\", '"': '"', "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0", " ": " "}
                if esc in simple:
                    out.append(simple[esc])
                    i += 2
                    continue
                if esc == "u":
                    out.append(chr(int(s[i + 2:i + 6], 16)))
                    i += 6
                    continue
                raise YamlSubsetError(f"escape not supported: \\{esc}")
            out.append(c)
        i += 1
    raise YamlSubsetError(f"unterminated quoted scalar: {s!r}")


def _flow(s: str, pos: int):
    """A flow collection or scalar starting at s[pos]; returns (value, next index)."""
    while pos < len(s) and s[pos] == " ":
        pos += 1
    c = s[pos]
    if c in "[{":
        close = "]" if c == "[" else "}"
        items: list = [] if c == "[" else {}
        pos += 1
        while True:
            while s[pos] == " ":
                pos += 1
            if s[pos] == close:
                return items, pos + 1
            if c == "[":
                val, pos = _flow(s, pos)
                items.append(val)
            else:
                key, pos = _flow(s, pos)
                while s[pos] == " ":
                    pos += 1
                if s[pos] != ":":
                    raise YamlSubsetError(f"flow mapping entry without ':' in {s!r}")
                val, pos = _flow(s, pos + 1)
                if not isinstance(key, str) or key in items:
                    raise YamlSubsetError(f"bad or duplicate key {key!r}")
                items[key] = val
            while s[pos] == " ":
                pos += 1
            if s[pos] == ",":
                pos += 1
            elif s[pos] != close:
                raise YamlSubsetError(f"expected ',' or {close!r} in {s!r}")
    if c in "'\"":
        return _quoted(s, pos)
    end = pos
    while end < len(s) and s[end] not in ",]}" and not (s[end] == ":" and s[end + 1:end + 2] in (" ", "")):
        end += 1
    return _v3_resolve_plain(s[pos:end].rstrip(" ")), end


def _inline_value(text: str):
    """A value written on the same line as its key or dash (not a block scalar)."""
    if text[0] in "[{":
        val, end = _flow(text, 0)
    elif text[0] in "'\"":
        val, end = _quoted(text, 0)
    else:
        return _v3_resolve_plain(_strip_comment(text))
    if _strip_comment(text[end:]):
        raise YamlSubsetError(f"text after a value: {text!r}")
    return val


def _key_split(text: str) -> tuple[str, str] | None:
    """('key', 'rest') if the line holds a mapping entry, else None."""
    if text[0] in "'\"":
        key, end = _quoted(text, 0)
        if text[end:end + 1] == ":" and text[end + 1:end + 2] in (" ", ""):
            return key, text[end + 1:].lstrip(" ")
        return None
    if text[0] in "[{":
        return None
    body = _strip_comment(text)
    m = re.search(r":( |$)", body)
    if not m:
        return None
    return body[:m.start()], text[m.end():].lstrip(" ")


class _YamlReader:
    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.i = 0

    def peek(self) -> tuple[int, str] | None:
        while self.i < len(self.lines):
            raw = self.lines[self.i]
            s = raw.lstrip(" ")
            if s == "" or s.startswith("#"):
                self.i += 1
                continue
            if s.startswith("\t"):
                raise YamlSubsetError(f"tab indentation at line {self.i + 1}")
            if s.startswith("---") or s.startswith("..."):
                raise YamlSubsetError("document markers not supported")
            return len(raw) - len(s), s
        return None

    def document(self):
        nxt = self.peek()
        if nxt is None:
            return None
        val = self.node(nxt[0])
        if self.peek() is not None:
            raise YamlSubsetError(f"unexpected text at line {self.i + 1}: {self.lines[self.i]!r}")
        return val

    def node(self, indent: int):
        ind, s = self.peek()
        if ind != indent:
            raise YamlSubsetError(f"bad indentation at line {self.i + 1}")
        if s == "-" or s.startswith("- "):
            return self.sequence(indent)
        if _key_split(s) is not None:
            return self.mapping(indent)
        self.i += 1
        val = _inline_value(s)
        self.no_continuation(indent)
        return val

    def no_continuation(self, indent: int) -> None:
        nxt = self.peek()
        if nxt is not None and nxt[0] > indent:
            raise YamlSubsetError(f"multi-line plain scalar at line {self.i + 1} not supported")

    def value_after(self, rest: str, indent: int, seq_ok: bool):
        """The value of a key (or dash) whose own line ends with `rest`."""
        if rest.startswith("|"):
            return self.literal(rest, indent)
        if rest.startswith(">"):
            raise YamlSubsetError("folded block scalars not supported")
        if _strip_comment(rest) == "":
            nxt = self.peek()
            if nxt is not None and nxt[0] > indent:
                return self.node(nxt[0])
            if seq_ok and nxt is not None and nxt[0] == indent and (nxt[1] == "-" or nxt[1].startswith("- ")):
                return self.sequence(indent)
            return None
        val = _inline_value(rest)
        self.no_continuation(indent)
        return val

    def mapping(self, indent: int) -> dict:
        out: dict = {}
        while True:
            nxt = self.peek()
            if nxt is None or nxt[0] < indent:
                return out
            ind, s = nxt
            split = _key_split(s) if ind == indent else None
            if split is None:
                raise YamlSubsetError(f"expected a mapping entry at line {self.i + 1}: {s!r}")
            key, rest = split
            key = key if s[0] in "'\"" else _v3_resolve_plain(key)
            if not isinstance(key, str) or key in out:
                raise YamlSubsetError(f"bad or duplicate key {key!r}")
            self.i += 1
            out[key] = self.value_after(rest, indent, seq_ok=True)

    def sequence(self, indent: int) -> list:
        out: list = []
        while True:
            nxt = self.peek()
            if nxt is None or nxt[0] < indent:
                return out
            ind, s = nxt
            if ind != indent or not (s == "-" or s.startswith("- ")):
                if ind == indent:
                    return out  # a sibling key of a same-indent sequence
                raise YamlSubsetError(f"bad sequence item at line {self.i + 1}: {s!r}")
            body = s[1:].lstrip(" ")
            if body.startswith("- "):
                raise YamlSubsetError("nested inline sequences not supported")
            col = indent + (len(s) - len(body))
            if body and _key_split(body) is not None:
                # "-   key: value": a mapping whose keys sit at the column of `key`
                self.lines[self.i] = " " * col + body
                out.append(self.mapping(col))
                continue
            self.i += 1
            out.append(self.value_after(body, indent, seq_ok=False))

    def literal(self, header: str, indent: int) -> str:
        m = re.fullmatch(r"\|([1-9]?)([-+]?)|\|([-+])([1-9])", _strip_comment(header))
        if not m:
            raise YamlSubsetError(f"block scalar header not supported: {header!r}")
        explicit = m.group(1) or m.group(4)
        chomp = m.group(2) or m.group(3) or ""
        lines: list[str] = []
        content_indent = indent + int(explicit) if explicit else None
        while self.i < len(self.lines):
            raw = self.lines[self.i]
            stripped = raw.lstrip(" ")
            lead = len(raw) - len(stripped)
            if stripped == "" and (content_indent is None or lead <= content_indent):
                lines.append("")  # an empty line (at most the indentation in spaces)
            elif content_indent is None and lead > indent:
                content_indent = lead
                lines.append(raw[lead:])
            elif content_indent is not None and lead >= content_indent:
                lines.append(raw[content_indent:])
            else:
                break
            self.i += 1
        if chomp != "+":
            while lines and lines[-1] == "":
                lines.pop()
        text = "".join(line + "\n" for line in lines)
        return text[:-1] if chomp == "-" and text else text


def yaml_v3_load(text: str):
    """yaml.v3 Unmarshal of one document into interface{} (the subset above)."""
    try:
        return _YamlReader(text).document()
    except IndexError as e:  # ran off the end of a flow collection
        raise YamlSubsetError(f"unterminated flow collection: {e}") from None


def _go_yaml_key_less(a: str, b: str) -> bool:
    """yaml.v3 keyList.Less for two string keys (digit runs compare as numbers, a
    non-letter sorts before a letter)."""
    ar, br = list(a), list(b)
    digits = False
    for i in range(min(len(ar), len(br))):
        if ar[i] == br[i]:
            digits = ar[i].isdigit()
            continue
        al, bl = ar[i].isalpha(), br[i].isalpha()
        if al and bl:
            return ar[i] < br[i]
        if al or bl:
            return al if digits else bl
        an = bn = 0
        if ar[i] == "0" or br[i] == "0":
            j = i - 1
            while j >= 0 and ar[j].isdigit():
                if ar[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(ar) and ar[ai].isdigit():
            an = an * 10 + int(ar[ai])
            ai += 1
        bi = i
        while bi < len(br) and br[bi].isdigit():
            bn = bn * 10 + int(br[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ar[i] < br[i]
    return len(ar) < len(br)


def _v3_sorted(keys) -> list[str]:
    import functools
    return sorted(keys, key=functools.cmp_to_key(
        lambda x, y: -1 if _go_yaml_key_less(x, y) else (1 if _go_yaml_key_less(y, x) else 0)))


def _v3_scalar(val) -> str:
    if isinstance(val, bool):
        return "true" if val else "false"
    if isinstance(val, int):
        return str(val)
    if val is None:
        return "null"
    if isinstance(val, str):
        if "\n" in val:
            raise YamlSubsetError("multi-line strings are not supported by the encoder")
        return yaml_scalar(val)
    raise YamlSubsetError(f"cannot encode {val!r}")


def _v3_lines(obj, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(obj, dict):
        for key in _v3_sorted(obj):
            val = obj[key]
            if isinstance(val, (dict, list)) and val:
                out.append(f"{pad}{_v3_scalar(key)}:")
                out += _v3_lines(val, indent + 2)
            elif isinstance(val, dict):
                out.append(f"{pad}{_v3_scalar(key)}: {{}}")
            elif isinstance(val, list):
                out.append(f"{pad}{_v3_scalar(key)}: []")
            else:
                out.append(f"{pad}{_v3_scalar(key)}: {_v3_scalar(val)}")
    else:
        for item in obj:
            if isinstance(item, dict) and item:
                sub = _v3_lines(item, indent + 2)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out += sub
            elif isinstance(item, list) and item:
                raise YamlSubsetError("nested sequences are not supported by the encoder")
            elif isinstance(item, dict):
                out.append(f"{pad}- {{}}")
            elif isinstance(item, list):
                out.append(f"{pad}- []")
            else:
                out.append(f"{pad}- {_v3_scalar(item)}")
    return out


def yaml_v3_dump(obj) -> str:
    """yaml.v3 Encoder with SetIndent(2) (sorted keys, sequences indented under keys)."""
    if isinstance(obj, (dict, list)) and not obj:
        return "{}\n" if isinstance(obj, dict) else "[]\n"
    if not isinstance(obj, (dict, list)):
        return _v3_scalar(obj) + "\n"
    return "\n".join(_v3_lines(obj, 0)) + "\n"


IGNORED_CLOUD_INIT_KEYS = ("runcmd", "write_files", "ntp")


def correct_arbitrary_data(data: dict[str, str]) -> dict[str, str]:
    """The webhook's CorrectArbitraryData (bootstrap/api/v1beta2/rke2config_webhook.go):
    drop runcmd/write_files/ntp; a value that is a YAML mapping becomes
    "\\n  " + its yaml.v3 re-encoding with every "\\n" followed by 2 spaces; a value that is a
    YAML sequence becomes "\\n" + its re-encoding; anything else is kept as written."""
    out = {}
    for key, value in data.items():
        if key in IGNORED_CLOUD_INIT_KEYS:
            continue
        try:
            doc = yaml_v3_load(value)
        except YamlSubsetError:
            raise  # outside the supported shapes: yaml.v3 might read it differently
        if doc is None or isinstance(doc, dict):
            out[key] = "\n  " + yaml_v3_dump(doc or {}).replace("\n", "\n  ")
        elif isinstance(doc, list):
            out[key] = "\n" + yaml_v3_dump(doc)
        else:
            out[key] = value
    return out


def cleanup_additional_cloud_init(text: str) -> str:
    """cloudinit's cleanupAdditionalCloudInit: yaml.v3 into a map, runcmd/write_files/ntp
    deleted, re-encoded (sorted keys, indent 2); an empty result gives ""."""
    doc = yaml_v3_load(text)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise YamlSubsetError("additionalUserData.config must be a mapping (CAPRKE2 fails to render)")
    doc = {k: v for k, v in doc.items() if k not in IGNORED_CLOUD_INIT_KEYS}
    res = yaml_v3_dump(doc)
    return "" if res == "{}\n" else res


# --------------------------------------------------------------------------------------
# Key material (cached in gen/keys/)
# --------------------------------------------------------------------------------------

CA_NOW = dt.datetime(2026, 1, 1, 0, 0, 0, tzinfo=dt.timezone.utc)
CA_NOT_BEFORE = CA_NOW - dt.timedelta(minutes=5)
CA_NOT_AFTER = CA_NOW + dt.timedelta(days=3650)


def _der_len(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _make_ca(cn: str):
    """Self-signed CA like cluster-api util/certs NewSelfSignedCACert (serial 0)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)  # cryptography refuses 0; patched to 0 below
        .not_valid_before(CA_NOT_BEFORE)
        .not_valid_after(CA_NOT_AFTER)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=True,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    cert = builder.sign(key, hashes.SHA256())
    tbs = cert.tbs_certificate_bytes
    # TBSCertificate ::= SEQUENCE { [0] version, serialNumber INTEGER, ... }
    marker = b"\xa0\x03\x02\x01\x02\x02\x01\x01"
    pos = tbs.find(marker)
    assert 0 < pos < 8, "unexpected TBS layout"
    tbs0 = tbs[:pos] + marker[:-1] + b"\x00" + tbs[pos + len(marker):]
    sig = key.sign(tbs0, padding.PKCS1v15(), hashes.SHA256())
    alg = bytes.fromhex("300d06092a864886f70d01010b0500")  # sha256WithRSAEncryption
    bitstr = b"\x03" + _der_len(len(sig) + 1) + b"\x00" + sig
    body = tbs0 + alg + bitstr
    der = b"\x30" + _der_len(len(body)) + body
    assert parse_certificate(der)["serial"] == 0
    key.public_key().verify(sig, tbs0, padding.PKCS1v15(), hashes.SHA256())
    body64 = b64(der)
    cert_pem = ("-----BEGIN CERTIFICATE-----\n"
                + "".join(body64[i:i + 64] + "\n" for i in range(0, len(body64), 64))
                + "-----END CERTIFICATE-----\n").encode()
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,  # PKCS#1 "RSA PRIVATE KEY"
        serialization.NoEncryption(),
    )
    return cert_pem.decode(), key_pem.decode()


def _make_registry_client():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "registry-client")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(0x5EC2E7C11E47)
        .not_valid_before(CA_NOT_BEFORE)
        .not_valid_after(CA_NOT_AFTER)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=False,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,  # SEC1 "EC PRIVATE KEY"
        serialization.NoEncryption(),
    ).decode()
    return cert_pem, key_pem


KEYS_README = """\
FAKE key material for the rke2-payload test fixtures. NOT SECRET, NOT USED ANYWHERE.

Created once by ../generate.py (cryptography) and cached here so that re-running the
generator gives byte-identical fixtures. Delete this directory to get new keys (every
fixture then changes).

  ca.*, cca.*, peer-etcd.*, etcd.*  RSA-2048 CAs, CN=kubernetes, serial 0, self-signed,
                                    PKCS#1 "RSA PRIVATE KEY" (like CAPRKE2 generates them)
  registry-client.*                 EC P-256 client cert/key (SEC1 "EC PRIVATE KEY") used as
                                    the private-registry TLS Secret
"""


def load_keys() -> dict[str, tuple[str, str]]:
    KEYS.mkdir(parents=True, exist_ok=True)
    out: dict[str, tuple[str, str]] = {}
    for name in [p[0] for p in CA_PURPOSES] + ["registry-client"]:
        crt, key = KEYS / f"{name}.crt", KEYS / f"{name}.key"
        if crt.exists() and key.exists():
            out[name] = (crt.read_text(), key.read_text())
            continue
        pair = _make_registry_client() if name == "registry-client" else _make_ca("kubernetes")
        crt.write_text(pair[0])
        key.write_text(pair[1])
        out[name] = pair
    readme = KEYS / "README"
    if not readme.exists() or readme.read_text() != KEYS_README:
        readme.write_text(KEYS_README)
    return out


# --------------------------------------------------------------------------------------
# Inputs -> BaseUserData
# --------------------------------------------------------------------------------------


@dataclass
class File:
    path: str
    content: str
    owner: str = ""
    permissions: str = ""
    encoding: str = ""


@dataclass
class Variant:
    stem: str
    role: str  # init | join | worker
    fmt: str  # cloud-config | ignition
    gzip: bool = False
    airgapped: bool = False
    declared_format: str | None = None  # defaults to fmt
    server: str = SERVER_IPV4
    checksum: str = ""
    registry: bool = False
    etcd_s3: bool = False
    encryption: bool = False
    ntp: bool = False
    cis: bool = False
    extra_files: bool = False  # base64 / gzip+base64 spec.files
    additional_raw: str = ""  # additionalUserData.config as a user writes it (cloud-config only)
    arbitrary_raw: dict = field(default_factory=dict)  # additionalUserData.data as a user writes it
    extra_post: bool = False
    version: str = VERSION  # Machine.spec.version (RCP spec.version / MachineDeployment template)
    ntp_servers: list | None = None  # None: NTP_SERVERS when ntp
    standard_inputs: bool = True  # the sysctl spec.files entry, the post command, kubelet args + labels
    upstream_case: str = ""  # the cloudinit_test.go case a variant restates
    main_branch: bool = False  # rendered as CAPRKE2's main branch renders it (not v0.25.0)
    form: str = "data"  # data | stringData
    container: str = "yaml"  # yaml | json
    description: str = ""
    # filled in by build()
    name: str = ""
    userdata: bytes = b""
    value: bytes = b""
    files: list = field(default_factory=list)
    commands: list = field(default_factory=list)
    config_yaml: str = ""
    wrapper: bool = False
    additional_config: str = ""  # additional_raw after CAPRKE2's cleanup
    arbitrary: dict = field(default_factory=dict)  # arbitrary_raw after the webhook's correction

    @property
    def is_cp(self) -> bool:
        return self.role in ("init", "join")

    @property
    def ntp_list(self) -> list[str]:
        if not self.ntp:
            return []
        return list(NTP_SERVERS if self.ntp_servers is None else self.ntp_servers)


def yaml_v3_config(pairs: list[tuple[str, object]]) -> str:
    """config.yaml as yaml.v3 (SetIndent(2)) writes the RKE2 config struct."""
    lines = []
    for key, value in pairs:
        if isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, int):
            lines.append(f"{key}: {value}")
        elif isinstance(value, list):
            lines.append(f"{key}:")
            lines.extend(f"  - {yaml_scalar(v)}" for v in value)
        else:
            lines.append(f"{key}: {yaml_scalar(value)}")
    return "\n".join(lines) + "\n"


def provider_id(v: Variant) -> str:
    return "aws:///eu-west-1a/i-0abc" + hashlib.sha256(v.stem.encode()).hexdigest()[:13]


WORKER_NODE_LABELS = ["workload=general"]


def worker_kubelet_args(v: Variant) -> list[str]:
    return [f"provider-id={provider_id(v)}", "max-pods=110", "eviction-hard=memory.available<500Mi"]


# Control-plane settings shared by every variant (RKE2ControlPlane spec.serverConfig and the
# Cluster), each with the config.yaml key it becomes.
CLOUD_PROVIDER_NAME = "external"  # serverConfig.cloudProviderName -> cloud-provider-name (all roles)
CNI = "calico"  # serverConfig.cni -> cni: [calico]
DISABLED_PLUGINS = ["rke2-ingress-nginx"]  # serverConfig.disableComponents.pluginComponents -> disable
ETCD_RETENTION = "10"  # serverConfig.etcd.backupConfig.retention -> etcd-snapshot-retention
ETCD_SCHEDULE = "*/15 * * * *"  # ...backupConfig.scheduleCron -> etcd-snapshot-schedule-cron
POD_CIDR = "10.42.0.0/16"  # Cluster spec.clusterNetwork.pods.cidrBlocks -> cluster-cidr
SERVICE_CIDR = "10.43.0.0/16"  # Cluster spec.clusterNetwork.services.cidrBlocks -> service-cidr
S3_BUCKET = "demo-etcd-snapshots"
S3_ENDPOINT = "s3.eu-west-1.amazonaws.com"
S3_FOLDER = "demo"
S3_REGION = "eu-west-1"
ENCRYPTION_PROVIDER = "secretbox"
# CAPRKE2 main only (serverConfig.ingressController, new; the traefik plugin components are new
# values of disableComponents.pluginComponents): ingress-nginx deployed, traefik disabled.
MAIN_INGRESS_CONTROLLER = ["ingress-nginx"]  # -> ingress-controller
MAIN_DISABLED_PLUGINS = ["rke2-traefik", "rke2-traefik-crd"]  # -> disable
MAIN_APISERVER_ARGS = ["audit-log-maxage=30"]  # serverConfig.kubeAPIServer.extraArgs -> kube-apiserver-arg


def config_pairs(v: Variant) -> list[tuple[str, object]]:
    agent: list[tuple[str, object]] = [("cloud-provider-name", CLOUD_PROVIDER_NAME)]
    if v.role == "worker" and v.standard_inputs:
        agent.append(("kubelet-arg", worker_kubelet_args(v)))
        agent.append(("node-label", list(WORKER_NODE_LABELS)))
    if v.cis:
        agent.append(("profile", CIS_PROFILE))
    if v.role != "init":
        agent.append(("server", v.server))
    agent.append(("token", TOKEN))
    if v.role == "worker":
        return agent
    disabled = MAIN_DISABLED_PLUGINS if v.main_branch else DISABLED_PLUGINS
    server: list[tuple[str, object]] = [("cni", [CNI]), ("disable", list(disabled))]
    if v.etcd_s3:
        server += [
            ("etcd-s3", True),
            ("etcd-s3-access-key", S3_ACCESS_KEY),
            ("etcd-s3-bucket", S3_BUCKET),
            ("etcd-s3-endpoint", S3_ENDPOINT),
            ("etcd-s3-folder", S3_FOLDER),
            ("etcd-s3-region", S3_REGION),
            ("etcd-s3-secret-key", S3_SECRET_KEY),
            ("etcd-s3-skip-ssl-verify", True),  # = !enforceSslVerify (left at its default)
        ]
    server += [
        ("etcd-snapshot-retention", ETCD_RETENTION),
        ("etcd-snapshot-schedule-cron", ETCD_SCHEDULE),
    ]
    if v.main_branch:
        # yaml.v3 writes the ServerConfig struct in field order: IngressController sits between
        # EtcdSnapshotScheduleCron and KubeAPIServerArgs
        server += [
            ("ingress-controller", list(MAIN_INGRESS_CONTROLLER)),
            ("kube-apiserver-arg", list(MAIN_APISERVER_ARGS)),
        ]
    server += [
        ("tls-san", list(TLS_SAN)),
    ]
    if v.encryption:
        server.append(("secrets-encryption-provider", ENCRYPTION_PROVIDER))
    server += [("cluster-cidr", POD_CIDR), ("service-cidr", SERVICE_CIDR)]
    return agent + server


def registries_yaml(v: Variant) -> str:
    """registries.yaml as sigs.k8s.io/yaml writes it (JSON tags, sorted keys, v2 style)."""
    if not v.registry:
        return "configs: null\nmirrors: {}\n"
    return (
        "configs:\n"
        f"  {yaml_scalar(REGISTRY_HOST)}:\n"
        "    auth:\n"
        f"      password: {yaml_scalar(REGISTRY_PASSWORD)}\n"
        f"      username: {yaml_scalar(REGISTRY_USER)}\n"
        "    tls:\n"
        "      cert_file: /etc/rancher/rke2/tls/tls.crt\n"
        "      key_file: /etc/rancher/rke2/tls/tls.key\n"
        "mirrors:\n"
        "  docker.io:\n"
        "    endpoint:\n"
        f"    - https://{REGISTRY_HOST}\n"
    )


def encryption_config() -> str:
    doc = {
        "kind": "EncryptionConfiguration",
        "apiVersion": "apiserver.config.k8s.io/v1",
        "resources": [{
            "resources": ["secrets"],
            "providers": [
                {ENCRYPTION_PROVIDER: {"keys": [{"name": "enckey", "secret": b64(ENCRYPTION_KEY)}]}},
                {"identity": {}},
            ],
        }],
    }
    return json.dumps(doc, separators=(",", ":"))  # no trailing newline, like upstream


MOTD_TEXT = "This node is managed by Cluster API (RKE2 bootstrap provider).\n"
NODE_READY_SCRIPT = (
    "#!/bin/sh\n"
    "# wait until the local kubelet answers, then drop a marker\n"
    "until curl -sk https://127.0.0.1:10250/healthz >/dev/null; do sleep 5; done\n"
    "touch /run/node-ready\n"
)


def spec_files(v: Variant) -> list[File]:
    """The user's spec.files, in order (also written into the manifests)."""
    files: list[File] = []
    if v.standard_inputs:
        files.append(File(SYSCTL_FILE[0], SYSCTL_FILE[1], OWNER, SYSCTL_FILE[2]))
    if v.extra_files:
        # user-supplied base64 text without trailing newline (the YAML block adds one)
        files.append(File("/etc/motd.d/10-caprke2", b64(MOTD_TEXT.encode()), OWNER, "0644", "base64"))
        if v.fmt == "cloud-config":  # gzip+base64 is rejected by the webhook for Ignition
            files.append(File("/usr/local/bin/node-ready.sh", b64(gz(NODE_READY_SCRIPT.encode(), 9)),
                              OWNER, "0755", "gzip+base64"))
    return files


def write_files(v: Variant, keys) -> list[File]:
    files: list[File] = []
    # 1. configFiles: server files first, then agent files
    if v.is_cp and v.encryption:
        files.append(File("/var/lib/rancher/rke2/server/cred/encryption-config.json",
                          encryption_config(), OWNER, "0400"))
    if v.cis:
        files.append(File("/opt/rke2-cis-script.sh", CIS_SCRIPT, OWNER, "0700"))
    # 2. registry TLS files: no owner, no permissions
    if v.registry:
        crt, key = keys["registry-client"]
        files.append(File("/etc/rancher/rke2/tls/tls.crt", crt))
        files.append(File("/etc/rancher/rke2/tls/tls.key", key))
    # 3. registries.yaml
    files.append(File("/etc/rancher/rke2/registries.yaml", registries_yaml(v), OWNER, "0640"))
    # 4. spec.files
    files += spec_files(v)
    # 6. init only: CA files, cert then key
    if v.role == "init":
        for purpose, crt_path, key_path in CA_PURPOSES:
            crt, key = keys[purpose]
            files.append(File(crt_path, crt, OWNER, "0640"))
            files.append(File(key_path, key, OWNER, "0600"))
    # 7. config.yaml, always last
    v.config_yaml = yaml_v3_config(config_pairs(v))
    files.append(File("/etc/rancher/rke2/config.yaml", v.config_yaml, OWNER, "0640"))
    return files


# --------------------------------------------------------------------------------------
# cloud-config rendering (text/template semantics of CAPRKE2 v0.25.0)
# --------------------------------------------------------------------------------------


def indent_block(n: int, text: str) -> str:
    pad = " " * n
    return pad + text.replace("\n", "\n" + pad)


def render_files_section(files: list[File]) -> str:
    out = ["write_files:"]
    for f in files:
        out.append(f"\n-   path: {f.path}\n    ")
        if f.encoding:
            out.append(f'encoding: "{f.encoding}"\n    ')
        if f.owner:
            out.append(f"owner: {f.owner}\n    ")
        if f.permissions:
            out.append(f"permissions: '{f.permissions}'\n    ")
        out.append("content: |\n" + indent_block(6, f.content))
    return "".join(out)


def render_cloud_config(*, control_plane: bool, files: list[File], ntp: list[str],
                        arbitrary: dict[str, str], pre: list[str], post: list[str], version: str,
                        airgapped: bool, checksum: str, cis: bool, additional: str) -> str:
    parts = [CLOUD_CONFIG_HEADER, "\n", render_files_section(files), "\n"]
    if ntp:
        parts.append("ntp:\n  enabled: true\n  servers:" + "".join(f"\n  - {go_quote(s)}" for s in ntp))
    parts.append("\n")
    for key in sorted(arbitrary):
        parts.append(f"\n{key}: {arbitrary[key]}")
    parts.append("\n\nruncmd:" if control_plane else "\nruncmd:")
    parts.extend(f"\n  - {go_quote(c)}" for c in pre)
    if checksum:
        parts.append("\n  - " + ARTIFACTS_CHECK.replace("{}", checksum))
    if control_plane:
        if airgapped:
            parts.append("\n  - INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts sh /opt/install.sh")
        else:
            parts.append(f"\n  - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={version} sh -s - server'")
    else:
        if airgapped:
            parts.append("\n  - 'INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE=\"agent\" sh /opt/install.sh'")
        else:
            parts.append(f"\n  - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={version} INSTALL_RKE2_TYPE=\"agent\" sh -s -'")
    if cis:
        parts.append("\n  - '/opt/rke2-cis-script.sh'")
    this, other = ("server", "agent") if control_plane else ("agent", "server")
    parts.append(f"\n  - 'systemctl mask rke2-{other}.service || true'")
    parts.append(f"\n  - 'systemctl enable rke2-{this}.service'")
    parts.append(f"\n  - 'systemctl start rke2-{this}.service'")
    parts.append("\n  - 'mkdir -p /run/cluster-api'")
    parts.append(f"\n  - '{SENTINEL}'")
    parts.extend(f"\n  - {go_quote(c)}" for c in post)
    parts.append("\n" + additional)
    return "".join(parts)


def cloud_config_commands(v: Variant, pre: list[str], post: list[str]) -> list[str]:
    """The runcmd items as a YAML parser (or a line parser) sees them."""
    cmds = list(pre)
    if v.checksum:
        cmds.append(ARTIFACTS_CHECK.replace("{}", v.checksum))
    if v.is_cp:
        cmds.append("INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts sh /opt/install.sh" if v.airgapped
                    else f"curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v.version} sh -s - server")
    else:
        cmds.append('INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE="agent" sh /opt/install.sh'
                    if v.airgapped else
                    f'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v.version} INSTALL_RKE2_TYPE="agent" sh -s -')
    if v.cis:
        cmds.append("/opt/rke2-cis-script.sh")
    this, other = ("server", "agent") if v.is_cp else ("agent", "server")
    cmds += [f"systemctl mask rke2-{other}.service || true", f"systemctl enable rke2-{this}.service",
             f"systemctl start rke2-{this}.service", "mkdir -p /run/cluster-api", SENTINEL]
    return cmds + list(post)


# --------------------------------------------------------------------------------------
# Ignition rendering (Butane fcos 1.4.0 -> Ignition 3.3.0, json.Marshal field order)
# --------------------------------------------------------------------------------------

_RFC2396_SAFE = "-_.!~*'()"


def make_data_url(data: bytes) -> tuple[str, str, str]:
    """Butane MakeDataURL: shortest of percent-escaped, base64, gzip(9)+base64.

    Returns (source, compression, kind) with kind in {percent, base64, gzip}."""
    best = "," + urllib.parse.quote(data, safe=_RFC2396_SAFE)
    kind = "percent"
    plain64 = ";base64," + b64(data)
    if len(plain64) < len(best):
        best, kind = plain64, "base64"
    compression = ""
    gz64 = ";base64," + b64(gz(data, 9))
    if len(gz64) + len("gzip") < len(best):
        best, kind, compression = gz64, "gzip", "gzip"
    return "data:" + best, compression, kind


def ignition_file(path: str, data: bytes, owner: str, permissions: str) -> dict:
    user: dict = {}
    group: dict = {}
    if owner:
        parts = owner.split(":")
        if parts[0]:
            user = {"name": parts[0].strip()}
        if len(parts) > 1 and parts[1]:
            group = {"name": parts[1].strip()}
    source, compression, _ = make_data_url(data)
    entry = {
        "group": group,
        "overwrite": True,
        "path": path,
        "user": user,
        "contents": {"compression": compression, "source": source, "verification": {}},
    }
    if permissions:
        entry["mode"] = int(permissions, 8)
    return entry


def install_script(pre: list[str], deploy: list[str], post: list[str]) -> str:
    lines = ["#!/bin/bash", "set -euo pipefail", ""] + pre + ["", ""] + deploy + ["", ""] + post
    return clip("\n".join(lines) + "\n")


def ignition_deploy_commands(v: Variant) -> list[str]:
    cmds: list[str] = []
    if v.airgapped and v.checksum:
        cmds.append(ARTIFACTS_CHECK.replace("{}", v.checksum))
    if v.is_cp:
        cmds.append("INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts sh /opt/install.sh" if v.airgapped
                    else f"curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v.version} sh -s - server")
    else:
        cmds.append('INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE="agent" sh /opt/install.sh'
                    if v.airgapped else
                    f'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={v.version} INSTALL_RKE2_TYPE="agent" sh -s -')
    if v.cis:
        cmds.append("/opt/rke2-cis-script.sh")
    svc = "rke2-server" if v.is_cp else "rke2-agent"
    cmds += [
        "setenforce 0",
        f"restorecon /etc/systemd/system/{svc}.service",
        f"systemctl enable --now {svc}.service",
        "mkdir -p /run/cluster-api /etc/cluster-api",
        "echo success | tee /run/cluster-api/bootstrap-success.complete /etc/cluster-api/bootstrap-success.complete > /dev/null",
        "setenforce 1",
    ]
    return cmds


def file_bytes_ignition(f: File) -> bytes:
    text = clip(f.content)
    if f.encoding == "base64":
        return base64.b64decode(text)
    return text.encode()


def file_bytes_cloud_config(f: File) -> bytes:
    text = clip(f.content).encode()
    if f.encoding == "base64":
        return base64.b64decode(text)
    if f.encoding == "gzip+base64":
        return gzip.decompress(base64.b64decode(text))
    return text


def render_ignition(v: Variant, files: list[File], pre: list[str], post: list[str]) -> tuple[str, list[dict]]:
    """Returns (json text, list of (path, bytes, owner, permissions, kind) facts)."""
    script = install_script(pre, ignition_deploy_commands(v), post)
    entries = [("/etc/ssh/sshd_config.d/010-rke2.conf", SSHD_SNIPPET.encode(), "", "0600", "")]
    entries += [(f.path, file_bytes_ignition(f), f.owner, f.permissions, f.encoding) for f in files]
    entries.append(("/etc/rke2-install.sh", script.encode(), "", "0700", ""))
    if v.ntp:
        chrony = "# Configured by RKE2 CAPI bootstrap provider\n" + "".join(
            f"server {s}\n" for s in v.ntp_list) + CHRONY_TAIL
        entries.append(("/etc/chrony.conf", chrony.encode(), "", "0644", ""))
    unit = RKE2_INSTALL_UNIT_MAIN if v.main_branch else RKE2_INSTALL_UNIT
    units = [{"contents": unit, "enabled": True, "name": "rke2-install.service"}]
    if v.ntp:
        units.append({"enabled": True, "name": "chronyd.service"})
    doc = {
        "ignition": {
            "config": {"replace": {"verification": {}}},
            "proxy": {},
            "security": {"tls": {}},
            "timeouts": {},
            "version": "3.3.0",
        },
        "kernelArguments": {},
        "passwd": {},
        "storage": {
            "files": [ignition_file(p, d, o, m) for p, d, o, m, _ in entries],
            "filesystems": [{
                "device": "/dev/disk/by-partlabel/p.lxroot",
                "format": "btrfs",
                "mountOptions": ["subvol=/@/opt"],
                "path": "/opt",
                "wipeFilesystem": False,
            }],
        },
        "systemd": {"units": units},
    }
    facts = []
    for (p, d, o, m, enc), js in zip(entries, doc["storage"]["files"]):
        _, _, kind = make_data_url(d)
        facts.append({"path": p, "data": d, "owner": o, "permissions": m, "encoding": enc, "source_kind": kind,
                      "compression": js["contents"]["compression"]})
    return go_json(doc), facts


def ignition_wrapper(inner_gzip: bytes) -> str:
    doc = {
        "ignition": {
            "config": {"replace": {"compression": "gzip",
                                   "source": "data:text/plain;base64," + b64(inner_gzip),
                                   "verification": {}}},
            "proxy": {},
            "security": {"tls": {}},
            "timeouts": {},
            "version": "3.3.0",
        },
        "kernelArguments": {},
        "passwd": {},
        "storage": {},
        "systemd": {},
    }
    return go_json(doc)


# --------------------------------------------------------------------------------------
# Build one variant
# --------------------------------------------------------------------------------------


def secret_name(v: Variant) -> str:
    if v.is_cp:
        return "demo-control-plane-" + stable_pick("cp/" + v.stem, NAME_ALPHABET, 5)
    return ("demo-md-0-" + stable_pick("ms/" + v.stem, NAME_ALPHABET, 5) + "-"
            + stable_pick("m/" + v.stem, NAME_ALPHABET, 5))


def pre_commands(v: Variant) -> list[str]:
    return list(CP_PRE_COMMANDS) if v.is_cp else []


def post_commands(v: Variant) -> list[str]:
    if not v.standard_inputs:
        return []
    return [POST_COMMAND] + (EXTRA_POST_COMMANDS if v.extra_post else [])


def build(v: Variant, keys) -> None:
    v.name = secret_name(v)
    files = write_files(v, keys)
    pre = pre_commands(v)
    post = post_commands(v)
    v.additional_config = cleanup_additional_cloud_init(v.additional_raw) if v.additional_raw else ""
    v.arbitrary = correct_arbitrary_data(v.arbitrary_raw)
    if v.fmt == "cloud-config":
        text = render_cloud_config(
            control_plane=v.is_cp, files=files, ntp=v.ntp_list, arbitrary=v.arbitrary,
            pre=pre, post=post, version=v.version, airgapped=v.airgapped, checksum=v.checksum,
            cis=v.cis, additional=v.additional_config)
        v.userdata = text.encode()
        v.value = gz(v.userdata, 6) if v.gzip else v.userdata
        v.commands = cloud_config_commands(v, pre, post)
        v.files = [{"path": f.path, "data": file_bytes_cloud_config(f), "owner": f.owner,
                    "permissions": f.permissions, "encoding": f.encoding,
                    "raw": clip(f.content).encode()} for f in files]
    else:
        text, facts = render_ignition(v, files, pre, post)
        v.userdata = text.encode()
        if v.gzip:
            v.wrapper = True
            v.value = ignition_wrapper(gz(v.userdata, 6)).encode()
        else:
            v.value = v.userdata
        v.commands = pre + ignition_deploy_commands(v) + post
        v.files = facts


# --------------------------------------------------------------------------------------
# Kubernetes object output (kubectl -o yaml / -o json shapes)
# --------------------------------------------------------------------------------------


def emit_yaml(obj, indent: int = 0) -> list[str]:
    """Block YAML as sigs.k8s.io/yaml prints it: sorted keys, 2 spaces, lists not indented."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(obj, dict):
        for key in sorted(obj):
            val = obj[key]
            k = yaml_scalar(key)
            if isinstance(val, dict) and val:
                lines.append(f"{pad}{k}:")
                lines += emit_yaml(val, indent + 2)
            elif isinstance(val, list) and val:
                lines.append(f"{pad}{k}:")
                lines += emit_yaml(val, indent)
            elif isinstance(val, str) and "\n" in val:
                header, body = literal_block(val, indent + 2)
                lines.append(f"{pad}{k}: {header}")
                lines += body
            else:
                lines.append(f"{pad}{k}: {scalar_text(val)}")
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict) and item:
                sub = emit_yaml(item, indent + 2)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                lines += sub
            elif isinstance(item, str) and "\n" in item:
                header, body = literal_block(item, indent + 2, in_sequence=True)
                lines.append(f"{pad}- {header}")
                lines += body
            else:
                lines.append(f"{pad}- {scalar_text(item)}")
    else:
        raise TypeError(obj)
    return lines


def literal_block(text: str, indent: int, in_sequence: bool = False) -> tuple[str, list[str]]:
    """A multi-line string as a YAML literal block: (header, content lines at `indent`).

    Only used in the manifests (what a user writes), where any valid YAML that reads back as
    exactly `text` will do: the chomping indicator keeps the trailing newlines, an indentation
    indicator protects a first line that starts with a space."""
    if any((ord(c) < 0x20 and c not in "\n\t") or ord(c) == 0x7F or c in "\u0085\u2028\u2029\ufeff"
           for c in text):
        raise ValueError(f"not representable as a literal block: {text!r}")
    body = text[:-1] if text.endswith("\n") else text
    chomp = "-" if not text.endswith("\n") else ("+" if body.endswith("\n") or body == "" else "")
    first = next((line for line in body.split("\n") if line), "")
    indicator = ""
    if first.startswith(" "):
        if in_sequence:
            raise ValueError(f"leading space in a sequence item block: {text!r}")
        indicator = "2"
    pad = " " * indent
    return "|" + indicator + chomp, [pad + line if line else "" for line in body.split("\n")]


def scalar_text(val) -> str:
    if isinstance(val, bool):
        return "true" if val else "false"
    if isinstance(val, int):
        return str(val)
    if isinstance(val, dict):
        return "{}"
    if isinstance(val, list):
        return "[]"
    if val is None:
        return "null"
    return yaml_scalar(val)


def to_yaml(obj) -> str:
    return "\n".join(emit_yaml(obj)) + "\n"


def to_kubectl_json(obj) -> str:
    return go_json(sort_keys(obj), indent=4) + "\n"


def sort_keys(obj):
    if isinstance(obj, dict):
        return {k: sort_keys(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [sort_keys(x) for x in obj]
    return obj


def uid(kind: str, name: str) -> str:
    return str(uuid.uuid5(UUID_NS, f"{kind}/{NAMESPACE}/{name}"))


def metadata(name: str, seq: int, owner: dict | None, labels: dict | None, namespace: str = NAMESPACE) -> dict:
    md = {
        "creationTimestamp": (BASE_TIME + dt.timedelta(minutes=10, seconds=17 * seq)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "name": name,
        "namespace": namespace,
        "resourceVersion": str(40213 + 37 * seq),
        "uid": uid("Secret", name),
    }
    if labels:
        md["labels"] = labels
    if owner:
        md["ownerReferences"] = [owner]
    return md


def bootstrap_secret(v: Variant, seq: int) -> dict:
    declared = v.fmt if v.declared_format is None else v.declared_format
    return {
        "apiVersion": "v1",
        "data": {"format": b64(declared.encode()), "value": b64(v.value)},
        "kind": "Secret",
        "metadata": metadata(v.name, seq, {
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
            "controller": True,
            "kind": "RKE2Config",
            "name": v.name,
            "uid": uid("RKE2Config", v.name),
        }, {"cluster.x-k8s.io/cluster-name": CLUSTER}),
        "type": "cluster.x-k8s.io/secret",
    }


def token_secret(seq: int) -> dict:
    return {
        "apiVersion": "v1",
        "data": {"value": b64(TOKEN.encode())},
        "kind": "Secret",
        "metadata": metadata(f"{CLUSTER}-token", seq, {
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "controller": True,
            "kind": "Cluster",
            "name": CLUSTER,
            "uid": uid("Cluster", CLUSTER),
        }, {"cluster.x-k8s.io/cluster-name": CLUSTER}),
        "type": "cluster.x-k8s.io/secret",
    }


def ca_secret(keys, init_name: str, seq: int) -> dict:
    crt, key = keys["ca"]
    return {
        "apiVersion": "v1",
        "data": {"tls.crt": b64(crt.encode()), "tls.key": b64(key.encode())},
        "kind": "Secret",
        "metadata": metadata(f"{CLUSTER}-ca", seq, {
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
            "controller": True,
            "kind": "RKE2Config",
            "name": init_name,
            "uid": uid("RKE2Config", init_name),
        }, {"cluster.x-k8s.io/cluster-name": CLUSTER}),
        "type": "cluster.x-k8s.io/secret",
    }


def opaque_secret(seq: int) -> dict:
    return {
        "apiVersion": "v1",
        "data": {"password": b64(b"not-a-real-password"), "username": b64(b"app")},
        "kind": "Secret",
        "metadata": metadata("app-credentials", seq, None, None, namespace="team-a"),
        "type": "Opaque",
    }


MACHINE_PLAN_TYPE = "rke.cattle.io/machine-plan"


def machine_plan_json(version: str, role: str) -> str:
    """A plan as Rancher's planner writes it for system-agent (instructions run by the agent)."""
    tag = version.replace("+", "-")
    return go_json({
        "instructions": [{
            "name": "install",
            "image": f"rancher/system-agent-installer-rke2:{tag}",
            "env": [f"INSTALL_RKE2_VERSION={version}", f"INSTALL_RKE2_TYPE={role}"],
            "args": ["-c", "run.sh"],
            "command": "sh",
        }],
    })


def machine_plan_secret(machine: str, role: str, seq: int, extra_data: dict[str, bytes] | None = None,
                        extra_labels: dict[str, str] | None = None) -> dict:
    """The Secret Rancher's system-agent applies plans from (`rke.cattle.io/machine-plan`): the
    plan to apply (an in-place update to a newer RKE2), the checksum and plan last applied."""
    applied = machine_plan_json(VERSION, role)
    data = {
        "applied-checksum": sha256_hex(applied.encode()).encode(),
        "applied-plan": applied.encode(),
        "failure-count": b"0",
        "plan": machine_plan_json(MACHINE_PLAN_VERSION, role).encode(),
        "probe-statuses": b"{}",
    }
    data.update(extra_data or {})
    labels = {"rke.cattle.io/cluster-name": CLUSTER, "rke.cattle.io/machine-name": machine}
    labels.update(extra_labels or {})
    return {
        "apiVersion": "v1",
        "data": {k: b64(v) for k, v in data.items()},
        "kind": "Secret",
        "metadata": metadata(f"{machine}-machine-plan", seq, None, labels),
        "type": MACHINE_PLAN_TYPE,
    }


MACHINE_PLAN_VERSION = "v1.32.6+rke2r1"  # the in-place update a plan asks for


def string_data_manifest(v: Variant) -> str:
    """A hand-written manifest using stringData (what a user applies, not what kubectl prints)."""
    text = v.userdata.decode()
    assert text.endswith("\n") and not text.endswith("\n\n")
    body = "".join(("    " + line if line else "") + "\n" for line in text[:-1].split("\n"))
    return (
        "apiVersion: v1\n"
        "kind: Secret\n"
        "metadata:\n"
        "  labels:\n"
        f"    cluster.x-k8s.io/cluster-name: {CLUSTER}\n"
        f"  name: {v.name}\n"
        f"  namespace: {NAMESPACE}\n"
        "type: cluster.x-k8s.io/secret\n"
        "stringData:\n"
        f"  format: {v.fmt}\n"
        "  value: |\n" + body
    )


# --------------------------------------------------------------------------------------
# Manifests: the Cluster API objects CAPRKE2 renders each variant's user data from
# --------------------------------------------------------------------------------------
#
# For every single-Secret fixture that a manifest can cause (YAML container, data form, a
# real format), testdata/manifests/<stem>.yaml holds the objects a user applies plus the
# Secrets CAPRKE2 finds in the cluster at render time (the join token, and for init the
# four CAs), in the v1beta2 shapes of CAPRKE2 v0.25.0 (field names from the Go json tags
# of controlplane/api/v1beta2 and bootstrap/api/v1beta2, and cluster-api core v1beta2).
# Which spec field gives which part of the user data:
#
#   Cluster spec.clusterNetwork.{pods,services}.cidrBlocks   config.yaml cluster-cidr / service-cidr (CP)
#   Cluster spec.controlPlaneEndpoint.host                   last tls-san entry (CP)
#   RCP spec.registrationMethod address + registrationAddress  status.availableServerIPs[0]
#                                                            -> config.yaml server (join, worker)
#   RCP spec.version / MachineDeployment template.spec.version  INSTALL_RKE2_VERSION
#   RCP spec.serverConfig.*                                  config.yaml server keys (CP),
#                                                            cloud-provider-name (every role)
#   serverConfig.etcd.backupConfig.s3 + s3CredentialSecret   etcd-s3-* keys
#   serverConfig.secretsEncryption + encryptionKeySecret     encryption-config.json + provider key
#   <spec>.agentConfig.format                                Secret data.format, renderer
#   <spec>.agentConfig.{airGapped,airGappedChecksum}         install line, checksum line
#   <spec>.agentConfig.ntp.servers                           ntp block / chrony.conf
#   <spec>.agentConfig.cisProfile                            profile key, CIS script file + command
#   <spec>.agentConfig.kubelet.extraArgs, nodeLabels         kubelet-arg, node-label
#   <spec>.agentConfig.additionalUserData.{config,data}      appended / spliced cloud-config
#   <spec>.files, preRKE2Commands, postRKE2Commands          write_files / storage.files, commands
#   <spec>.privateRegistriesConfig + its Secrets             registries.yaml, /etc/rancher/rke2/tls/*
#   <spec>.gzipUserData                                      gzip (cloud-config) / gzip wrapper (Ignition)
#   Secret demo-token data.value                             config.yaml token
#   Secrets demo-{ca,cca,peer-etcd,etcd} tls.crt/tls.key     the 8 CA files (init)
#
# (<spec> is RKE2ControlPlane spec for control planes, RKE2ConfigTemplate
# spec.template.spec for workers.)  The structural fields CAPI and the CRDs require to get a
# Machine at all (infrastructure references, rolloutStrategy, the MachineDeployment selector)
# are there too; they do not reach the user data.

MANIFESTS = TESTDATA / "manifests"
RCP_NAME = f"{CLUSTER}-control-plane"
MD_NAME = f"{CLUSTER}-md-0"
REGISTRY_AUTH_SECRET = f"{CLUSTER}-registry-auth"
REGISTRY_TLS_SECRET = f"{CLUSTER}-registry-tls"
S3_SECRET = f"{CLUSTER}-etcd-s3-credentials"
ENCRYPTION_SECRET = f"{CLUSTER}-encryption-key"
REGISTRATION_PORT = 9345
INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


def manifest_eligible(v: Variant) -> bool:
    # The manifests are v0.25.0 objects, which a main-branch variant is not rendered from.
    return v.container == "yaml" and v.form == "data" and v.declared_format is None and not v.main_branch


def secret_ref(name: str) -> dict:
    """corev1.ObjectReference to a Secret: CAPRKE2 Gets it with exactly this namespace."""
    return {"apiVersion": "v1", "kind": "Secret", "name": name, "namespace": NAMESPACE}


def registration_address(v: Variant) -> str:
    host = urllib.parse.urlsplit(v.server).hostname
    joined = f"[{host}]" if ":" in host else host  # net.JoinHostPort
    assert v.server == f"https://{joined}:{REGISTRATION_PORT}", v.server
    return host


def manifest_files(v: Variant) -> list[dict]:
    out = []
    for f in spec_files(v):
        entry = {"path": f.path, "content": f.content}
        if f.owner:
            entry["owner"] = f.owner
        if f.permissions:
            entry["permissions"] = f.permissions
        if f.encoding:
            entry["encoding"] = f.encoding
        out.append(entry)
    return out


def manifest_agent_config(v: Variant) -> dict:
    ac: dict = {"format": v.fmt}
    if v.role == "worker" and v.standard_inputs:
        ac["kubelet"] = {"extraArgs": worker_kubelet_args(v)}
        ac["nodeLabels"] = list(WORKER_NODE_LABELS)
    if v.airgapped:
        ac["airGapped"] = True
    if v.checksum:
        ac["airGappedChecksum"] = v.checksum
    if v.ntp:
        ac["ntp"] = {"servers": v.ntp_list}
    if v.cis:
        ac["cisProfile"] = CIS_PROFILE
    assert not (v.additional_raw and v.arbitrary_raw)  # CEL: config and data are exclusive
    if v.additional_raw:
        ac["additionalUserData"] = {"config": v.additional_raw}
    if v.arbitrary_raw:
        ac["additionalUserData"] = {"data": dict(v.arbitrary_raw)}
    return ac


def manifest_config_spec(v: Variant) -> dict:
    """The RKE2ConfigSpec fields (inlined in RKE2ControlPlane spec, or the template's spec)."""
    spec: dict = {"agentConfig": manifest_agent_config(v)}
    files = manifest_files(v)
    if files:
        spec["files"] = files
    if pre_commands(v):
        spec["preRKE2Commands"] = pre_commands(v)
    if post_commands(v):
        spec["postRKE2Commands"] = post_commands(v)
    if v.registry:
        spec["privateRegistriesConfig"] = {
            "mirrors": {"docker.io": {"endpoint": [f"https://{REGISTRY_HOST}"]}},
            "configs": {REGISTRY_HOST: {
                "authSecret": secret_ref(REGISTRY_AUTH_SECRET),
                "tls": {"tlsConfigSecret": secret_ref(REGISTRY_TLS_SECRET)},
            }},
        }
    if v.gzip:
        spec["gzipUserData"] = True
    return spec


def manifest_server_config(v: Variant) -> dict:
    backup: dict = {"retention": ETCD_RETENTION, "scheduleCron": ETCD_SCHEDULE}
    sc: dict = {
        "cni": CNI,
        "disableComponents": {"pluginComponents": list(DISABLED_PLUGINS)},
        "cloudProviderName": CLOUD_PROVIDER_NAME,
        "tlsSan": TLS_SAN[:-1],  # CAPRKE2 appends the control-plane endpoint host
        "etcd": {"backupConfig": backup},
    }
    if v.is_cp and v.etcd_s3:
        backup["s3"] = {
            "endpoint": S3_ENDPOINT,
            "bucket": S3_BUCKET,
            "region": S3_REGION,
            "folder": S3_FOLDER,
            "enforceSslVerify": False,  # -> etcd-s3-skip-ssl-verify: true
            "s3CredentialSecret": secret_ref(S3_SECRET),
        }
    if v.is_cp and v.encryption:
        sc["secretsEncryption"] = {"provider": ENCRYPTION_PROVIDER, "encryptionKeySecret": secret_ref(ENCRYPTION_SECRET)}
    return sc


def object_meta(name: str, labels: dict | None = None) -> dict:
    md: dict = {"name": name, "namespace": NAMESPACE}
    if labels:
        md["labels"] = labels
    return md


def plain_secret(name: str, data: dict[str, bytes], typ: str, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "data": {k: b64(val) for k, val in data.items()},
        "kind": "Secret",
        "metadata": object_meta(name, labels),
        "type": typ,
    }


def manifest_objects(v: Variant, keys) -> list[dict]:
    cluster_label = {"cluster.x-k8s.io/cluster-name": CLUSTER}
    objs: list[dict] = [{
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": object_meta(CLUSTER),
        "spec": {
            "clusterNetwork": {
                "pods": {"cidrBlocks": [POD_CIDR]},
                "services": {"cidrBlocks": [SERVICE_CIDR]},
            },
            "controlPlaneEndpoint": {"host": ENDPOINT_HOST, "port": 6443},
            "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "RKE2ControlPlane",
                                "name": RCP_NAME},
            "infrastructureRef": {"apiGroup": INFRA_GROUP, "kind": "DockerCluster", "name": CLUSTER},
        },
    }]
    rcp_spec: dict = manifest_config_spec(v) if v.is_cp else {}
    rcp_spec.update({
        "replicas": {"init": 1, "join": 3, "worker": 1}[v.role],
        "version": v.version,
        "registrationMethod": "address",
        "registrationAddress": registration_address(v),
        "serverConfig": manifest_server_config(v),
        "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
        "machineTemplate": {"spec": {"infrastructureRef": {
            "apiGroup": INFRA_GROUP, "kind": "DockerMachineTemplate", "name": RCP_NAME}}},
    })
    objs.append({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
        "kind": "RKE2ControlPlane",
        "metadata": object_meta(RCP_NAME),
        "spec": rcp_spec,
    })
    if v.role == "worker":
        objs.append({
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
            "kind": "RKE2ConfigTemplate",
            "metadata": object_meta(MD_NAME),
            "spec": {"template": {"spec": manifest_config_spec(v)}},
        })
        objs.append({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "MachineDeployment",
            "metadata": object_meta(MD_NAME),
            "spec": {
                "clusterName": CLUSTER,
                "replicas": 2,
                "selector": {"matchLabels": dict(cluster_label)},
                "template": {"spec": {
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io",
                                                "kind": "RKE2ConfigTemplate", "name": MD_NAME}},
                    "clusterName": CLUSTER,
                    "infrastructureRef": {"apiGroup": INFRA_GROUP, "kind": "DockerMachineTemplate",
                                          "name": MD_NAME},
                    "version": v.version,
                }},
            },
        })
    # Secrets the objects above reference
    if v.registry:
        crt, key = keys["registry-client"]
        objs.append(plain_secret(REGISTRY_AUTH_SECRET, {"password": REGISTRY_PASSWORD.encode(),
                                                        "username": REGISTRY_USER.encode()},
                                 "kubernetes.io/basic-auth"))
        objs.append(plain_secret(REGISTRY_TLS_SECRET, {"tls.crt": crt.encode(), "tls.key": key.encode()},
                                 "kubernetes.io/tls"))
    if v.is_cp and v.etcd_s3:
        objs.append(plain_secret(S3_SECRET, {"aws_access_key_id": S3_ACCESS_KEY.encode(),
                                             "aws_secret_access_key": S3_SECRET_KEY.encode()}, "Opaque"))
    if v.is_cp and v.encryption:
        objs.append(plain_secret(ENCRYPTION_SECRET, {"encryptionKey": ENCRYPTION_KEY}, "Opaque"))
    # Secrets CAPRKE2 finds in the cluster when it renders (it reuses them as they are)
    objs.append(plain_secret(f"{CLUSTER}-token", {"value": TOKEN.encode()}, "cluster.x-k8s.io/secret",
                             cluster_label))
    if v.role == "init":
        for purpose, _, _ in CA_PURPOSES:
            crt, key = keys[purpose]
            objs.append(plain_secret(f"{CLUSTER}-{purpose}", {"tls.crt": crt.encode(), "tls.key": key.encode()},
                                     "cluster.x-k8s.io/secret", cluster_label))
    return objs


def manifest_divergences(v: Variant) -> list[dict]:
    """Where a faithful render of the manifest legitimately differs from secrets/<stem>.userdata."""
    out = []
    if v.cis:
        out.append({
            "path": "/opt/rke2-cis-script.sh",
            "why": "CAPRKE2 writes its CISNodePreparationScript constant here; the generator writes "
                   "rke2-payload's stand-in of the same length (CIS_SCRIPT, the one `render` writes), so a "
                   "render by rke2-payload matches byte for byte and one by CAPRKE2 differs in this file's "
                   "content only",
        })
    if v.fmt == "ignition":
        out.append({
            "path": None,
            "why": "storage.files sources with compression gzip hold Python zlib output (level 9), not Go "
                   "compress/flate, and the shortest-of-three data URL choice depends on that length; "
                   "compare the decoded file contents, not the data URLs",
        })
    return out


def manifest_index_entry(v: Variant) -> dict:
    entry = {
        "stem": v.stem,
        "manifest": f"manifests/{v.stem}.yaml",
        "role": v.role,
        "format": v.fmt,
        "gzip": v.gzip,
        "userdata": f"secrets/{v.stem}.userdata",
        "secret_name_prefix": f"{RCP_NAME}-" if v.is_cp else f"{MD_NAME}-",
        "secret": f"secrets/{v.stem}.yaml",
        "secret_name": v.name,
        "version": v.version,
        "byte_exact": not manifest_divergences(v),
        "divergences": manifest_divergences(v),
    }
    if v.upstream_case:
        entry["upstream_case"] = v.upstream_case
    return entry


def write_manifests(vs: list[Variant], keys) -> list[tuple[str, str]]:
    clean_dir(MANIFESTS)
    index = []
    rows = []
    for v in vs:
        if not manifest_eligible(v):
            continue
        objs = manifest_objects(v, keys)
        (MANIFESTS / f"{v.stem}.yaml").write_text("---\n".join(to_yaml(o) for o in objs))
        index.append(manifest_index_entry(v))
        kinds = ", ".join(o["kind"] + (f" (replicas {o['spec']['replicas']})" if "replicas" in o["spec"] else "")
                          for o in objs if o["kind"] != "Secret")
        secrets = ", ".join(o["metadata"]["name"] for o in objs if o["kind"] == "Secret")
        rows.append((f"manifests/{v.stem}.yaml", f"{kinds}; Secrets {secrets}"))
    (MANIFESTS / "INDEX.json").write_text(json.dumps(index, indent=2, ensure_ascii=False) + "\n")
    return rows


# --------------------------------------------------------------------------------------
# Variants
# --------------------------------------------------------------------------------------

# additionalUserData.config of init-cloud-config-extras as a user writes it (the manifest) ...
ADDITIONAL_USER_CONFIG = (
    "#cloud-config\n"
    "users:\n"
    "- name: ops\n"
    "  groups: wheel\n"
    "  shell: /bin/bash\n"
    "package_update: true\n"
    "runcmd: [echo dropped]\n"
)
# ... and what CAPRKE2's cleanup makes of it (yaml.v3, sorted keys, runcmd dropped)
ADDITIONAL_CLOUD_CONFIG = (
    "package_update: true\n"
    "users:\n"
    "  - groups: wheel\n"
    "    name: ops\n"
    "    shell: /bin/bash\n"
)


def variants() -> list[Variant]:
    out: list[Variant] = []
    for role in ("init", "join", "worker"):
        for fmt in ("cloud-config", "ignition"):
            for gzipped in (False, True):
                for airgapped in (False, True):
                    stem = f"{role}-{fmt}{'-gzip' if gzipped else ''}-{'airgapped' if airgapped else 'online'}"
                    out.append(Variant(stem, role, fmt, gzipped, airgapped,
                                       description=f"{role} {fmt}{', gzipUserData' if gzipped else ''}, "
                                                   f"{'airGapped' if airgapped else 'online'} install"))
    out += [
        Variant("join-cloud-config-ipv6", "join", "cloud-config", server=SERVER_IPV6,
                description="join control plane, server URL with an IPv6 literal https://[fd00::a]:9345"),
        Variant("worker-cloud-config-empty-format", "worker", "cloud-config", declared_format="",
                description="worker, data.format is the empty string (webhook bypassed): treat as cloud-config"),
        Variant("worker-cloud-config-checksum", "worker", "cloud-config", airgapped=True, checksum=AIRGAP_CHECKSUM,
                description="worker airgapped with airGappedChecksum: unquoted `- [[ ... ]] || exit 1` item, INVALID YAML"),
        Variant("init-cloud-config-extras", "init", "cloud-config", registry=True, etcd_s3=True, encryption=True,
                ntp=True, cis=True, extra_files=True, additional_raw=ADDITIONAL_USER_CONFIG, extra_post=True,
                description="init cloud-config with base64 + gzip+base64 spec.files, registry auth + TLS, etcd S3 keys, "
                            "encryption-config.json, NTP, CIS profile + script, additionalUserData.config, %q escapes"),
        Variant("init-ignition-extras", "init", "ignition", registry=True, etcd_s3=True, encryption=True, ntp=True,
                extra_files=True,
                description="init Ignition with registry auth + TLS (files without mode), etcd S3 keys, "
                            "encryption-config.json, NTP (chrony), a base64 spec.files entry"),
        Variant("worker-cloud-config-stringdata", "worker", "cloud-config", form="stringData",
                description="hand-written worker manifest using stringData (plain text value, literal block)"),
    ]
    out += upstream_variants()
    out.append(Variant("worker-ignition-online", "worker", "ignition", container="json",
                       description="worker-ignition-online as `kubectl get secret -o json` prints it"))
    out += main_branch_variants()
    return out


# CAPRKE2's main branch (after v0.25.0), which differs from v0.25.0 in what these two render.
MAIN_BRANCH_COMMIT = "c8a3286ad22366f17faaab9c8fefb7eb80c52221"


def main_branch_variants() -> list[Variant]:
    return [
        Variant("join-cloud-config-main-branch", "join", "cloud-config", main_branch=True,
                description="join control plane rendered as CAPRKE2 main renders it: config.yaml with "
                            "`ingress-controller: [ingress-nginx]` (between etcd-snapshot-schedule-cron and "
                            "kube-apiserver-arg) and `disable: [rke2-traefik, rke2-traefik-crd]`"),
        Variant("worker-ignition-main-branch", "worker", "ignition", main_branch=True,
                description="worker Ignition rendered as CAPRKE2 main renders it: rke2-install.service "
                            "`Wants=`/`After=` name dbus.service; otherwise worker-ignition-online"),
    ]


# CAPRKE2's own worker cases (bootstrap/internal/cloudinit/cloudinit_test.go at v0.25.0), as a
# real worker has them: the registries.yaml and config.yaml a manifest always produces, the
# cluster's token, server and cloud-provider-name, no spec.files, no commands.  Where a case
# sets no version, the cluster's VERSION is used (an empty version is an error for a real
# Machine: "RKE2 version can not be found").
UPSTREAM_VERSION = "v1.25.6+rke2r1"
# additionalUserData.data as a user writes it; the webhook's CorrectArbitraryData turns it
# into the normalised strings the unit test feeds in directly
UPSTREAM_ARBITRARY_DATA = {
    "device_aliases": "{'ephemeral0': '/dev/vdb'}",
    "disk_setup": "ephemeral0:\n  table_type: mbr\n  layout: False\n  overwrite: False\n",
    "list": "- data\n",
    "users": "- name: capv\n  sudo: ALL=(ALL) NOPASSWD:ALL\n",
}
# additionalUserData.config of the "additional cloud-init" case (its runcmd and write_files
# are dropped by CAPRKE2's cleanup; note the trailing space after the runcmd item)
UPSTREAM_ADDITIONAL_CONFIG = (
    "## template: jinja\n"
    "#cloud-config\n"
    "device_aliases: {'ephemeral0': '/dev/vdb'}\n"
    "disk_setup:\n"
    "  ephemeral0:\n"
    "    table_type: mbr\n"
    "    layout: False\n"
    "    overwrite: False\n"
    "\n"
    "fs_setup:\n"
    "  - label: ephemeral0\n"
    "    filesystem: ext4\n"
    "    device: ephemeral0.0\n"
    "\n"
    "write_files:\n"
    "-   path: /etc/hosts\n"
    "    content: |\n"
    "      192.168.0.1 test\n"
    "\n"
    "\n"
    "runcmd:\n"
    "  - 'print hello world' \n"
)


def upstream_variants() -> list[Variant]:
    def up(suffix: str, case: str, what: str, **kw) -> Variant:
        return Variant(f"worker-cloud-config-upstream-{suffix}", "worker", "cloud-config", standard_inputs=False,
                       upstream_case=case, description=f"CAPRKE2 unit test {case}: {what}", **kw)

    return [
        up("airgapped", "WorkerAirGappedCloudInitTest", "worker, airGapped", airgapped=True),
        up("airgapped-checksum", "WorkerAirGappedWithChecksumCloudInitTest",
           "worker, airGapped + airGappedChecksum abcd (INVALID YAML)", airgapped=True, checksum="abcd"),
        up("online", "WorkerOnlineCloudInitTest", f"worker, online install of {UPSTREAM_VERSION}",
           version=UPSTREAM_VERSION),
        up("ntp", "NTPWorkerTest", "worker, ntp.servers [test.ntp.org] (version: the cluster's, the test sets none)",
           ntp=True, ntp_servers=["test.ntp.org"]),
        up("cis", "WorkerCISTest", f"worker, cisProfile cis, {UPSTREAM_VERSION}", cis=True, version=UPSTREAM_VERSION),
        up("arbitrary-data", "CloudInit with custom entries (arbitrary data)",
           "worker, CIS, additionalUserData.data as written (webhook-normalised in the user data)",
           cis=True, version=UPSTREAM_VERSION, arbitrary_raw=dict(UPSTREAM_ARBITRARY_DATA)),
        up("additional-cloudinit", "CloudInit with custom entries (additional cloud-init)",
           "worker, CIS, additionalUserData.config (runcmd/write_files dropped, re-encoded, appended)",
           cis=True, version=UPSTREAM_VERSION, additional_raw=UPSTREAM_ADDITIONAL_CONFIG),
    ]


# --------------------------------------------------------------------------------------
# Index
# --------------------------------------------------------------------------------------


def _der_read(buf: bytes, pos: int) -> tuple[int, int, int]:
    """Returns (tag, start of content, end of content) of the DER element at pos."""
    tag = buf[pos]
    n = buf[pos + 1]
    pos += 2
    if n & 0x80:
        width = n & 0x7F
        n = int.from_bytes(buf[pos:pos + width], "big")
        pos += width
    return tag, pos, pos + n


def _der_children(buf: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    out = []
    while start < end:
        tag, cs, ce = _der_read(buf, start)
        out.append((tag, cs, ce))
        start = ce
    return out


def _der_oid(raw: bytes) -> str:
    parts = [raw[0] // 40, raw[0] % 40]
    acc = 0
    for b in raw[1:]:
        acc = (acc << 7) | (b & 0x7F)
        if not b & 0x80:
            parts.append(acc)
            acc = 0
    return ".".join(map(str, parts))


def _der_name(buf: bytes, start: int, end: int) -> str:
    short = {"2.5.4.3": "CN", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.6": "C"}
    rdns = []
    for _, ss, se in _der_children(buf, start, end):  # SET
        for _, as_, ae in _der_children(buf, ss, se):  # AttributeTypeAndValue
            (_, os_, oe), (_, vs, ve) = _der_children(buf, as_, ae)
            rdns.append(f"{short.get(_der_oid(buf[os_:oe]), _der_oid(buf[os_:oe]))}={buf[vs:ve].decode()}")
    return ",".join(reversed(rdns))  # RFC 4514 order


def _der_time(tag: int, raw: bytes) -> str:
    text = raw.decode()
    if tag == 0x17:  # UTCTime YYMMDDHHMMSSZ
        year = int(text[:2])
        text = ("19" if year >= 50 else "20") + text
    return f"{text[0:4]}-{text[4:6]}-{text[6:8]}T{text[8:10]}:{text[10:12]}:{text[12:14]}Z"


def parse_certificate(der: bytes) -> dict:
    """Just enough X.509 DER parsing for the index (no dependency on cryptography's
    acceptance of serial number 0)."""
    _, cs, ce = _der_read(der, 0)
    tbs_tag, ts, te = _der_read(der, cs)
    fields = _der_children(der, ts, te)
    i = 1 if fields[0][0] == 0xA0 else 0
    serial = int.from_bytes(der[fields[i][1]:fields[i][2]], "big", signed=True)
    issuer = _der_name(der, fields[i + 2][1], fields[i + 2][2])
    (t1, a, b), (t2, c, d) = _der_children(der, fields[i + 3][1], fields[i + 3][2])
    subject = _der_name(der, fields[i + 4][1], fields[i + 4][2])
    is_ca = False
    for tag, s, e in fields[i + 6:]:
        if tag != 0xA3:
            continue
        (_, xs, xe), = _der_children(der, s, e)
        for _, es, ee in _der_children(der, xs, xe):
            parts = _der_children(der, es, ee)
            if _der_oid(der[parts[0][1]:parts[0][2]]) == "2.5.29.19":
                _, os_, oe = parts[-1]
                _, bs, be = _der_read(der, os_)
                inner = _der_children(der, bs, be)
                is_ca = bool(inner and inner[0][0] == 0x01 and der[inner[0][1]] != 0)
    return {
        "subject": subject,
        "issuer": issuer,
        "serial": serial,
        "is_ca": is_ca,
        "not_before": _der_time(t1, der[a:b]),
        "not_after": _der_time(t2, der[c:d]),
    }


def cert_facts(path: str, data: bytes) -> list[dict]:
    out = []
    pem_re = rb"-----BEGIN CERTIFICATE-----\n(.*?)-----END CERTIFICATE-----"
    for m in re.finditer(pem_re, data, re.S):
        der = base64.b64decode(m.group(1))
        facts = parse_certificate(der)
        out.append({"path": path, "subject": facts["subject"], "issuer": facts["issuer"],
                    "serial": facts["serial"], "is_ca": facts["is_ca"], "sha256": sha256_hex(der),
                    "not_before": facts["not_before"], "not_after": facts["not_after"]})
    return out


def index_entry(v: Variant, file_name: str, secret_text: str) -> dict:
    declared = v.fmt if v.declared_format is None else v.declared_format
    files = []
    certs = []
    for f in v.files:
        entry = {
            "path": f["path"],
            "mode": f["permissions"] or None,
            "owner": f["owner"] or None,
            "size": len(f["data"]),
            "sha256": sha256_hex(f["data"]),
            "encoding": f["encoding"] or None,
        }
        if v.fmt == "cloud-config":
            entry["raw_size"] = len(f["raw"])
            entry["raw_sha256"] = sha256_hex(f["raw"])
        else:
            entry["source_kind"] = f["source_kind"]
            entry["compression"] = f["compression"]
        files.append(entry)
        certs += cert_facts(f["path"], f["data"])
    if v.form == "stringData":
        base64_bytes = None
    else:
        base64_bytes = len(b64(v.value))
    return {
        "kind": "Secret",
        "file": file_name,
        "userdata_file": f"{v.stem}.userdata",
        "description": v.description,
        "container": v.container,
        "secret_form": v.form,
        "name": v.name,
        "namespace": NAMESPACE,
        "cluster": CLUSTER,
        "type": "cluster.x-k8s.io/secret",
        "role": {"init": "init", "join": "server", "worker": "agent"}[v.role],
        "format": v.fmt,
        "declared_format": declared,
        "gzip": v.gzip,
        "ignition_wrapper": v.wrapper,
        "airgapped": v.airgapped,
        "airgap_checksum": v.checksum or None,
        "server": None if v.role == "init" else v.server,
        "token": TOKEN,
        "tls_san": list(TLS_SAN) if v.is_cp else [],
        "version": None if v.airgapped else v.version,
        "cis_profile": CIS_PROFILE if v.cis else None,
        "ntp_servers": v.ntp_list,
        "value_bytes": len(v.value),
        "base64_bytes": base64_bytes,
        "value_sha256": sha256_hex(v.value),
        "userdata_bytes": len(v.userdata),
        "userdata_sha256": sha256_hex(v.userdata),
        "config_yaml": v.config_yaml,
        "files": files,
        "certificates": certs,
        "commands": v.commands,
        "yaml_valid": not v.checksum,
        "secret_file_sha256": sha256_hex(secret_text.encode()),
        **(main_branch_facts(v) if v.main_branch else {}),
    }


def main_branch_facts(v: Variant) -> dict:
    """What a main-branch variant has that its v0.25.0 counterpart has not."""
    facts: dict = {"caprke2": f"main {MAIN_BRANCH_COMMIT}"}
    if v.is_cp:
        facts["ingress_controller"] = list(MAIN_INGRESS_CONTROLLER)
        facts["disable"] = list(MAIN_DISABLED_PLUGINS)
    else:
        facts["ingress_controller"] = []
    facts["v0_25_counterpart"] = f"{v.stem.replace('-main-branch', '-online')}.yaml"
    if v.fmt == "ignition":
        facts["install_unit"] = RKE2_INSTALL_UNIT_MAIN
    return facts


def member(obj: dict, fixture: str | None) -> dict:
    data = obj.get("data", {})
    bootstrap = obj["type"] == "cluster.x-k8s.io/secret" and "value" in data and "format" in data
    m = {
        "name": obj["metadata"]["name"],
        "namespace": obj["metadata"]["namespace"],
        "type": obj["type"],
        "keys": sorted(data),
        "has_value_key": "value" in data,
        "bootstrap": bootstrap,
        "fixture": fixture,
    }
    if obj["metadata"]["name"] == f"{CLUSTER}-token":
        m["note"] = "NOT bootstrap data: type cluster.x-k8s.io/secret with a `value` key holding the join token, no `format` key"
    elif obj["metadata"]["name"] == f"{CLUSTER}-ca":
        m["note"] = "NOT bootstrap data: CA Secret with tls.crt/tls.key, no `value` key"
    elif obj["type"] == "Opaque":
        m["note"] = "NOT bootstrap data: ordinary Opaque Secret"
    elif obj["type"] == MACHINE_PLAN_TYPE and "value" in data:
        m["note"] = ("NOT bootstrap data: a machine plan that also carries `value` and `format` keys holding "
                     "cloud-config (no real plan does): its type says it is not bootstrap data")
    elif obj["type"] == MACHINE_PLAN_TYPE:
        m["note"] = "NOT bootstrap data: Rancher system-agent machine plan (in-place update plan)"
    return m


# --------------------------------------------------------------------------------------
# Bad inputs
# --------------------------------------------------------------------------------------


def raw_secret_yaml(name: str, data: dict[str, str], typ: str = "cluster.x-k8s.io/secret") -> str:
    obj = {
        "apiVersion": "v1",
        "data": data,
        "kind": "Secret",
        "metadata": {
            "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER},
            "name": name,
            "namespace": NAMESPACE,
        },
        "type": typ,
    }
    return to_yaml(obj)


def gzip_bomb(size: int) -> bytes:
    """gzip of `size` zero bytes, built streaming (Go-like header, mtime 0)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(1 << 20)
    body = []
    crc = 0
    left = size
    while left:
        n = min(left, len(chunk))
        body.append(comp.compress(chunk[:n]))
        crc = zlib.crc32(chunk[:n], crc)
        left -= n
    body.append(comp.flush())
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + b"".join(body) + struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)


def bad_inputs(by_stem: dict[str, Variant]) -> list[tuple[str, bytes, str]]:
    worker = by_stem["worker-cloud-config-online"]
    worker_ign = by_stem["worker-ignition-online"]
    cc = b64(b"cloud-config")
    ign = b64(b"ignition")
    out: list[tuple[str, bytes, str]] = []

    garbage = bytearray(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    seed = b"rke2-payload not-yaml"
    while len(garbage) < 512:
        seed = hashlib.sha256(seed).digest()
        garbage += seed
    garbage += b"\x00\xff\xfe: [ {\n\t- ]]\x00"
    out.append(("not-yaml.txt", bytes(garbage), "binary garbage (PNG magic, NULs, random bytes): neither YAML nor JSON"))

    out.append(("configmap.yaml", (
        "apiVersion: v1\n"
        "data:\n"
        "  format: cloud-config\n"
        "  value: |\n"
        "    ## template: jinja\n"
        "    #cloud-config\n"
        "    runcmd:\n"
        "      - 'echo not a Secret'\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: demo-md-0-lookalike\n"
        f"  namespace: {NAMESPACE}\n"
    ).encode(), "a ConfigMap with format/value keys that look like bootstrap data: not a Secret"))

    out.append(("no-value.yaml", raw_secret_yaml("demo-md-0-novalue", {"format": cc}).encode(),
                "bootstrap-typed Secret with data.format only, no data.value"))

    good = b64(worker.userdata)
    broken = good[:40] + "!*" + good[42:]
    out.append(("bad-base64.yaml", raw_secret_yaml("demo-md-0-badb64", {"format": cc, "value": broken}).encode(),
                "data.value contains characters outside the base64 alphabet ('!' and '*' at offset 40)"))

    gzd = gz(worker.userdata, 6)
    out.append(("truncated-gzip.yaml",
                raw_secret_yaml("demo-md-0-truncgz", {"format": cc, "value": b64(gzd[: len(gzd) // 2])}).encode(),
                "cloud-config gzip stream cut in half (no trailer)"))
    out.append(("gzip-trailing.yaml",
                raw_secret_yaml("demo-md-0-gztrail", {"format": cc, "value": b64(gzd + b"JUNK")}).encode(),
                "valid gzip of a worker cloud-config followed by the 4 bytes JUNK"))

    bomb = gzip_bomb(200 * 1024 * 1024)
    out.append(("gzip-bomb.yaml", raw_secret_yaml("demo-md-0-gzbomb", {"format": cc, "value": b64(bomb)}).encode(),
                f"gzip of 200 MiB of zero bytes ({len(bomb)} compressed bytes): must hit a size limit"))

    out.append(("nested-gzip.yaml",
                raw_secret_yaml("demo-md-0-nestgz", {"format": cc, "value": b64(gz(gzd, 6))}).encode(),
                "gzip of gzip of a worker cloud-config (CAPRKE2 never nests)"))

    wrapper = json.loads(ignition_wrapper(gz(worker_ign.userdata, 6)))
    src = wrapper["ignition"]["config"]["replace"]["source"]
    head, payload = src.split(",", 1)
    wrapper["ignition"]["config"]["replace"]["source"] = head + "," + payload[:60] + "%%not*base64%%" + payload[60:]
    out.append(("bad-wrapper.yaml",
                raw_secret_yaml("demo-md-0-badwrap", {"format": ign, "value": b64(go_json(wrapper).encode())}).encode(),
                "Ignition gzip wrapper whose data URL base64 is corrupt"))

    wrapper2 = json.loads(ignition_wrapper(b""))
    wrapper2["ignition"]["config"]["replace"]["source"] = "data:text/plain;base64," + b64(worker_ign.userdata)
    out.append(("wrapper-not-gzip.yaml",
                raw_secret_yaml("demo-md-0-wrapnogz", {"format": ign, "value": b64(go_json(wrapper2).encode())}).encode(),
                "Ignition wrapper says compression gzip but the data URL holds plain Ignition JSON"))

    doc = json.loads(worker_ign.userdata)
    doc["ignition"]["version"] = "9.9.9"
    out.append(("unknown-ignition-version.yaml",
                raw_secret_yaml("demo-md-0-ign999", {"format": ign, "value": b64(go_json(doc).encode())}).encode(),
                "worker Ignition JSON with ignition.version 9.9.9"))
    return out


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def clean_dir(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)


def check_goldens_shape() -> None:
    """Self-test: the worker template fed the synthetic input of CAPRKE2's own unit tests
    (cloudinit_test.go: BaseUserData with one empty File{}, so `-   path: ` and an empty
    block) gives the documents those tests expect, restated here piece by piece."""

    def worker(**kw) -> str:
        args = dict(control_plane=False, files=[File("", "")], ntp=[], arbitrary={}, pre=[], post=[],
                    version="", airgapped=False, checksum="", cis=False, additional="")
        args.update(kw)
        return render_cloud_config(**args)

    files = CLOUD_CONFIG_HEADER + "\nwrite_files:\n-   path: \n    content: |\n      \n"
    online = (f"  - 'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={UPSTREAM_VERSION} "
              "INSTALL_RKE2_TYPE=\"agent\" sh -s -'\n")
    airgap = "  - 'INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE=\"agent\" sh /opt/install.sh'\n"
    cis = "  - '/opt/rke2-cis-script.sh'\n"
    tail = ("  - 'systemctl mask rke2-server.service || true'\n  - 'systemctl enable rke2-agent.service'\n"
            "  - 'systemctl start rke2-agent.service'\n  - 'mkdir -p /run/cluster-api'\n"
            f"  - '{SENTINEL}'\n")
    plain = files + "\n\nruncmd:\n"
    assert worker(airgapped=True) == plain + airgap + tail
    assert worker(airgapped=True, checksum="abcd") == (
        plain + "  - " + ARTIFACTS_CHECK.replace("{}", "abcd") + "\n" + airgap + tail)
    assert worker(version=UPSTREAM_VERSION) == plain + online + tail
    assert worker(ntp=["test.ntp.org"]) == (
        files + 'ntp:\n  enabled: true\n  servers:\n  - "test.ntp.org"\n\nruncmd:\n'
        + online.replace(UPSTREAM_VERSION, "") + tail)
    assert worker(cis=True, version=UPSTREAM_VERSION) == plain + online + cis + tail
    arbitrary = correct_arbitrary_data(UPSTREAM_ARBITRARY_DATA)
    assert worker(cis=True, version=UPSTREAM_VERSION, arbitrary=arbitrary) == (
        files + "\n\ndevice_aliases: \n  ephemeral0: /dev/vdb\n  "
        "\ndisk_setup: \n  ephemeral0:\n    layout: false\n    overwrite: false\n    table_type: mbr\n  "
        "\nlist: \n- data\n\nusers: \n- name: capv\n  sudo: ALL=(ALL) NOPASSWD:ALL\n"
        "\nruncmd:\n" + online + cis + tail)
    additional = cleanup_additional_cloud_init(UPSTREAM_ADDITIONAL_CONFIG)
    assert worker(cis=True, version=UPSTREAM_VERSION, additional=additional) == (
        plain + online + cis + tail + "device_aliases:\n  ephemeral0: /dev/vdb\ndisk_setup:\n  ephemeral0:\n"
        "    layout: false\n    overwrite: false\n    table_type: mbr\nfs_setup:\n  - device: ephemeral0.0\n"
        "    filesystem: ext4\n    label: ephemeral0\n")
    # the "CleanupCloudInit test" case
    assert cleanup_additional_cloud_init(
        CLOUD_CONFIG_HEADER + "hello: world\nusers:\n- name: rke2\nwrite_files:\n-   path: \n    content: |\n\n\n"
        "runcmd:\n  - 'mkdir -p /run/cluster-api'\n") == "hello: world\nusers:\n  - name: rke2\n"


def main() -> int:
    check_goldens_shape()
    assert cleanup_additional_cloud_init(ADDITIONAL_USER_CONFIG) == ADDITIONAL_CLOUD_CONFIG
    assert re.search("[a-f]", TOKEN) and not _resolves_to_non_string(TOKEN)
    keys = load_keys()
    vs = variants()
    for v in vs:
        build(v, keys)
    names = [v.name for v in vs if v.stem != "worker-ignition-online" or v.container == "yaml"]
    assert len(set(names)) == len(names), "secret names collide"
    # the JSON-form Secret is the same object as worker-ignition-online.yaml
    by_stem = {v.stem: v for v in vs if v.container == "yaml"}
    json_v = next(v for v in vs if v.container == "json")
    assert json_v.value == by_stem["worker-ignition-online"].value

    clean_dir(SECRETS)
    clean_dir(BAD)
    index: list[dict] = []
    objects: dict[str, dict] = {}  # stem -> Secret object (data form)
    readme_rows: list[tuple[str, str]] = []
    # creation order: the original fixtures, then the 3 non-bootstrap Secrets, then the
    # upstream cases, then the main-branch ones and their machine plans (so adding cases leaves
    # the earlier Secrets' metadata alone)
    seq = 0
    n_base = sum(1 for v in vs if v.container == "yaml" and not v.upstream_case and not v.main_branch)
    up_seq = n_base + 3
    for v in vs:
        if v.container == "json":
            obj = objects[v.stem]
            text = to_kubectl_json(obj)
            fname = f"{v.stem}.json"
        else:
            if v.upstream_case or v.main_branch:
                up_seq += 1
                this_seq = up_seq
            else:
                seq += 1
                this_seq = seq
            obj = bootstrap_secret(v, this_seq)
            objects[v.stem] = obj
            if v.form == "stringData":
                text = string_data_manifest(v)
            else:
                text = to_yaml(obj)
            fname = f"{v.stem}.yaml"
            (SECRETS / f"{v.stem}.userdata").write_bytes(v.userdata)
        (SECRETS / fname).write_text(text)
        index.append(index_entry(v, fname, text))
        readme_rows.append((f"secrets/{fname}", v.description))

    # non-bootstrap Secrets CAPRKE2 also creates, plus an ordinary one
    assert seq == n_base
    init_name = by_stem["init-cloud-config-online"].name
    extra_objs = [token_secret(seq + 1), ca_secret(keys, init_name, seq + 2), opaque_secret(seq + 3)]
    fixture_of = {obj["metadata"]["name"]: f"{stem}.yaml" for stem, obj in objects.items()}

    main_stems = {v.stem for v in vs if v.main_branch}
    all_objs = [o for stem, o in objects.items() if stem not in main_stems] + extra_objs
    all_objs.sort(key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))
    lst = {"apiVersion": "v1", "items": all_objs, "kind": "List", "metadata": {"resourceVersion": ""}}
    list_yaml = to_yaml(lst)
    list_json = to_kubectl_json(lst)
    (SECRETS / "list-all.yaml").write_text(list_yaml)
    (SECRETS / "list-all.json").write_text(list_json)
    members = [member(o, fixture_of.get(o["metadata"]["name"])) for o in all_objs]
    for fname, text, how in (("list-all.yaml", list_yaml, "kubectl get secrets -A -o yaml"),
                             ("list-all.json", list_json, "kubectl get secrets -A -o json")):
        index.append({"kind": "List", "file": fname, "printed_as": how, "items": members,
                      "bootstrap_count": sum(m["bootstrap"] for m in members),
                      "secret_file_sha256": sha256_hex(text.encode())})
        readme_rows.append((f"secrets/{fname}", f"kind: List of all {len(members)} Secrets ({how}): "
                            f"{sum(m['bootstrap'] for m in members)} bootstrap + demo-token + demo-ca + 1 Opaque"))

    multi = [objects["join-cloud-config-online"], extra_objs[0], objects["worker-ignition-gzip-online"]]
    multi_text = "---\n".join(to_yaml(o) for o in multi)
    (SECRETS / "multi-doc.yaml").write_text(multi_text)
    index.append({"kind": "MultiDocument", "file": "multi-doc.yaml", "separator": "---",
                  "items": [member(o, fixture_of.get(o["metadata"]["name"])) for o in multi],
                  "secret_file_sha256": sha256_hex(multi_text.encode())})
    readme_rows.append(("secrets/multi-doc.yaml",
                        "3 Secrets separated by `---`: join-cloud-config-online, demo-token (not bootstrap), "
                        "worker-ignition-gzip-online"))

    # CAPRKE2 main: its two bootstrap Secrets among machine plans, as `kubectl get secrets` lists them
    worker = by_stem["worker-ignition-main-branch"]
    join = by_stem["join-cloud-config-main-branch"]
    lookalike = ("## template: jinja\n#cloud-config\nruncmd:\n"
                 "  - 'echo a machine plan is not bootstrap data'\n").encode()
    plans = [
        machine_plan_secret(worker.name, "agent", up_seq + 1),
        machine_plan_secret(join.name, "server", up_seq + 2,
                            extra_data={"format": b"cloud-config", "value": lookalike},
                            extra_labels={"cluster.x-k8s.io/cluster-name": CLUSTER}),
    ]
    main_objs = [objects[v.stem] for v in vs if v.main_branch and v.container == "yaml"] + plans
    main_objs.sort(key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))
    main_list = {"apiVersion": "v1", "items": main_objs, "kind": "List", "metadata": {"resourceVersion": ""}}
    main_members = [member(o, fixture_of.get(o["metadata"]["name"])) for o in main_objs]
    for fname, text, how in (("list-main-branch.yaml", to_yaml(main_list), "kubectl get secrets -A -o yaml"),
                             ("list-main-branch.json", to_kubectl_json(main_list), "kubectl get secrets -A -o json")):
        (SECRETS / fname).write_text(text)
        index.append({"kind": "List", "file": fname, "printed_as": how, "caprke2": f"main {MAIN_BRANCH_COMMIT}",
                      "items": main_members,
                      "bootstrap_count": sum(m["bootstrap"] for m in main_members),
                      "secret_file_sha256": sha256_hex(text.encode())})
        readme_rows.append((f"secrets/{fname}", f"kind: List ({how}) of the 2 CAPRKE2 main-branch bootstrap "
                            "Secrets and 2 `rke.cattle.io/machine-plan` Secrets (Rancher system-agent plans; one "
                            "also carries `value`/`format` keys): the plans are skipped, never bootstrap data"))

    (SECRETS / "INDEX.json").write_text(json.dumps(index, indent=2, ensure_ascii=False) + "\n")

    manifest_rows = write_manifests(vs, keys)

    bad_rows = []
    bad_index = []
    for fname, data, why in bad_inputs(by_stem):
        (BAD / fname).write_bytes(data)
        bad_rows.append((f"bad/{fname}", why))
        bad_index.append({"file": fname, "problem": why, "bytes": len(data)})
    (BAD / "INDEX.json").write_text(json.dumps(bad_index, indent=2) + "\n")

    write_readme(readme_rows, manifest_rows, bad_rows)
    print(f"wrote {len(index)} index entries, {len(bad_rows)} bad inputs")
    return 0


def write_readme(rows, manifest_rows, bad_rows) -> None:
    lines = [
        "# Test data",
        "",
        "Generated by `gen/generate.py`; do not edit by hand. Regenerate with",
        "",
        "    python3 testdata/gen/generate.py",
        "",
        "(Python 3.11, stdlib + `cryptography`). Output is deterministic: the fake CA keys are",
        "cached in `gen/keys/` and reused. All key material, tokens and passwords are fake.",
        "",
        f"Cluster `{CLUSTER}`, namespace `{NAMESPACE}`, RKE2 `{VERSION}`, token `{TOKEN}` in every Secret.",
        "Every bootstrap Secret `secrets/X.yaml` has the exact decoded user data in `secrets/X.userdata`",
        "(the decompressed cloud-config text, or the inner Ignition JSON for the gzip wrapper).",
        "`secrets/INDEX.json` lists the expected facts (role, format, gzip, server, token, tls-san,",
        "files with size/sha256 of the decoded content, certificates, commands, sizes, yaml_valid)",
        "computed by the generator from its inputs, independently of the decoder.",
        "`bad/INDEX.json` lists the malformed inputs.",
        "",
        "## Fixtures",
        "",
    ]
    lines += [f"- `{p}`: {d}" for p, d in rows]
    lines += [
        "",
        "## Manifests",
        "",
        "`manifests/X.yaml` restates fixture `secrets/X.yaml` as the Cluster API objects CAPRKE2 v0.25.0",
        "renders it from (v1beta2 shapes: Cluster, RKE2ControlPlane, for workers RKE2ConfigTemplate and",
        "MachineDeployment, the Secrets they reference, and the Secrets CAPRKE2 finds in the cluster: the",
        "join token and, for init, the four CAs). Every fixture has one except the empty-format, stringData,",
        "JSON-container and CAPRKE2 main-branch ones. `manifests/INDEX.json` gives for each: role, format,",
        "gzip, the exact expected user data (`secrets/X.userdata`), the Secret name prefix (CAPRKE2 adds",
        "random suffixes), and `divergences`: where a faithful render may differ from it (CAPRKE2's own",
        "CIS script, where the generator has rke2-payload's stand-in; Ignition's gzip data URLs, which",
        "come from Python's zlib: compare decoded contents).",
        "",
    ]
    lines += [f"- `{p}`: {d}" for p, d in manifest_rows]
    lines += ["", "## Bad inputs (must fail with a clear error, never panic or hang)", ""]
    lines += [f"- `{p}`: {d}" for p, d in bad_rows]
    lines += ["", "## Generator", "",
              "- `gen/generate.py`: the generator",
              "- `gen/keys/`: cached FAKE CA and registry-client key pairs (see `gen/keys/README`)",
              "- `gen/gogzip/`: a Go program that prints what Go's `compress/gzip` at its default level (what",
              "  CAPRKE2's `gzipUserData` uses) makes of each file given; its output is `go-gzip-sizes.json`,",
              "  which a test compares `size`'s gzip estimate against. To refresh it after regenerating the",
              "  fixtures: `go run testdata/gen/gogzip/main.go testdata/secrets/*.userdata > testdata/go-gzip-sizes.json`",
              "  (the `.userdata` files are the decoded payloads of the single-Secret fixtures; any Go; measured",
              "  with 1.19, Debian's golang-1.19-go).",
              ""]
    (TESTDATA / "README.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
