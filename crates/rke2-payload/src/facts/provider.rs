//! Whose bootstrap data a Secret holds. Cluster API runs several bootstrap providers side by
//! side, and their Secrets share CAPRKE2's type (`cluster.x-k8s.io/secret`) and keys: a
//! kubeadm (CABPK) Secret on a management cluster that also runs KubeadmControlPlane clusters
//! is read by every `--from-cluster`. Such a Secret is told apart by its owner (a bootstrap
//! config of another kind) or, without one, by its payload (kubeadm's files and commands, and
//! no RKE2 file), and reports skip it with a count instead of finding RKE2 missing.

use crate::document::Document;
use crate::envelope::BootstrapSecret;
use crate::error::Error;

/// Where RKE2's own files live: a payload with one is RKE2's, whatever else it holds.
const RKE2_DIR: &str = "/etc/rancher/rke2/";

/// Providers known by their payload: a file whose path starts so (kubeadm's cloud-config writes
/// `/run/kubeadm/kubeadm.yaml`, its Ignition `/etc/kubeadm.yml` and `/etc/kubeadm.sh`), or a
/// command one of whose words is the program (a path's last part: `kubeadm init …`,
/// `snap install microk8s …`).
const BY_PAYLOAD: [(&str, &[&str], &str); 3] = [
    ("kubeadm", &["/run/kubeadm/", "/etc/kubeadm"], "kubeadm"),
    ("k3s", &["/etc/rancher/k3s/"], "k3s"),
    ("microk8s", &["/var/snap/microk8s/"], "microk8s"),
];

/// Whether user data may be another provider's: it names one of their programs and no RKE2
/// folder. What is decided on the parsed document ([`check`]) is only worth parsing for, where
/// a report does not parse it anyway.
pub(crate) fn may_be_other(userdata: &[u8]) -> bool {
    memchr::memmem::find(userdata, RKE2_DIR.as_bytes()).is_none()
        && BY_PAYLOAD
            .iter()
            .any(|(_, _, program)| memchr::memmem::find(userdata, program.as_bytes()).is_some())
}

/// `Ok` for a Secret that may hold RKE2's bootstrap data; [`Error::OtherProvider`] for one
/// owned by another provider's bootstrap config or whose `document` is another provider's.
pub(crate) fn check(
    secret: &BootstrapSecret<'_>,
    document: Option<&Document>,
) -> Result<(), Error> {
    let other = |provider: &str, why: String| Error::OtherProvider {
        secret: secret.id().clone(),
        provider: provider.to_owned(),
        why,
    };
    if let Some(kind) = secret.other_provider() {
        return Err(other(kind, format!("it is owned by a {kind}")));
    }
    let Some(document) = document else {
        return Ok(());
    };
    if document
        .files()
        .iter()
        .any(|f| f.path.starts_with(RKE2_DIR))
    {
        return Ok(());
    }
    for (provider, folders, program) in BY_PAYLOAD {
        if let Some(file) = document
            .files()
            .iter()
            .find(|f| folders.iter().any(|d| f.path.starts_with(d)))
        {
            return Err(other(provider, format!("its payload writes {}", file.path)));
        }
        let runs = document.commands().iter().any(|c| {
            c.line
                .split(|ch: char| ch.is_whitespace() || matches!(ch, ';' | '&' | '|' | '\'' | '"'))
                .any(|word| word.rsplit('/').next() == Some(program))
        });
        if runs {
            return Err(other(provider, format!("its payload runs {program}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::DecodeOptions;

    fn verdict(userdata: &str) -> Result<(), String> {
        let id = crate::error::SecretId::default();
        let secret = BootstrapSecret::new(id, "cloud-config", userdata.as_bytes(), None);
        let payload = secret.decode(&DecodeOptions::default()).expect("decodes");
        let document = Document::parse(&payload).ok();
        check(&secret, document.as_ref()).map_err(|e| match e {
            Error::OtherProvider { provider, .. } => provider,
            other => other.to_string(),
        })
    }

    #[test]
    fn payloads_are_told_by_their_files_and_commands_rke2_s_first() {
        let kubeadm = "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  content: x\nruncmd:\n- kubeadm init --config /run/kubeadm/kubeadm.yaml\n";
        assert_eq!(verdict(kubeadm), Err("kubeadm".to_owned()));
        assert_eq!(
            verdict("#cloud-config\nruncmd:\n- 'kubeadm join --config /x.yaml'\n"),
            Err("kubeadm".to_owned())
        );
        assert_eq!(
            verdict("#cloud-config\nruncmd:\n- snap install microk8s --classic\n"),
            Err("microk8s".to_owned())
        );
        assert_eq!(
            verdict(
                "#cloud-config\nwrite_files:\n- path: /etc/rancher/k3s/config.yaml\n  content: x\n"
            ),
            Err("k3s".to_owned())
        );
        // An RKE2 file wins, whatever else the payload names.
        let rke2 = format!("{kubeadm}- path: /etc/rancher/rke2/config.yaml\n  content: x\n")
            .replace(
                "runcmd:\n- kubeadm init --config /run/kubeadm/kubeadm.yaml\n",
                "",
            );
        assert_eq!(verdict(&rke2), Ok(()));
        assert_eq!(verdict("#cloud-config\nruncmd: [reboot]\n"), Ok(()));
        assert!(may_be_other(kubeadm.as_bytes()));
        assert!(!may_be_other(b"#cloud-config\nruncmd: [reboot]\n"));
    }
}
