#!/usr/bin/env python3
"""What a user writes today: the `inspect` extraction in Python (PyYAML's C loader, base64,
gzip, json, hashlib). Prints one JSON document like `rke2-payload inspect --output json`, with
the same core facts: format, gzip, role, server, token SHA-256, tls-san, version, air-gapped,
files (path, mode, size, SHA-256) and certificate fingerprints.

    bench/reference.py DUMP > out.json
"""
import base64
import gzip
import hashlib
import json
import re
import sys
import urllib.parse

import yaml

LOADER = yaml.CSafeLoader


def data_url(url):
    head, _, data = url.partition(",")
    if head.endswith(";base64"):
        return base64.b64decode(data)
    return urllib.parse.unquote_to_bytes(data)


def files_of(userdata, fmt):
    out = []
    if fmt == "ignition":
        doc = json.loads(userdata)
        for f in doc.get("storage", {}).get("files", []):
            src = (f.get("contents") or {}).get("source") or ""
            body = data_url(src) if src.startswith("data:") else b""
            if (f.get("contents") or {}).get("compression") == "gzip":
                body = gzip.decompress(body)
            mode = f.get("mode")
            out.append((f["path"], None if mode is None else "%04o" % mode, body))
        units = doc.get("systemd", {}).get("units", [])
        return out, units
    text = userdata.decode()
    # The checksum line CAPRKE2 writes is not YAML: quote it as rke2-payload's tolerant pass does.
    text = re.sub(r"^(\s*)- (\[\[.*)$", lambda m: m.group(1) + "- '" + m.group(2).replace("'", "''") + "'", text, flags=re.M)
    doc = yaml.load(text, Loader=LOADER) or {}
    for f in doc.get("write_files") or []:
        content = f.get("content") or ""
        enc = (f.get("encoding") or "").lower()
        body = content.encode() if isinstance(content, str) else content
        if "b64" in enc or "base64" in enc:
            body = base64.b64decode(body)
        if enc.startswith("gz"):
            body = gzip.decompress(body)
        perm = f.get("permissions")
        out.append((f.get("path"), perm, body))
    return out, doc.get("runcmd") or []


def inspect(secret):
    data = secret.get("data") or {}
    if "value" not in data:
        return None
    value = base64.b64decode(data["value"])
    fmt = base64.b64decode(data.get("format", "")).decode() or "cloud-config"
    compressed = False
    if value[:2] == b"\x1f\x8b":
        value, compressed = gzip.decompress(value), True
    elif fmt == "ignition":
        wrapper = json.loads(value)
        replace = wrapper.get("ignition", {}).get("config", {}).get("replace", {})
        if str(replace.get("source", "")).startswith("data:"):
            value = data_url(replace["source"])
            if replace.get("compression") == "gzip":
                value, compressed = gzip.decompress(value), True
    if not (value.lstrip().startswith(b"{") or b"#cloud-config" in value[:64]):
        return None
    files, commands = files_of(value, fmt)
    config = {}
    for path, _, body in files:
        if path == "/etc/rancher/rke2/config.yaml":
            config = yaml.load(body, Loader=LOADER) or {}
    text = "\n".join(json.dumps(c) for c in commands) + "".join(b.decode("latin-1") for _, _, b in files if _ == "/etc/rke2-install.sh")
    version = re.search(r"INSTALL_RKE2_VERSION=(\S+)", text)
    certs = []
    for path, _, body in files:
        for block in re.findall(rb"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", body, re.S):
            certs.append({"path": path, "sha256": hashlib.sha256(base64.b64decode(b"".join(block.split()))).hexdigest()})
    token = config.get("token")
    return {
        "name": secret["metadata"].get("name"),
        "namespace": secret["metadata"].get("namespace"),
        "format": fmt,
        "gzip": compressed,
        "rke2": {
            "server": config.get("server"),
            "token_sha256": hashlib.sha256(str(token).encode()).hexdigest() if token else None,
            "tls_san": config.get("tls-san") or [],
            "version": version.group(1) if version else None,
            "airgapped": "INSTALL_RKE2_ARTIFACT_PATH" in text,
        },
        "files": [{"path": p, "mode": m, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()} for p, m, b in files],
        "certificates": certs,
    }


def main():
    with open(sys.argv[1], "rb") as f:
        raw = f.read()
    if raw.lstrip()[:1] in (b"{", b"["):
        doc = json.loads(raw)
    else:
        doc = yaml.load(raw, Loader=LOADER)
    items = doc.get("items", [doc]) if isinstance(doc, dict) else []
    secrets = [r for r in (inspect(s) for s in items if s.get("kind") == "Secret") if r]
    json.dump({"schema": "reference", "secrets": secrets}, sys.stdout)


if __name__ == "__main__":
    main()
