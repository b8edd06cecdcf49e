//! CA material: every PEM certificate and private key in the payload's files, summarised.
//!
//! Certificates get subject, issuer, serial, validity, SHA-256 of the DER, CA flag and path
//! length, and key algorithm and size. Private keys get algorithm and size only, and whether they
//! belong to a certificate of the payload. Key bytes live in buffers that are wiped on drop.

use std::borrow::Cow;

use pkcs8::der::asn1::ObjectIdentifier;
use sha2::{Digest, Sha256};
use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::public_key::PublicKey;
use zeroize::Zeroizing;

use crate::checks::{Check, Finding};
use crate::codec::digest::{hex, sha256_hex};
use crate::codec::time::rfc3339;
use crate::document::File;

/// A certificate found in a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Certificate {
    /// The file holding it.
    pub path: String,
    /// Which CA this is, from its path (`server-ca`, `client-ca`, `etcd-peer-ca`, `etcd-server-ca`,
    /// `registry`, `datastore`, `etcd-s3`), if known.
    pub purpose: Option<Cow<'static, str>>,
    /// Subject, RFC 4514 style (`CN=kubernetes`).
    pub subject: String,
    /// Issuer, the same style.
    pub issuer: String,
    /// Serial number in hex.
    pub serial: String,
    /// Start of validity, RFC 3339.
    pub not_before: String,
    /// End of validity, RFC 3339.
    pub not_after: String,
    /// End of validity, seconds since the Unix epoch.
    pub not_after_unix: i64,
    /// Hex SHA-256 of the DER encoding (the usual certificate fingerprint).
    pub sha256: String,
    /// Basic constraints CA flag.
    pub is_ca: bool,
    /// Basic constraints path length, if limited.
    pub path_len: Option<u32>,
    /// Public key algorithm (`RSA`, `EC P-256`, `Ed25519`, …).
    pub key_algorithm: String,
    /// Key size in bits, where that means something.
    pub key_bits: Option<u32>,
    /// Hex SHA-256 of the public key material, to pair keys with certificates.
    #[serde(skip)]
    pub(crate) public_key_id: Option<String>,
}

/// A private key found in a file: metadata only.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PrivateKey {
    /// The file holding it.
    pub path: String,
    /// The PEM label (`RSA PRIVATE KEY`, `PRIVATE KEY`, `EC PRIVATE KEY`, …).
    pub label: String,
    /// Algorithm (`RSA`, `EC P-256`, `Ed25519`, or `unknown`).
    pub algorithm: String,
    /// Key size in bits, where that means something.
    pub bits: Option<u32>,
    /// Whether the key is encrypted (and so unreadable without a passphrase).
    pub encrypted: bool,
    /// The path of the certificate in this payload whose public key it matches.
    pub matches_certificate: Option<String>,
    /// Hex SHA-256 of the public key material.
    #[serde(skip)]
    pub(crate) public_key_id: Option<String>,
}

/// Everything PEM in a payload.
#[derive(Debug, Clone, Default)]
pub(crate) struct Material {
    /// Certificates, in file order.
    pub(crate) certificates: Vec<Certificate>,
    /// Private keys, in file order.
    pub(crate) keys: Vec<PrivateKey>,
    /// Blocks that could not be read.
    pub(crate) problems: Vec<Finding>,
}

/// Reads every PEM block of every inline file.
pub(crate) fn scan<'f>(files: impl IntoIterator<Item = &'f File>) -> Material {
    let mut material = Material::default();
    for file in files {
        let Some(bytes) = file.bytes() else {
            continue;
        };
        if memchr::memmem::find(bytes, b"-----BEGIN ").is_none() {
            continue;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        for block in pem_blocks(text) {
            read_block(&file.path, block, &mut material);
        }
    }
    for key in &mut material.keys {
        key.matches_certificate = key.public_key_id.as_ref().and_then(|id| {
            material
                .certificates
                .iter()
                .find(|c| c.public_key_id.as_ref() == Some(id))
                .map(|c| c.path.clone())
        });
    }
    material
}

/// Which CA a path holds, as CAPRKE2 lays them out.
pub(crate) fn purpose(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    if path.contains("/server/tls/etcd/") {
        return match stem {
            "peer-ca" => Some("etcd-peer-ca"),
            "server-ca" => Some("etcd-server-ca"),
            _ => None,
        };
    }
    if path.contains("/server/tls/") {
        return match stem {
            "server-ca" => Some("server-ca"),
            "client-ca" => Some("client-ca"),
            _ => None,
        };
    }
    if path.starts_with("/etc/rancher/rke2/tls/") {
        return Some("registry");
    }
    if stem.starts_with("datastore-") {
        return Some("datastore");
    }
    if stem.starts_with("etcd-s3") {
        return Some("etcd-s3");
    }
    None
}

struct Block<'t> {
    label: &'t str,
    headers: bool,
    body: String,
}

fn pem_blocks(text: &str) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    let mut rest = text;
    let begin = memchr::memmem::Finder::new("-----BEGIN ");
    while let Some(start) = begin.find(rest.as_bytes()) {
        let after = &rest[start + 11..];
        let Some(end_label) = after.find("-----") else {
            break;
        };
        let label = &after[..end_label];
        let body_start = &after[end_label + 5..];
        let end_marker = format!("-----END {label}-----");
        let Some(end) = memchr::memmem::find(body_start.as_bytes(), end_marker.as_bytes()) else {
            blocks.push(Block {
                label,
                headers: false,
                body: String::new(),
            });
            break;
        };
        let raw = &body_start[..end];
        // RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`) are the lines with a colon.
        let headers = memchr::memchr(b':', raw.as_bytes()).is_some();
        let mut body = String::with_capacity(raw.len());
        for line in raw.lines().filter(|l| !headers || !l.contains(':')) {
            let line = line.trim_ascii();
            if line.bytes().any(|b| b.is_ascii_whitespace()) {
                body.extend(line.split_ascii_whitespace());
            } else {
                // The common case: a whole line of base64 at once.
                body.push_str(line);
            }
        }
        blocks.push(Block {
            label,
            headers,
            body,
        });
        rest = &body_start[end + end_marker.len()..];
    }
    blocks
}

fn read_block(path: &str, block: Block<'_>, material: &mut Material) {
    let problem =
        |message: String| Finding::located(Check::PemInvalid, message, Some(path.to_owned()), None);
    if block.body == crate::sensitive::PLACEHOLDER && block.label.ends_with("PRIVATE KEY") {
        material.keys.push(PrivateKey {
            path: path.to_owned(),
            label: block.label.to_owned(),
            algorithm: "redacted".to_owned(),
            bits: None,
            encrypted: false,
            matches_certificate: None,
            public_key_id: None,
        });
        return;
    }
    let der = match crate::codec::b64::decode(&block.body) {
        Ok(der) if !der.is_empty() => Zeroizing::new(der),
        Ok(_) => {
            material.problems.push(problem(format!(
                "PEM block {} is empty or has no END line",
                block.label
            )));
            return;
        }
        Err(e) => {
            material.problems.push(problem(format!(
                "PEM block {} has a corrupt body: {e}",
                block.label
            )));
            return;
        }
    };
    if block.label == "CERTIFICATE" {
        match certificate(path, &der) {
            Ok(cert) => material.certificates.push(cert),
            Err(why) => material
                .problems
                .push(problem(format!("certificate cannot be read: {why}"))),
        }
    } else if block.label.ends_with("PRIVATE KEY") {
        material
            .keys
            .push(private_key(path, block.label, block.headers, &der));
    }
}

fn certificate(path: &str, der: &[u8]) -> Result<Certificate, String> {
    let (_, cert) = X509Certificate::from_der(der).map_err(|e| e.to_string())?;
    let (is_ca, path_len) = match cert.basic_constraints() {
        Ok(Some(bc)) => (bc.value.ca, bc.value.path_len_constraint),
        _ => (false, None),
    };
    let spki = cert.public_key();
    let (key_algorithm, key_bits, public_key_id) = match spki.parsed() {
        Ok(PublicKey::RSA(rsa)) => (
            "RSA".to_owned(),
            u32::try_from(rsa.key_size()).ok(),
            Some(sha256_hex(strip_zeros(rsa.modulus))),
        ),
        Ok(PublicKey::EC(point)) => {
            let curve = spki
                .algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.as_oid().ok())
                .map(|oid| curve_name(&oid.to_id_string()))
                .unwrap_or("EC");
            (
                curve.to_owned(),
                u32::try_from(point.key_size()).ok(),
                Some(sha256_hex(point.data())),
            )
        }
        Ok(PublicKey::Unknown(bytes)) => {
            let oid = spki.algorithm.algorithm.to_id_string();
            let name = match oid.as_str() {
                "1.3.101.112" => "Ed25519",
                "1.3.101.113" => "Ed448",
                _ => "unknown",
            };
            (name.to_owned(), None, Some(sha256_hex(bytes)))
        }
        _ => ("unknown".to_owned(), None, None),
    };
    let validity = cert.validity();
    Ok(Certificate {
        path: path.to_owned(),
        purpose: purpose(path).map(Cow::Borrowed),
        subject: cert.subject().to_string(),
        issuer: cert.issuer().to_string(),
        serial: format!("{:x}", cert.serial),
        not_before: rfc3339(validity.not_before.timestamp()),
        not_after: rfc3339(validity.not_after.timestamp()),
        not_after_unix: validity.not_after.timestamp(),
        sha256: {
            let digest = Sha256::digest(der);
            hex(&digest)
        },
        is_ca,
        path_len,
        key_algorithm,
        key_bits,
        public_key_id,
    })
}

fn strip_zeros(bytes: &[u8]) -> &[u8] {
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    &bytes[first..]
}

fn curve_name(oid: &str) -> &'static str {
    match oid {
        "1.2.840.10045.3.1.7" => "EC P-256",
        "1.3.132.0.34" => "EC P-384",
        "1.3.132.0.35" => "EC P-521",
        _ => "EC",
    }
}

const RSA_OID: &str = "1.2.840.113549.1.1.1";
const EC_OID: &str = "1.2.840.10045.2.1";

fn private_key(path: &str, label: &str, headers: bool, der: &[u8]) -> PrivateKey {
    let mut key = PrivateKey {
        path: path.to_owned(),
        label: label.to_owned(),
        algorithm: "unknown".to_owned(),
        bits: None,
        encrypted: headers || label.starts_with("ENCRYPTED"),
        matches_certificate: None,
        public_key_id: None,
    };
    if key.encrypted {
        return key;
    }
    match label {
        "RSA PRIVATE KEY" => rsa_key(der, &mut key),
        "EC PRIVATE KEY" => ec_key(der, None, &mut key),
        "PRIVATE KEY" => {
            if let Ok(info) = pkcs8::PrivateKeyInfoRef::try_from(der) {
                let oid = info.algorithm.oid.to_string();
                let inner = info.private_key.as_bytes();
                match oid.as_str() {
                    RSA_OID => rsa_key(inner, &mut key),
                    EC_OID => {
                        let curve = info
                            .algorithm
                            .parameters
                            .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
                            .map(|o| o.to_string());
                        ec_key(inner, curve, &mut key);
                    }
                    "1.3.101.112" => {
                        key.algorithm = "Ed25519".to_owned();
                        key.bits = Some(256);
                        key.public_key_id =
                            info.public_key.and_then(|k| k.as_bytes()).map(sha256_hex);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    key
}

fn rsa_key(der: &[u8], key: &mut PrivateKey) {
    if let Ok(rsa) = pkcs1::RsaPrivateKeyRef::try_from(der) {
        let modulus = strip_zeros(rsa.modulus.as_bytes());
        key.algorithm = "RSA".to_owned();
        key.bits = modulus_bits(modulus);
        key.public_key_id = Some(sha256_hex(modulus));
    }
}

fn modulus_bits(modulus: &[u8]) -> Option<u32> {
    let first = *modulus.first()?;
    let len = u32::try_from(modulus.len()).ok()?;
    Some((len - 1) * 8 + (8 - first.leading_zeros()))
}

fn ec_key(der: &[u8], curve: Option<String>, key: &mut PrivateKey) {
    if let Ok(ec) = sec1::EcPrivateKey::try_from(der) {
        let curve = curve.or_else(|| {
            ec.parameters
                .and_then(|p| p.named_curve())
                .map(|o| o.to_string())
        });
        key.algorithm = curve.as_deref().map_or("EC", curve_name).to_owned();
        key.bits = Some(u32::try_from(ec.private_key.len() * 8).unwrap_or(0));
        key.public_key_id = ec.public_key.map(sha256_hex);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purposes_from_caprke2_paths() {
        assert_eq!(
            purpose("/var/lib/rancher/rke2/server/tls/server-ca.crt"),
            Some("server-ca")
        );
        assert_eq!(
            purpose("/var/lib/rancher/rke2/server/tls/client-ca.key"),
            Some("client-ca")
        );
        assert_eq!(
            purpose("/var/lib/rancher/rke2/server/tls/etcd/peer-ca.crt"),
            Some("etcd-peer-ca")
        );
        assert_eq!(
            purpose("/var/lib/rancher/rke2/server/tls/etcd/server-ca.key"),
            Some("etcd-server-ca")
        );
        assert_eq!(purpose("/etc/rancher/rke2/tls/tls.key"), Some("registry"));
        assert_eq!(purpose("/etc/ssl/other.crt"), None);
    }

    #[test]
    fn corrupt_and_truncated_pem_are_problems_not_panics() {
        let file = |text: &str| File {
            path: "/x.crt".into(),
            mode: None,
            owner: None,
            encoding: None,
            content: crate::document::Content::Inline(text.as_bytes().to_vec()),
            append: false,
        };
        let m = scan(&[file(
            "-----BEGIN CERTIFICATE-----\nMIIB*AAA\n-----END CERTIFICATE-----\n",
        )]);
        assert_eq!(m.problems.len(), 1);
        assert!(m.problems[0].message.contains("corrupt"));
        let m = scan(&[file(
            "-----BEGIN CERTIFICATE-----\nMIIBAAAA\n-----END CERTIFICATE-----\n",
        )]);
        assert_eq!(m.problems.len(), 1);
        let m = scan(&[file("-----BEGIN CERTIFICATE-----\nMIIB")]);
        assert_eq!(m.problems.len(), 1);
        let m = scan(&[file(
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END RSA PRIVATE KEY-----\n",
        )]);
        assert!(m.keys[0].encrypted);
        assert_eq!(m.keys[0].algorithm, "unknown");
    }

    #[test]
    fn modulus_bits_counts_leading_zeros() {
        assert_eq!(modulus_bits(&[0x80, 0, 0]), Some(24));
        assert_eq!(modulus_bits(&[0x01, 0]), Some(9));
        assert_eq!(modulus_bits(&[]), None);
    }
}
