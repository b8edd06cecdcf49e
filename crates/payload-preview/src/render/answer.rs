//! What the reports read of an input that holds manifests: the bootstrap Secrets the input
//! holds as they are (a live dump's, read as what exists), and the preview of its template
//! manifests where no Secret of the input answers them. A template is answered by the input
//! when a bootstrap Secret of the input belongs to the same Cluster (namespace and
//! `cluster.x-k8s.io/cluster-name` label): then what exists is reported, not what a render
//! would make.

use rke2_payload::{BootstrapSecret, DecodeOptions, Envelope};

use super::{Preview, RenderError, RenderOptions, Source, render};

/// The Secrets of an input that holds manifests, each once: read or previewed.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Answer {
    /// The bootstrap Secrets to report on, in order: those the input holds, then the previews
    /// (each with its [`Origin`](rke2_payload::Origin)).
    pub secrets: Vec<BootstrapSecret<'static>>,
    /// How many of them the input holds as they are.
    pub read: usize,
    /// The preview of the templates no Secret of the input answers (its `secrets` are the
    /// previews reported; its findings are every manifest finding).
    pub preview: Preview,
    /// Previews left out because the input holds the Secrets of their Cluster.
    pub answered: usize,
}

/// Reads `sources` as [`Answer`] says: their bootstrap Secrets, and [`render`]'s preview of
/// their templates (`options`) for the Clusters none of those Secrets belongs to.
///
/// ```
/// use payload_preview::{RenderOptions, Source, answer};
/// use rke2_payload::DecodeOptions;
///
/// let live = br##"apiVersion: v1
/// kind: Secret
/// type: cluster.x-k8s.io/secret
/// metadata:
///   name: demo-cp-abcde
///   namespace: default
///   uid: 0b8c6f0e-0000-4000-8000-000000000001
///   labels: {cluster.x-k8s.io/cluster-name: demo}
/// stringData: {format: cloud-config, value: "#cloud-config\nruncmd: [reboot]\n"}
/// ---
/// apiVersion: controlplane.cluster.x-k8s.io/v1beta2
/// kind: RKE2ControlPlane
/// metadata: {name: demo-cp, namespace: default, uid: 0b8c6f0e-0000-4000-8000-000000000002}
/// spec: {replicas: 1, version: v1.34.1+rke2r1}
/// status: {ready: true}
/// "##;
/// let got = answer(&[Source { name: "dump.yaml", bytes: live }], &RenderOptions::new().with_seed(0), &DecodeOptions::new())?;
/// assert_eq!((got.read, got.secrets.len()), (1, 1));
/// assert_eq!(got.secrets[0].name(), Some("demo-cp-abcde"));
/// assert!(got.preview.secrets.is_empty());
/// # Ok::<(), payload_preview::RenderError>(())
/// ```
///
/// # Errors
/// As [`render`], except that an input with bootstrap Secrets and nothing to render is not
/// an error.
pub fn answer(
    sources: &[Source<'_>],
    options: &RenderOptions,
    decode: &DecodeOptions,
) -> Result<Answer, RenderError> {
    let mut secrets: Vec<BootstrapSecret<'static>> = Vec::new();
    for source in sources {
        // A source that does not read as Secrets is the render's to report.
        if let Ok(envelope) = Envelope::parse(source.bytes, decode) {
            secrets.extend(
                envelope
                    .secrets
                    .into_iter()
                    .filter(|s| !s.is_bare())
                    .map(BootstrapSecret::into_owned),
            );
        }
    }
    let read = secrets.len();
    let mut preview = match render(sources, options) {
        Ok(preview) => preview,
        Err(RenderError::NothingToRender { .. }) if read > 0 => Preview::default(),
        Err(e) => return Err(e),
    };
    let before = preview.secrets.len();
    preview.secrets.retain(|p| {
        !secrets.iter().any(|s| {
            s.namespace() == Some(p.namespace.as_str()) && s.cluster() == Some(p.cluster.as_str())
        })
    });
    let answered = before - preview.secrets.len();
    secrets.extend(preview.to_secrets());
    Ok(Answer {
        secrets,
        read,
        preview,
        answered,
    })
}
