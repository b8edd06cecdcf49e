#!/usr/bin/env python3
"""Generate the CAPRKE2 bootstrap-Secret test fixtures of rke2-payload.

Run from anywhere:  python3 testdata/gen/generate.py

Outputs (all under testdata/):
  secrets/*.yaml|*.json   Secrets shaped like `kubectl get secret -o yaml|json` prints them
  secrets/*.userdata      the exact user data each Secret decodes to
  secrets/INDEX.json      machine-readable facts about every fixture, computed from the
                          generator's own inputs (independent of the Rust decoder)
  bad/*                   malformed inputs the decoder must reject cleanly
  README.md               one line per fixture

Requirements: Python 3.11, the standard library and `cryptography` (only used to create
the fake CA key material the first time; the result is cached in gen/keys/).

Everything is deterministic.  The only random input is the key material, which is
created once and then reused from gen/keys/, so re-running gives byte-identical files.

The user-data text is rendered by hand so that it has the same bytes as the Go
text/template output of CAPRKE2 v0.25.0 (cloud-config) and the same JSON shape as the
Butane -> Ignition 3.3.0 output (Ignition).  gzip streams come from Python's zlib, so
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

# A stand-in for the CIS node preparation script (not upstream's text).  It contains tab
# characters on purpose, like the real one.
CIS_SCRIPT = (
    "#!/bin/bash\n"
    "# rke2-payload fixture: CIS node preparation stand-in\n"
    "set -e\n"
    "\n"
    "if ! id etcd >/dev/null 2>&1; then\n"
    "\tuseradd -r -c \"etcd user\" -s /sbin/nologin -M etcd -U\n"
    "fi\n"
    "\n"
    "for f in /usr/share/rke2/rke2-cis-sysctl.conf /usr/local/share/rke2/rke2-cis-sysctl.conf; do\n"
    "\tif [ -f \"$f\" ]; then\n"
    "\t\tcp -f \"$f\" /etc/sysctl.d/90-rke2-cis.conf\n"
    "\tfi\n"
    "done\n"
    "sysctl -p /etc/sysctl.d/90-rke2-cis.conf\n"
)

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
    additional_config: str = ""  # cleaned additionalUserData.config (cloud-config only)
    extra_post: bool = False
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

    @property
    def is_cp(self) -> bool:
        return self.role in ("init", "join")


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


def config_pairs(v: Variant) -> list[tuple[str, object]]:
    agent: list[tuple[str, object]] = [("cloud-provider-name", "external")]
    if v.role == "worker":
        agent.append(("kubelet-arg", [f"provider-id={provider_id(v)}", "max-pods=110",
                                      "eviction-hard=memory.available<500Mi"]))
        agent.append(("node-label", ["workload=general"]))
    if v.cis:
        agent.append(("profile", CIS_PROFILE))
    if v.role != "init":
        agent.append(("server", v.server))
    agent.append(("token", TOKEN))
    if v.role == "worker":
        return agent
    server: list[tuple[str, object]] = [("cni", ["calico"]), ("disable", ["rke2-ingress-nginx"])]
    if v.etcd_s3:
        server += [
            ("etcd-s3", True),
            ("etcd-s3-access-key", S3_ACCESS_KEY),
            ("etcd-s3-bucket", "demo-etcd-snapshots"),
            ("etcd-s3-endpoint", "s3.eu-west-1.amazonaws.com"),
            ("etcd-s3-folder", "demo"),
            ("etcd-s3-region", "eu-west-1"),
            ("etcd-s3-secret-key", S3_SECRET_KEY),
            ("etcd-s3-skip-ssl-verify", True),  # = !enforceSslVerify (left at its default)
        ]
    server += [
        ("etcd-snapshot-retention", "10"),
        ("etcd-snapshot-schedule-cron", "*/15 * * * *"),
        ("tls-san", list(TLS_SAN)),
    ]
    if v.encryption:
        server.append(("secrets-encryption-provider", "secretbox"))
    server += [("cluster-cidr", "10.42.0.0/16"), ("service-cidr", "10.43.0.0/16")]
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
                {"secretbox": {"keys": [{"name": "enckey", "secret": b64(ENCRYPTION_KEY)}]}},
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
    files.append(File(SYSCTL_FILE[0], SYSCTL_FILE[1], OWNER, SYSCTL_FILE[2]))
    if v.extra_files:
        # user-supplied base64 text without trailing newline (the YAML block adds one)
        files.append(File("/etc/motd.d/10-caprke2", b64(MOTD_TEXT.encode()), OWNER, "0644", "base64"))
        if v.fmt == "cloud-config":  # gzip+base64 is rejected by the webhook for Ignition
            files.append(File("/usr/local/bin/node-ready.sh", b64(gz(NODE_READY_SCRIPT.encode(), 9)),
                              OWNER, "0755", "gzip+base64"))
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
                    else f"curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={VERSION} sh -s - server")
    else:
        cmds.append('INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE="agent" sh /opt/install.sh'
                    if v.airgapped else
                    f'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={VERSION} INSTALL_RKE2_TYPE="agent" sh -s -')
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
                    else f"curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={VERSION} sh -s - server")
    else:
        cmds.append('INSTALL_RKE2_ARTIFACT_PATH=/opt/rke2-artifacts INSTALL_RKE2_TYPE="agent" sh /opt/install.sh'
                    if v.airgapped else
                    f'curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION={VERSION} INSTALL_RKE2_TYPE="agent" sh -s -')
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
            f"server {s}\n" for s in NTP_SERVERS) + CHRONY_TAIL
        entries.append(("/etc/chrony.conf", chrony.encode(), "", "0644", ""))
    units = [{"contents": RKE2_INSTALL_UNIT, "enabled": True, "name": "rke2-install.service"}]
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


def build(v: Variant, keys) -> None:
    v.name = secret_name(v)
    files = write_files(v, keys)
    pre = list(CP_PRE_COMMANDS) if v.is_cp else []
    post = [POST_COMMAND] + (EXTRA_POST_COMMANDS if v.extra_post else [])
    if v.fmt == "cloud-config":
        text = render_cloud_config(
            control_plane=v.is_cp, files=files, ntp=NTP_SERVERS if v.ntp else [], arbitrary={},
            pre=pre, post=post, version=VERSION, airgapped=v.airgapped, checksum=v.checksum,
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
            else:
                lines.append(f"{pad}{k}: {scalar_text(val)}")
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict) and item:
                sub = emit_yaml(item, indent + 2)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                lines += sub
            else:
                lines.append(f"{pad}- {scalar_text(item)}")
    else:
        raise TypeError(obj)
    return lines


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
# Variants
# --------------------------------------------------------------------------------------

ADDITIONAL_CLOUD_CONFIG = (  # yaml.v3 re-encoding of additionalUserData.config (sorted keys)
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
                ntp=True, cis=True, extra_files=True, additional_config=ADDITIONAL_CLOUD_CONFIG, extra_post=True,
                description="init cloud-config with base64 + gzip+base64 spec.files, registry auth + TLS, etcd S3 keys, "
                            "encryption-config.json, NTP, CIS profile + script, additionalUserData.config, %q escapes"),
        Variant("init-ignition-extras", "init", "ignition", registry=True, etcd_s3=True, encryption=True, ntp=True,
                extra_files=True,
                description="init Ignition with registry auth + TLS (files without mode), etcd S3 keys, "
                            "encryption-config.json, NTP (chrony), a base64 spec.files entry"),
        Variant("worker-cloud-config-stringdata", "worker", "cloud-config", form="stringData",
                description="hand-written worker manifest using stringData (plain text value, literal block)"),
        Variant("worker-ignition-online", "worker", "ignition", container="json",
                description="worker-ignition-online as `kubectl get secret -o json` prints it"),
    ]
    return out


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
        "version": None if v.airgapped else VERSION,
        "cis_profile": CIS_PROFILE if v.cis else None,
        "ntp_servers": list(NTP_SERVERS) if v.ntp else [],
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
    }


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
    """Cheap self-test against the documented worker example (§3.3 shape)."""
    text = render_cloud_config(control_plane=False, files=[File("", "")], ntp=[], arbitrary={}, pre=[], post=[],
                               version="v1.25.6+rke2r1", airgapped=False, checksum="", cis=False, additional="")
    assert text.startswith(CLOUD_CONFIG_HEADER + "\nwrite_files:\n-   path: \n    content: |\n      \n\n\nruncmd:\n"), text


def main() -> int:
    check_goldens_shape()
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
    seq = 0
    for v in vs:
        if v.container == "json":
            obj = objects[v.stem]
            text = to_kubectl_json(obj)
            fname = f"{v.stem}.json"
        else:
            seq += 1
            obj = bootstrap_secret(v, seq)
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
    init_name = by_stem["init-cloud-config-online"].name
    extra_objs = [token_secret(seq + 1), ca_secret(keys, init_name, seq + 2), opaque_secret(seq + 3)]
    fixture_of = {obj["metadata"]["name"]: f"{stem}.yaml" for stem, obj in objects.items()}

    all_objs = list(objects.values()) + extra_objs
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

    (SECRETS / "INDEX.json").write_text(json.dumps(index, indent=2, ensure_ascii=False) + "\n")

    bad_rows = []
    bad_index = []
    for fname, data, why in bad_inputs(by_stem):
        (BAD / fname).write_bytes(data)
        bad_rows.append((f"bad/{fname}", why))
        bad_index.append({"file": fname, "problem": why, "bytes": len(data)})
    (BAD / "INDEX.json").write_text(json.dumps(bad_index, indent=2) + "\n")

    write_readme(readme_rows, bad_rows)
    print(f"wrote {len(index)} index entries, {len(bad_rows)} bad inputs")
    return 0


def write_readme(rows, bad_rows) -> None:
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
    lines += ["", "## Bad inputs (must fail with a clear error, never panic or hang)", ""]
    lines += [f"- `{p}`: {d}" for p, d in bad_rows]
    lines += ["", "## Generator", "",
              "- `gen/generate.py`: the generator",
              "- `gen/keys/`: cached FAKE CA and registry-client key pairs (see `gen/keys/README`)",
              "- `gen/gogzip/`: a Go program that prints what Go's `compress/gzip` at its default level (what",
              "  CAPRKE2's `gzipUserData` uses) makes of each file given; its output is `go-gzip-sizes.json`,",
              "  which a test compares `size`'s gzip estimate against. To refresh it after regenerating the",
              "  fixtures: decode every single-Secret fixture (`rke2-payload decode FILE -o DIR/NAME.ud`), then",
              "  `go run testdata/gen/gogzip/main.go DIR/*.ud > testdata/go-gzip-sizes.json` (any Go; measured with 1.19).",
              ""]
    (TESTDATA / "README.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
