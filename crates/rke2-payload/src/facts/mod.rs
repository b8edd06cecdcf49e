//! The facts layer: one value of what a node will do, read once from a decoded payload.
//!
//! [`Facts`] holds the document (files and commands), the RKE2 `config.yaml`, the install step,
//! the node's role, the CA material, which files hold secrets, the secret values to hide from
//! every output, and every problem noticed while reading. The reports (`inspect`, `size`,
//! `lint`) each read this value; none reads another report's output.

pub(crate) mod pki;
pub(crate) mod provider;
pub(crate) mod rke2;

use crate::checks::{Check, Finding};
use crate::document::{Command, Document, File};
use crate::payload::{DeclaredFormat, Payload};
use crate::sensitive::{self, Redactor, SecretValue};

use pki::Material;
use rke2::{Install, Rke2Config, Role};

/// What a node will do at first boot, as read from its payload.
#[derive(Debug)]
pub(crate) struct Facts {
    /// The document, when it could be read.
    pub(crate) document: Option<Document>,
    /// What is secret in each file of the document, in the same order.
    pub(crate) secret_files: Vec<Option<&'static str>>,
    /// `/etc/rancher/rke2/config.yaml`, when the payload writes a readable one.
    pub(crate) config: Option<Rke2Config>,
    /// The install step, its command line with known secret values hidden.
    pub(crate) install: Option<Install>,
    /// What the node becomes.
    pub(crate) role: Option<Role>,
    /// Whether the payload installs or starts RKE2 ([`rke2::starts`]).
    pub(crate) starts_rke2: bool,
    /// Certificates and private keys.
    pub(crate) material: Material,
    /// Every known secret value of the payload, to hide from text shown to people.
    pub(crate) redactor: Redactor,
    /// Problems and notes noticed while reading, in the order they were noticed.
    pub(crate) findings: Vec<Finding>,
}

impl Facts {
    /// Reads the facts of a decoded payload.
    pub(crate) fn read(payload: &Payload<'_>) -> Facts {
        let mut facts = Facts::read_files(payload);
        facts.read_node();
        facts
    }

    /// The first half of [`Facts::read`] alone: the document, which of its files hold secrets,
    /// and the problems noticed reading them; the config, install step, role and CA material are
    /// left empty. What `size` needs, without parsing certificates.
    pub(crate) fn read_files(payload: &Payload<'_>) -> Facts {
        let mut findings = Vec::new();
        if payload.format_mismatch() {
            findings.push(Finding::new(
                Check::FormatMismatch,
                format!(
                    "the `format` key says {} but the user data is {}",
                    payload.declared_format().as_str().unwrap_or("nothing"),
                    payload.format()
                ),
            ));
        }
        if payload.declared_format() == DeclaredFormat::Empty {
            findings.push(Finding::new(
                Check::FormatEmpty,
                "the `format` key is empty (the defaulting webhook was bypassed); CAPRKE2 renders cloud-config",
            ));
        }
        let document = match Document::parse(payload) {
            Ok(document) => Some(document),
            Err(e) => {
                findings.push(Finding::new(
                    Check::DocumentUnreadable,
                    format!("{e}; files and commands cannot be listed"),
                ));
                None
            }
        };
        if let Some(document) = &document {
            findings.extend(document.problems().iter().cloned());
        }
        let files: &[File] = document.as_ref().map_or(&[], |d| d.files());

        let mut redactor = Redactor::default();
        let mut secret_files = Vec::with_capacity(files.len());
        for file in files {
            let sensitive = sensitive::classify(&file.path, file.bytes());
            for value in &sensitive.values {
                redactor.add(value);
            }
            // What `redact` masks in it is hidden in every report too.
            if let Some(bytes) = file.bytes() {
                for value in sensitive::mask::file_secrets(&file.path, bytes) {
                    redactor.add(&SecretValue::new(value));
                }
            }
            secret_files.push(sensitive.what);
        }
        Facts {
            document,
            secret_files,
            config: None,
            install: None,
            role: None,
            starts_rke2: false,
            material: Material::default(),
            redactor,
            findings,
        }
    }

    /// The second half of [`Facts::read`]: `config.yaml`, the install step, the role and the CA
    /// material, from the document.
    fn read_node(&mut self) {
        let Facts {
            document,
            redactor,
            findings,
            ..
        } = self;
        let files: &[File] = document.as_ref().map_or(&[], |d| d.files());
        let config_file = document.as_ref().and_then(|d| d.file(rke2::CONFIG_PATH));
        let config = config_file.and_then(|f| match f.text() {
            Some(text) => match Rke2Config::parse(&text) {
                Ok(config) => Some(config),
                Err(e) => {
                    findings.push(
                        Finding::new(Check::Rke2ConfigInvalid, e.to_string())
                            .at_path(rke2::CONFIG_PATH),
                    );
                    None
                }
            },
            None => {
                findings.push(
                    Finding::new(
                        Check::Rke2ConfigInvalid,
                        "config.yaml is not UTF-8 text in the payload (binary, undecodable, or fetched from elsewhere at boot), so its settings cannot be read",
                    )
                    .at_path(rke2::CONFIG_PATH),
                );
                None
            }
        });
        if let Some(config) = &config {
            for secret in config.secrets() {
                redactor.add(secret);
            }
            // A token kept in a file of its own (`token-file`): the file holds the token.
            for path in config.token_files() {
                if let Some(i) = files.iter().rposition(|f| f.path == path) {
                    if let Some(token) = files[i].text() {
                        redactor.add(&SecretValue::new(token.trim()));
                    }
                    self.secret_files[i] = Some("join token");
                }
            }
        }
        let install = rke2::install(commands(document)).map(|mut i| {
            i.command = redactor.redact_all(&i.command);
            i
        });
        let mut material = pki::scan(files);
        findings.append(&mut material.problems);
        let ca = material
            .certificates
            .iter()
            .any(|c| c.purpose.as_deref() == Some("server-ca"));
        let role = document
            .as_ref()
            .and_then(|d| rke2::role(config.as_ref(), install.as_ref(), d, ca));
        self.starts_rke2 = document
            .as_ref()
            .is_some_and(|d| rke2::starts(install.as_ref(), d));
        (self.config, self.install, self.role, self.material) = (config, install, role, material);
    }

    /// Every file the document writes, in document order (none when it could not be read).
    pub(crate) fn files(&self) -> impl ExactSizeIterator<Item = (&File, Option<&'static str>)> {
        let files: &[File] = self.document.as_ref().map_or(&[], |d| d.files());
        files.iter().zip(self.secret_files.iter().copied())
    }

    /// Every first-boot command, in order.
    pub(crate) fn commands(&self) -> &[Command] {
        commands(&self.document)
    }

    /// Whether the document could be read.
    pub(crate) fn readable(&self) -> bool {
        self.document.is_some()
    }
}

fn commands(document: &Option<Document>) -> &[Command] {
    document.as_ref().map_or(&[], |d| d.commands())
}
