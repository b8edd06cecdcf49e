//! The CA key pairs of an initial control plane, made as CAPRKE2 makes them (through Cluster
//! API's certificate helper): an RSA-2048 key (PKCS#1 PEM) and a self-signed certificate with
//! subject and issuer `CN=kubernetes`, serial 0, valid from five minutes before now for 3650
//! days, key usage digitalSignature + keyEncipherment + keyCertSign (critical), basic
//! constraints CA with path length 0 (critical), a SHA-1 subject key identifier, signed with
//! sha256WithRSAEncryption.
//!
//! The DER is written here: the certificate is one fixed shape with three variable parts (the
//! key, the validity, the signature), so a general X.509 builder would add a dependency stack
//! for nothing.

use rand::rngs::StdRng;
use rsa::pkcs1::{EncodeRsaPrivateKey, EncodeRsaPublicKey, LineEnding};
use sha1::Digest as _;
use zeroize::Zeroizing;

/// One CA: its certificate and private key, both PEM.
pub(crate) struct CaPair {
    pub(crate) cert_pem: String,
    pub(crate) key_pem: Zeroizing<String>,
}

/// Why a key pair could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not make a CA key pair: {0}")]
pub struct KeyError(String);

const BITS: usize = 2048;
const VALIDITY_DAYS: i64 = 3650;

/// A fresh CA, valid from `now - 5 min`.
pub(crate) fn new_ca(rng: &mut StdRng, now: i64) -> Result<CaPair, KeyError> {
    let key = rsa::PrivateKey::new(rng, BITS).map_err(|e| KeyError(e.to_string()))?;
    let public = key
        .to_public_key()
        .to_pkcs1_der()
        .map_err(|e| KeyError(e.to_string()))?;
    let public = public.as_bytes();
    let not_before = now - 5 * 60;
    let not_after = now + VALIDITY_DAYS * 86_400;
    let tbs = tbs_certificate(public, not_before, not_after);
    let signer = rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(key.clone());
    let signature =
        rsa::signature::Signer::try_sign(&signer, &tbs).map_err(|e| KeyError(e.to_string()))?;
    let signature: Box<[u8]> = signature.into();
    let cert = seq(&[tbs, sha256_with_rsa(), bit_string(&signature)].concat());
    let key_pem = key
        .to_pkcs1_pem(LineEnding::LF)
        .map_err(|e| KeyError(e.to_string()))?;
    Ok(CaPair {
        cert_pem: pem("CERTIFICATE", &cert),
        key_pem,
    })
}

fn tbs_certificate(public_key: &[u8], not_before: i64, not_after: i64) -> Vec<u8> {
    let version = tagged(0xa0, &integer(&[2]));
    let serial = integer(&[0]);
    let name = seq(&set(&seq(&[
        oid(&[0x55, 0x04, 0x03]),
        tlv(0x13, b"kubernetes"),
    ]
    .concat())));
    let validity = seq(&[asn1_time(not_before), asn1_time(not_after)].concat());
    let spki = seq(&[
        seq(&[
            oid(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]),
            vec![0x05, 0x00],
        ]
        .concat()),
        bit_string(public_key),
    ]
    .concat());
    let ski = sha1::Sha1::digest(public_key);
    let extensions = seq(&[
        // keyUsage: digitalSignature, keyEncipherment, keyCertSign
        extension(&[0x55, 0x1d, 0x0f], true, &[0x03, 0x02, 0x02, 0xa4]),
        // basicConstraints: CA, pathLenConstraint 0
        extension(
            &[0x55, 0x1d, 0x13],
            true,
            &seq(&[0x01, 0x01, 0xff, 0x02, 0x01, 0x00]),
        ),
        // subjectKeyIdentifier
        extension(&[0x55, 0x1d, 0x0e], false, &tlv(0x04, &ski)),
    ]
    .concat());
    seq(&[
        version,
        serial,
        sha256_with_rsa(),
        name.clone(),
        validity,
        name,
        spki,
        tagged(0xa3, &extensions),
    ]
    .concat())
}

fn extension(id: &[u8], critical: bool, value: &[u8]) -> Vec<u8> {
    let mut body = oid(id);
    if critical {
        body.extend_from_slice(&[0x01, 0x01, 0xff]);
    }
    body.extend(tlv(0x04, value));
    seq(&body)
}

fn sha256_with_rsa() -> Vec<u8> {
    seq(&[
        oid(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]),
        vec![0x05, 0x00],
    ]
    .concat())
}

/// UTCTime before 2050, GeneralizedTime from then on (RFC 5280 §4.1.2.5, as Go writes them).
fn asn1_time(at: i64) -> Vec<u8> {
    let text = rke2_payload::codec::rfc3339(at);
    // "YYYY-MM-DDTHH:MM:SSZ"
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let year: i64 = digits.get(..4).and_then(|y| y.parse().ok()).unwrap_or(0);
    if (1950..2050).contains(&year) {
        tlv(0x17, format!("{}Z", &digits[2..]).as_bytes())
    } else {
        tlv(0x18, format!("{digits}Z").as_bytes())
    }
}

fn integer(bytes: &[u8]) -> Vec<u8> {
    tlv(0x02, bytes)
}

fn oid(encoded: &[u8]) -> Vec<u8> {
    tlv(0x06, encoded)
}

fn bit_string(bytes: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(bytes.len() + 1);
    body.push(0);
    body.extend_from_slice(bytes);
    tlv(0x03, &body)
}

fn seq(body: &[u8]) -> Vec<u8> {
    tlv(0x30, body)
}

fn set(body: &[u8]) -> Vec<u8> {
    tlv(0x31, body)
}

fn tagged(tag: u8, body: &[u8]) -> Vec<u8> {
    tlv(tag, body)
}

fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 4);
    out.push(tag);
    let len = body.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(body);
    out
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = rke2_payload::to_base64(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_ca_reads_back_as_caprke2_makes_it() {
        let mut rng = StdRng::seed_from_u64(7);
        let now = 1_767_225_600; // 2026-01-01T00:00:00Z
        let ca = new_ca(&mut rng, now).unwrap();
        let (_, pem) = x509_parser::pem::parse_x509_pem(ca.cert_pem.as_bytes()).unwrap();
        let cert = pem.parse_x509().unwrap();
        assert_eq!(cert.subject().to_string(), "CN=kubernetes");
        assert_eq!(cert.issuer().to_string(), "CN=kubernetes");
        assert_eq!(cert.raw_serial(), &[0]);
        assert!(cert.is_ca());
        assert_eq!(cert.validity().not_before.timestamp(), now - 300);
        assert_eq!(cert.validity().not_after.timestamp(), now + 3650 * 86_400);
        let ku = cert.key_usage().unwrap().unwrap();
        assert!(
            ku.critical
                && ku.value.digital_signature()
                && ku.value.key_encipherment()
                && ku.value.key_cert_sign()
        );
        let bc = cert.basic_constraints().unwrap().unwrap();
        assert!(bc.critical && bc.value.ca && bc.value.path_len_constraint == Some(0));
        assert!(ca.key_pem.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
        // The signature verifies with the certificate's own key.
        use rsa::pkcs1::DecodeRsaPrivateKey as _;
        use rsa::signature::Verifier as _;
        let key = rsa::PrivateKey::from_pkcs1_pem(&ca.key_pem).unwrap();
        let verifier = rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(key.to_public_key());
        let signature =
            rsa::pkcs1v15::Signature::try_from(cert.signature_value.data.as_ref()).unwrap();
        verifier
            .verify(cert.tbs_certificate.as_ref(), &signature)
            .unwrap();
        // Sizes as CAPRKE2's.
        assert!(
            (1000..1150).contains(&ca.cert_pem.len()),
            "{}",
            ca.cert_pem.len()
        );
        assert!(
            (1670..1685).contains(&ca.key_pem.len()),
            "{}",
            ca.key_pem.len()
        );
        // Deterministic for a seed.
        let again = new_ca(&mut StdRng::seed_from_u64(7), now).unwrap();
        assert_eq!(again.cert_pem, ca.cert_pem);
    }
}
