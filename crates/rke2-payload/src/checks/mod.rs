//! The check table and findings: every problem or note this crate reports has one [`Check`], and
//! this file is the only place a check's id, default severity, summary and explanation are
//! written.
//!
//! It imports only the error vocabulary (for [`Position`]), so every layer (the document readers, the facts,
//! the reports) reports through the same [`Finding`] type.

use std::fmt;

use crate::error::Position;

mod suppress;

pub(crate) use suppress::suppressible;
pub use suppress::{IGNORE_CHECK_ANNOTATION_PREFIX, Ignores, Suppression};

/// How serious a finding is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Severity {
    /// The node will not boot or join as intended.
    Error,
    /// Likely wrong; check it.
    Warning,
    /// Worth knowing.
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// Declares [`Check`] and its table from one list: variant, id, default severity, summary,
/// explanation.
macro_rules! checks {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, $severity:ident, $summary:literal, $explanation:literal; )*) => {
        /// One check. Its [`id`](Check::id) is stable: it is what `--allow` takes and what the
        /// JSON, SARIF and text outputs print.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Check {
            $( $(#[$doc])* $variant, )*
        }

        impl Check {
            /// Every check, in the order of the table.
            pub const ALL: &'static [Check] = &[$(Check::$variant),*];

            /// The stable id, e.g. `server-port`.
            pub const fn id(self) -> &'static str {
                match self { $(Check::$variant => $id,)* }
            }

            /// The severity a finding of this check has unless the check says otherwise (for
            /// example `cert-expiry` is a warning before the CA expires, an error after).
            pub const fn severity(self) -> Severity {
                match self { $(Check::$variant => Severity::$severity,)* }
            }

            /// What the check catches, in one line.
            pub const fn summary(self) -> &'static str {
                match self { $(Check::$variant => $summary,)* }
            }

            /// Why it matters and what to do, in a few sentences.
            pub const fn explanation(self) -> &'static str {
                match self { $(Check::$variant => $explanation,)* }
            }
        }
    };
}

checks! {
    /// `format-mismatch`.
    FormatMismatch = "format-mismatch", Error,
        "the `format` key disagrees with the user data",
        "The bootstrap Secret's `format` key names one format and `value` holds the other. The infrastructure provider picks how to hand the data to the machine from `format`, so the node's first-boot agent receives data it cannot read. Render the Secret again from its RKE2Config, or fix the key.";
    /// `format-empty`.
    FormatEmpty = "format-empty", Warning,
        "the `format` key is empty",
        "An empty `format` means the defaulting webhook was bypassed when the RKE2Config was created. CAPRKE2 then renders cloud-config; set `spec.format` explicitly so providers and tools agree.";
    /// `format-missing`.
    FormatMissing = "format-missing", Warning,
        "the Secret has no `format` key",
        "CAPRKE2 always writes both `value` and `format` into a bootstrap Secret (`rke2config_controller.go:1040-1061`): a Secret without `format` was not written by it, or was edited since. Cluster API and the providers then take the data for cloud-config, which an Ignition payload is not.";
    /// `secret-unreadable`.
    SecretUnreadable = "secret-unreadable", Error,
        "the Secret or its value cannot be read",
        "The Secret's `value` is not valid base64, not valid gzip, or over a size limit, or the object itself does not read as a Secret, so nothing in it could be checked. The other Secrets of the input are still checked, and the run exits 2. It cannot be allowed.";
    /// `document-unreadable`.
    DocumentUnreadable = "document-unreadable", Error,
        "the user data cannot be read as its format",
        "The decoded user data is not valid text of its format (not UTF-8, not YAML or JSON, not the expected top-level shape), so the first-boot agent would fail on it. Files and commands cannot be listed; every other check of the payload is skipped.";
    /// `cloud-config-invalid-yaml`.
    CloudConfigInvalidYaml = "cloud-config-invalid-yaml", Error,
        "the cloud-config is not valid YAML",
        "cloud-init refuses a cloud-config that does not parse as YAML and runs none of it. The finding gives the line and column in the decoded user data.";
    /// `cloud-config-schema`.
    CloudConfigSchema = "cloud-config-schema", Warning,
        "keys or values cloud-init would reject",
        "A key or value of the wrong type or shape for cloud-init's schema (for example a `write_files` entry without `path`). cloud-init warns and may skip the module; check the named key. Judged against the schema of the cloud-init release bundled with the tool (named in the message), or the one `--cloud-init-schema` gives.";
    /// `cloud-config-deprecated`.
    CloudConfigDeprecated = "cloud-config-deprecated", Info,
        "a key or value form cloud-init accepts but marks deprecated",
        "cloud-init's schema accepts the key or value form (for example `ssh-authorized-keys` for `ssh_authorized_keys`) and logs a deprecation at boot; the module still runs. The message says since which cloud-init release and what replaces it.";
    /// `file-content-undecodable`.
    FileContentUndecodable = "file-content-undecodable", Warning,
        "a file's content does not decode as its encoding says",
        "A `write_files` entry says `encoding: base64` (or `gzip+base64`, or `!!binary`) but its content is not valid base64 or gzip. cloud-init's schema accepts it, but the write_files module fails on it at boot and the file is not written. Encode the content again, or drop the encoding.";
    /// `cloud-config-duplicate-key`.
    CloudConfigDuplicateKey = "cloud-config-duplicate-key", Warning,
        "a top-level cloud-config key appears twice",
        "YAML parsers keep only one of two equal keys, so one of the two blocks (often `write_files` or `runcmd` added through additionalUserData) is silently lost. Merge them.";
    /// `userdata-not-cloud-config`.
    UserdataNotCloudConfig = "userdata-not-cloud-config", Info,
        "the user data is another cloud-init part type",
        "The payload is a script, an include list or MIME multipart rather than `#cloud-config`. cloud-init runs it, but this tool cannot list its files and commands.";
    /// `ignition-invalid`.
    IgnitionInvalid = "ignition-invalid", Error,
        "what ignition-validate would reject",
        "The Ignition config breaks a rule Ignition enforces (relative paths, duplicate paths, undecodable contents, a wrong type). Ignition stops the boot on such a config.";
    /// `remote-content`.
    RemoteContent = "remote-content", Warning,
        "a config or file is fetched at boot from a remote source",
        "Ignition fetches `config.replace`/`config.merge` sources and file `contents.source` URLs (http, https, s3, tftp, gs, arn) at first boot, and cloud-init `write_files` with a `source.uri`. What they hold is not in the payload, so nothing in it was checked; the node also needs to reach the source then, and a replaced config takes the place of everything this payload says.";
    /// `rke2-config-invalid`.
    Rke2ConfigInvalid = "rke2-config-invalid", Error,
        "config.yaml is not valid YAML",
        "RKE2 cannot start when /etc/rancher/rke2/config.yaml does not parse. Check the serverConfig and agentConfig fields the file is rendered from.";
    /// `pem-invalid`.
    PemInvalid = "pem-invalid", Warning,
        "a PEM block cannot be read",
        "A certificate or key file holds a PEM block that does not decode (bad base64, truncated DER, unknown algorithm). RKE2 fails when it loads the file.";
    /// `rke2-config-missing`.
    Rke2ConfigMissing = "rke2-config-missing", Error,
        "no /etc/rancher/rke2/config.yaml in the payload",
        "Every CAPRKE2 payload writes /etc/rancher/rke2/config.yaml; without it RKE2 starts unconfigured: no token, no server to join.";
    /// `rke2-not-started`.
    Rke2NotStarted = "rke2-not-started", Error,
        "the payload never installs or starts RKE2",
        "Every CAPRKE2 payload ends with the install step and the commands (or systemd units) that enable and start rke2-server or rke2-agent. A payload that writes the RKE2 config but none of these was cut short (a value truncated on a base64 boundary still decodes) or assembled by hand: the machine boots and never becomes a node. Render the bootstrap data again.";
    /// `server-port`.
    ServerPort = "server-port", Error,
        "the join URL is not https://<host>:9345",
        "Nodes join through the RKE2 supervisor, which listens on port 9345 over HTTPS; the Kubernetes API port (6443) or plain HTTP does not work for joining.";
    /// `server-on-init`.
    ServerOnInit = "server-on-init", Error,
        "a payload with the cluster CAs also has a server to join",
        "Only the first control plane carries the cluster CA keys, and it must not have a `server`: it creates the cluster instead of joining one.";
    /// `server-missing`.
    ServerMissing = "server-missing", Error,
        "a joining node has no server URL",
        "A worker or a joining control plane without `server` either cannot join or starts a new, separate cluster.";
    /// `tls-san-missing-server-host`.
    TlsSanMissingServerHost = "tls-san-missing-server-host", Warning,
        "tls-san lacks the shared address the control plane is reached on",
        "The serving certificate of a control plane lists its tls-san entries. When the shared address (controlPlaneEndpoint host or registration address) is missing, nodes that join through it fail TLS verification. Add it to serverConfig.tlsSan.";
    /// `version-format`.
    VersionFormat = "version-format", Warning,
        "an online install without a release version (v1.32.5+rke2r1)",
        "INSTALL_RKE2_VERSION must be an RKE2 release such as v1.31.4+rke2r1; when it is empty the node installs whatever is latest at boot, so nodes of one cluster drift apart. A version written out that is no release (v1.32.5, v1.32.5+rke2r1+rke2r1) is an error: the installer finds no such release and the node never starts.";
    /// `provider-id-missing`.
    ProviderIdMissing = "provider-id-missing", Warning,
        "no kubelet provider-id and no cloud provider",
        "Cluster API matches a Machine to its Node by provider ID. Without a kubelet `provider-id=` argument or a cloud provider that sets it, the Machine may never become ready, and on the first control plane that blocks every later join.";
    /// `ingress-controller-disabled`.
    IngressControllerDisabled = "ingress-controller-disabled", Warning,
        "an ingress controller to deploy is also disabled",
        "`ingress-controller` names the packaged ingress controllers RKE2 deploys (CAPRKE2: serverConfig.ingressController), and `disable` the packaged charts it skips (serverConfig.disableComponents.pluginComponents). When the chart of a controller asked for (rke2-traefik for traefik, rke2-ingress-nginx for ingress-nginx) is also disabled, RKE2 deploys neither it nor a replacement: the cluster has no ingress controller of that class. Remove the chart from the disabled components, or the controller from ingressController.";
    /// `payload-not-utf8`.
    PayloadNotUtf8 = "payload-not-utf8", Info,
        "the payload is gzip: pass it to a base64-taking argument",
        "data.value is raw gzip bytes. Hand it to an argument that takes base64 (user_data_base64) as it is stored; decoding it to text first corrupts it.";
    /// `egress-required`.
    EgressRequired = "egress-required", Info,
        "the online install needs get.rke2.io reachable",
        "The online install downloads its script and artifacts at boot; the node needs internet egress (or a proxy) to get.rke2.io and GitHub. Said once per cluster, on the first of its Secrets that installs online, with how many do.";
    /// `airgap-no-checksum`.
    AirgapNoChecksum = "airgap-no-checksum", Info,
        "the air-gapped install does not verify its artifacts",
        "With airGappedChecksum set, the install step checks the artifacts' SHA-256 before running them; without it a damaged or replaced artifact is installed as it is.";
    /// `bare-kubectl`.
    BareKubectl = "bare-kubectl", Warning,
        "a command calls kubectl without the RKE2 bin path",
        "RKE2 installs kubectl in /var/lib/rancher/rke2/bin, which is not on PATH at first boot; call it by full path with KUBECONFIG=/etc/rancher/rke2/rke2.yaml.";
    /// `jinja-syntax`.
    JinjaSyntax = "jinja-syntax", Error,
        "the cloud-config is a Jinja template that does not render as meant",
        "CAPRKE2 starts every cloud-config with `## template: jinja`, so cloud-init renders the whole text as a Jinja template before it reads the YAML. Go-template and Helm syntax (`{{ .Values.x }}`, `{{ $x }}`) or an unclosed `{{`/`{%` make the rendering fail, and cloud-init then applies none of the cloud-config; a shell `${#var}` opens a Jinja comment that swallows the text up to the next `#}`. Wrap such text in `{% raw %}`…`{% endraw %}`.";
    /// `key-permissions`.
    KeyPermissions = "key-permissions", Warning,
        "a private key file is not mode 0600",
        "A private key written with a wider mode (or none, 0644 by default) is readable by every user of the node.";
    /// `duplicate-path`.
    DuplicatePath = "duplicate-path", Warning,
        "two files are written to the same path",
        "cloud-init writes both entries and the last one wins; with different contents one of them is lost. An info when both contents are the same, when the first is empty (a placeholder the second fills) or when the second appends (`append: true`).";
    /// `cert-expiry`.
    CertExpiry = "cert-expiry", Error,
        "a certificate in the payload is expired or expires soon",
        "A cluster whose CA has expired cannot issue or verify certificates: nodes cannot join; an expired client certificate (a private registry's) fails its TLS handshake, so images cannot be pulled. A warning while the expiry is within the configured number of days, an error after it.";
    /// `token-mismatch`.
    TokenMismatch = "token-mismatch", Error,
        "a joining node's token differs from the first control plane's",
        "Every node of a cluster joins with the token the first control plane was started with; a different token is refused by the supervisor.";
    /// `join-host-not-in-san`.
    JoinHostNotInSan = "join-host-not-in-san", Error,
        "the join host is not in the first control plane's tls-san",
        "A node joins through the host of its `server` URL; when that host is not in the first control plane's serving certificate, TLS verification fails.";
    /// `token-ca-hash`.
    TokenCaHash = "token-ca-hash", Error,
        "a K10 token's CA hash does not match the cluster's server CA",
        "A secure token (K10<hash>::user:password) pins the server CA by hash; an agent whose token names another CA refuses the server.";
    /// `cidr-overlap`.
    CidrOverlap = "cidr-overlap", Warning,
        "the pod and service CIDRs overlap",
        "`cluster-cidr` and `service-cidr` overlap (defaults 10.42.0.0/16 and 10.43.0.0/16, compared per address family, dual-stack lists included). RKE2 starts and the nodes join, but a node whose pod range falls in the service range gives its pods addresses that kube-proxy's service rules capture: traffic to those pods, DNS among it, breaks. Give the two disjoint ranges.";
    /// `size-over-limit`.
    SizeOverLimit = "size-over-limit", Error,
        "the payload does not fit the cloud's user-data limit",
        "The platform rejects or truncates user data over its limit, counted on the bytes it counts (raw or base64). Enable gzipUserData where gzip is safe, or move content out of the payload.";
    /// `gzip-unsafe`.
    GzipUnsafe = "gzip-unsafe", Warning,
        "the payload is gzip on a platform that corrupts or re-gzips it",
        "Some platforms carry user data as text (which corrupts gzip bytes) or gzip it again (cloud-init undoes one layer only). Disable gzipUserData there, or the provider's own compression.";
    /// `registry-auth-newline`.
    RegistryAuthNewline = "registry-auth-newline", Error,
        "a registry credential in registries.yaml ends in a line break",
        "CAPRKE2 copies the registry auth Secret's values into registries.yaml as they are; a value made with `echo x | base64` keeps its line break, so containerd sends a username or password the registry rejects. An error when that registry is the `system-default-registry` RKE2 pulls its own images from (the node never starts); a warning otherwise (pulls through it fail, containerd falls back to the default endpoint). Store the Secret's values without the trailing newline (`echo -n`, `printf`).";
    /// `manifest-flatcar-cloud-config`.
    ManifestFlatcarCloudConfig = "manifest-flatcar-cloud-config", Error,
        "a Flatcar machine image with a cloud-config bootstrap format",
        "Flatcar boots with Ignition and does not run cloud-init, so a cloud-config payload never installs RKE2 there. Set agentConfig.format: ignition on the control plane and the worker templates for Flatcar images.";
    /// `topology-expansion-fails`.
    TopologyExpansionFails = "topology-expansion-fails", Error,
        "Cluster API cannot expand this ClusterClass topology",
        "The topology controller stops for this Cluster (an unknown class, a template the class names that is missing, a patch whose path does not exist for replace or remove, a template that fails), so it creates no control plane or workers and no bootstrap data is written. The message names the patch, class or template to fix, and a patch's failure is placed at the JSON patch in the ClusterClass. A ClusterClass no Cluster of the input uses is expanded with its variables' defaults (when every required variable has one), so its patches are applied as for any Cluster of it.";
    /// `topology-variable-invalid`.
    TopologyVariableInvalid = "topology-variable-invalid", Error,
        "a topology variable is missing, undefined or fails its schema",
        "The Cluster webhook rejects a Cluster whose topology sets a variable the ClusterClass does not define, lacks a required one, or sets a value its openAPIV3Schema does not allow, so the Cluster is never created. The message names the variable and the field.";
    /// `topology-class-refused`.
    TopologyClassRefused = "topology-class-refused", Error,
        "the ClusterClass webhook refuses this ClusterClass",
        "Cluster API's ClusterClass webhook checks a class before it is created: each variable's openAPIV3Schema must compile and every default in it must be a value the schema allows; each JSON patch must be add, replace or remove on a path under /spec, index an array only as 0 or - to add (never to replace or remove), set one of value and valueFrom, and take valueFrom.variable from a variable the class defines or a builtin. A class that breaks one is refused, and no Cluster can use it. The finding is placed at the variable's schema or the JSON patch; `lint` checks a class on its own, without a Cluster.";
    /// `manifest-schema`.
    ManifestSchema = "manifest-schema", Error,
        "a manifest does not match its CRD's schema",
        "The API server checks Cluster API and CAPRKE2 objects against their CRD's OpenAPI schema after its defaults and the admission webhooks' have been filled in: a field of the wrong type, a value outside its enum or pattern or bounds, or a missing required field is rejected; a field the schema does not have is rejected by kubectl's strict field validation and otherwise dropped silently, so the cluster comes up without it. The message names the field, what is allowed there, and, on an object a ClusterClass expansion made, the patch that wrote the value.";
    /// `manifest-missing-reference`.
    ManifestMissingReference = "manifest-missing-reference", Warning,
        "a manifest names an object the input does not hold",
        "The manifests reference a Secret, ConfigMap, template or Cluster that is not in the input, so `render` stands in a placeholder of a realistic size (or of `--placeholder-bytes`) for it. Sizes are estimates until the real object is added to the input; CAPRKE2 itself fails to render until the object exists. A template a ClusterClass names that is not in the input is reported at the class's reference: the ClusterClass controller fails on it and no Cluster of the class is expanded until it exists.";
    /// `manifest-infrastructure-template-missing`.
    ManifestInfrastructureTemplateMissing = "manifest-infrastructure-template-missing", Error,
        "the infrastructure template machines are cloned from is not in the input",
        "An RKE2ControlPlane or a MachineDeployment names the infrastructure machine template its Machines are cloned from (`spec.machineTemplate.spec.infrastructureRef`, `spec.template.spec.infrastructureRef`), and the input holds infrastructure objects of that namespace but not that template (often a typo: `-controlplane` for `-control-plane`). CAPRKE2 clones the template before it creates a control plane's RKE2Config, and Cluster API's MachineSet deletes the worker's RKE2Config when the clone fails, so no Machine and no bootstrap Secret is ever made; without a control plane the workers wait forever too. `render` writes none of those Secrets. An input with no infrastructure object at all (a control plane linted alone) is not judged. Name the template the input holds, or add it.";
    /// `manifest-missing-key`.
    ManifestMissingKey = "manifest-missing-key", Error,
        "a referenced Secret or ConfigMap lacks the key CAPRKE2 reads",
        "CAPRKE2 reads a fixed key of each referenced object (`audit-policy.yaml`, `cloud-config`, `aws_access_key_id`, `encryptionKey`, `endpoint`, the `contentFrom` key, ...). When the key is missing it fails to render the Machine's bootstrap data and the Machine never boots. Add the key under that exact name.";
    /// `manifest-unsubstituted-variable`.
    ManifestUnsubstitutedVariable = "manifest-unsubstituted-variable", Error,
        "a `${VAR}` is left in the manifests",
        "Cluster templates carry `${VAR}` placeholders that `clusterctl generate cluster` or envsubst fill in. One that is left reaches the node verbatim (or fails validation), so substitute every variable before applying or rendering.";
    /// `manifest-render-fails`.
    ManifestRenderFails = "manifest-render-fails", Error,
        "CAPRKE2 cannot render this bootstrap data",
        "The controller stops with an error for this input (a file written twice in Ignition, an empty version with Ignition, additional cloud-config that is not YAML, ...), so the Machine gets no bootstrap Secret and never boots. The message says what to change.";
    /// `manifest-butane-not-merged`.
    ManifestButaneNotMerged = "manifest-butane-not-merged", Warning,
        "part of the Ignition additional config is not in the preview",
        "With `format: ignition`, `additionalUserData.config` is Butane that CAPRKE2 translates and merges into the Ignition config. The preview translates and merges files, directories, links, systemd units, users, groups and kernel arguments; the sections the finding names are left out, so the real payload has them on top and is larger than the preview.";
    /// `manifest-registry-configs-dropped`.
    ManifestRegistryConfigsDropped = "manifest-registry-configs-dropped", Warning,
        "only one private registry config reaches registries.yaml",
        "CAPRKE2 v0.25 re-creates the `configs` map for each entry of `privateRegistriesConfig.configs`, so only one registry's auth and TLS settings survive, and which one changes between renders. Keep one entry, or set the others' credentials another way.";
    /// `manifest-version-pattern`.
    ManifestVersionPattern = "manifest-version-pattern", Error,
        "the RKE2ControlPlane version does not match the CRD's pattern",
        "The RKE2ControlPlane CRD requires `spec.version` to match `(v\\d\\.\\d{2}\\.\\d+\\+rke2r\\d)|^$` (for example `v1.32.5+rke2r1`), so the API server rejects the object. The version is also spliced verbatim into the install command.";
    /// `manifest-api-version-not-served`.
    ManifestApiVersionNotServed = "manifest-api-version-not-served", Error,
        "an object of an API version its CRD does not serve",
        "The CRDs of Cluster API v1.13/v1.14 and CAPRKE2 v0.25 serve `v1beta1` and `v1beta2`. An object of another version (CAPHV's RKE2 template still writes `controlplane.cluster.x-k8s.io/v1alpha1`) is refused by `kubectl apply` (\"no matches for kind\"), so nothing of it is ever created.";
    /// `provider-refuses-payload`.
    ProviderRefusesPayload = "provider-refuses-payload", Error,
        "the infrastructure provider cannot deliver this payload",
        "What the infrastructure provider does with the bootstrap data decides whether it reaches the node at all: CAPD parses it as a YAML cloud-config and CAPHV YAML-merges it with its own, so gzipped data (`gzipUserData: true`) and, on CAPHV, Ignition never boot a node; CAPK parses it as YAML to add its SSH user unless the KubevirtCluster is externally managed, so gzip stops its reconcile; CAPA stages an Ignition payload in S3 and creates no instance when the AWSCluster names no `s3Bucket` (unless `ignition.storageType: UnencryptedUserData`). The finding names the provider, the field and the provider's source.";
    /// `manifest-infrastructure-not-rke2`.
    ManifestInfrastructureNotRke2 = "manifest-infrastructure-not-rke2", Error,
        "the cluster's infrastructure is not set up for RKE2",
        "Some infrastructure providers build the cluster for one control plane or another by a setting whose default is kubeadm's: CAPTF's reference cluster modules (TerraformCluster `spec.variables.distribution`, default `kubeadm`) open the RKE2 supervisor port 9345 on the load balancer and the firewall only for `rke2`. Under an RKE2ControlPlane the first server starts, and no other node can ever reach it to join. The payload is not at fault; set the field the finding names.";
    /// `manifest-version-not-semver`.
    ManifestVersionNotSemver = "manifest-version-not-semver", Error,
        "a version Cluster API's webhooks refuse (not semver)",
        "Cluster API's admission webhooks require a Machine's, a MachineDeployment's, a MachinePool's and a topology Cluster's version to start with `v` and to be a strict semantic version (`github.com/blang/semver/v4`): `v1.34.2+rke2r1+rke2r1` (Turtles' `KUBERNETES_VERSION` in CAPRKE2's templates) is refused, and an RKE2ControlPlane copies its `spec.version` into every Machine. No Machine is ever created.";
    /// `manifest-cluster-name-invalid`.
    ManifestClusterNameInvalid = "manifest-cluster-name-invalid", Error,
        "a Cluster name that is not a valid label value",
        "Cluster API's Cluster webhook refuses a Cluster whose name is not a valid label value (at most 63 characters, alphanumerics with `-`, `_` and `.` inside), because the name is written as the `cluster.x-k8s.io/cluster-name` label on its objects, CAPRKE2's bootstrap Secrets among them. The Cluster is never created and no Machine boots. Shorten the name; the controllers shorten the names they generate from it themselves.";
    /// `manifest-registration-address-missing`.
    ManifestRegistrationAddressMissing = "manifest-registration-address-missing", Error,
        "registrationMethod address without a registrationAddress",
        "With `registrationMethod: address`, joining nodes use `https://<registrationAddress>:9345`. Without the address CAPRKE2's admission webhook refuses the RKE2ControlPlane (and its template) when it is created, so the cluster gets no control plane and no node.";
    /// `manifest-registration-address-not-in-tls-san`.
    ManifestRegistrationAddressNotInTlsSan = "manifest-registration-address-not-in-tls-san", Warning,
        "the registration address is not a TLS SAN",
        "CAPRKE2 adds the control-plane endpoint host to `tls-san`, but not `registrationAddress`. When they differ, the supervisor's certificate does not name the address joining nodes dial, and they refuse it. Add the address to `serverConfig.tlsSan`.";
    /// `manifest-webhook-refuses`.
    ManifestWebhookRefuses = "manifest-webhook-refuses", Error,
        "CAPRKE2's admission webhook refuses the object",
        "CAPRKE2's validating webhooks check each RKE2ControlPlane, RKE2ControlPlaneTemplate and RKE2Config as it is created: a private registry config with neither credentials nor TLS settings, a gzip file encoding with the Ignition format, Multus without a CNI, zero or fewer control-plane replicas. The API server refuses the object and nothing is created. The message names the field and the webhook's reason.";
    /// `manifest-update-refused`.
    ManifestUpdateRefused = "manifest-update-refused", Error,
        "the API server refuses this revision as an update of the previous one",
        "Given the revision the cluster runs (`lint --previous`), an object of both is an update, which the admission webhooks judge against the old object: `spec.clusterName` of a MachineDeployment, MachineSet, MachinePool, Machine or MachineHealthCheck never changes; a Cluster keeps its `controlPlaneRef`, `infrastructureRef` and `topology`, gets no ClusterClass it did not have, and its topology version neither goes down nor skips a minor; CAPRKE2's `registrationMethod` is immutable once set; a DockerMachineTemplate's, AWSMachineTemplate's or AzureMachineTemplate's `spec.template.spec` is immutable (create a template under a new name and point at it). `kubectl apply` fails and the cluster keeps the old revision.";
    /// `manifest-provider-id-literal`.
    ManifestProviderIdLiteral = "manifest-provider-id-literal", Error,
        "a literal kubelet provider-id in a config every replica shares",
        "A kubelet `provider-id=` written out in an RKE2ControlPlane, its template or an RKE2ConfigTemplate is the same for every Machine made from it (a rollout makes a second Machine even of one replica). Every Node then registers that one providerID, Cluster API matches at most one Machine to it, and the others wait for their Node forever; on the first control plane that blocks every join. Fill it in at boot (instance metadata under `## template: jinja`) or leave it to the cloud provider.";
    /// `manifest-node-name-ignored`.
    ManifestNodeNameIgnored = "manifest-node-name-ignored", Warning,
        "agentConfig.nodeName is set but never used",
        "CAPRKE2 v0.25 has a `node-name` key in its config struct but never fills it from `agentConfig.nodeName`, so the node registers with its hostname. Set the hostname in the infrastructure instead.";
    /// `manifest-cluster-network-ignored`.
    ManifestClusterNetworkIgnored = "manifest-cluster-network-ignored", Warning,
        "clusterNetwork.apiServerPort or serviceDomain is set to other than RKE2's own; RKE2 reads neither",
        "RKE2's API server always listens on 6443 on the node, and its cluster domain comes from `serverConfig.clusterDomain`. A load balancer or DNS built from these fields does not match what the nodes run.";
    /// `manifest-additional-user-data-dropped`.
    ManifestAdditionalUserDataDropped = "manifest-additional-user-data-dropped", Warning,
        "additional user data sets keys CAPRKE2 drops",
        "CAPRKE2 writes `write_files`, `runcmd` and `ntp` itself and deletes them from `additionalUserData` (config and data) without a word. Put files in `files`, commands in `preRKE2Commands`/`postRKE2Commands`, and NTP servers in `agentConfig.ntp`.";
    /// `manifest-control-plane-endpoint-missing`.
    ManifestControlPlaneEndpointMissing = "manifest-control-plane-endpoint-missing", Info,
        "the Cluster has no control-plane endpoint",
        "RKE2ControlPlane creates no Machine, not even the first, until `Cluster.spec.controlPlaneEndpoint` has a host and a port. Most infrastructure providers fill it in (a load balancer's address); if yours does not, set it in the template. Its host is also the last `tls-san` and the default join server: the preview puts a placeholder there, or the host `--server` names.";
    /// `manifest-failure-domains-no-control-plane`.
    ManifestFailureDomainsNoControlPlane = "manifest-failure-domains-no-control-plane", Warning,
        "no failure domain is for control planes",
        "RKE2ControlPlane spreads control planes only over failure domains with `controlPlane: true` (a missing value counts as false). With none, control planes are placed without regard to failure domains.";
    /// `manifest-gzip-twice`.
    ManifestGzipTwice = "manifest-gzip-twice", Error,
        "gzipUserData on an infrastructure that gzips again",
        "CloudStack (by default) and AWS (with `uncompressedUserData: false`) gzip the user data themselves. cloud-init unpacks one gzip layer only, so a payload CAPRKE2 already gzipped is never run. Turn one of the two off.";
    /// `manifest-airgap-no-checksum`.
    ManifestAirGapNoChecksum = "manifest-airgap-no-checksum", Info,
        "air-gapped install without a checksum",
        "With `airGapped: true` and no `airGappedChecksum`, the node installs whatever artifacts its image holds, unverified. Set the checksum of the artifacts' sha256sum file.";
    /// `ignore-check-unknown`.
    IgnoreCheckUnknown = "ignore-check-unknown", Warning,
        "an ignore-check annotation names no check",
        "An annotation `ignore-check.rke2-payload.io/<id>` on a bootstrap Secret or a manifest object suppresses the check of that id on it; this one's id is not in the table (a typo, or a check of another version), so it suppresses nothing. Fix the id (`rke2-payload lint --list-checks` lists them) or remove the annotation.";
}

impl Check {
    /// The check with this id.
    ///
    /// ```
    /// use rke2_payload::Check;
    /// assert_eq!(Check::from_id("server-port"), Some(Check::ServerPort));
    /// assert_eq!(Check::from_id("no-such-check"), None);
    /// ```
    pub fn from_id(id: &str) -> Option<Check> {
        Check::ALL.iter().copied().find(|c| c.id() == id)
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl serde::Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// A check as its stable id: one of the ids of [`Check::ALL`].
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Check {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Check".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let ids: Vec<&str> = Check::ALL.iter().map(|c| c.id()).collect();
        schemars::json_schema!({
            "description": "The check's stable id (`rke2-payload lint --list-checks`).",
            "type": "string",
            "enum": ids,
        })
    }
}

impl<'de> serde::Deserialize<'de> for Check {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Check::from_id(&id)
            .ok_or_else(|| serde::de::Error::custom(format_args!("unknown check id {id:?}")))
    }
}

/// One finding: which check, how serious, what is wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Finding {
    /// The check, serialised as its stable id (`"id": "server-port"`).
    #[serde(rename = "id")]
    pub check: Check,
    /// Severity (the check's default unless the check says otherwise).
    pub severity: Severity,
    /// What is wrong and what to do; never a secret value.
    pub message: String,
    /// The file of the payload concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based line in the user data (or in `path`), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// For a finding about a manifest (from `render`): the object and where it is written.
    /// Such a finding is reported once per object and fact, at this place, not per Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<ManifestSite>,
}

/// Where a manifest finding's object is written: the file, the object, and its line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ManifestSite {
    /// The file the object came from, as it was named (`-` for standard input).
    pub file: String,
    /// `Kind namespace/name`.
    pub object: String,
    /// 1-based line of the object (its first key) in `file`, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// What the object's `ignore-check.rke2-payload.io/…` annotations say: a finding located
    /// here of a check they suppress is suppressed. Set by the preview from the parsed object;
    /// not serialised.
    #[serde(skip)]
    pub ignores: Option<std::sync::Arc<Ignores>>,
}

impl ManifestSite {
    /// The place of `object` (`Kind namespace/name`) in `file`, at `line` if known.
    ///
    /// ```
    /// let site = rke2_payload::ManifestSite::new("c.yaml", "Cluster default/demo", Some(1));
    /// assert_eq!(site.object, "Cluster default/demo");
    /// ```
    pub fn new(file: impl Into<String>, object: impl Into<String>, line: Option<u64>) -> Self {
        ManifestSite {
            file: file.into(),
            object: object.into(),
            line,
            ignores: None,
        }
    }

    /// The same place with what its object's ignore-check annotations say (`None` or empty:
    /// nothing).
    pub fn with_ignores(mut self, ignores: Option<Ignores>) -> Self {
        self.ignores = ignores.filter(|i| !i.is_empty()).map(std::sync::Arc::new);
        self
    }

    /// The same place with the names escaped for a terminal (read back from an annotation,
    /// they are input).
    pub(crate) fn terminal_safe(self) -> Self {
        let safe = |s: &str| crate::codec::text::terminal_safe(s).into_owned();
        ManifestSite {
            file: safe(&self.file),
            object: safe(&self.object),
            line: self.line,
            ignores: self.ignores,
        }
    }
}

impl Finding {
    /// A finding of `check` at its default severity, without a location.
    pub fn new(check: Check, message: impl Into<String>) -> Self {
        Finding {
            check,
            severity: check.severity(),
            message: message.into(),
            path: None,
            line: None,
            column: None,
            manifest: None,
        }
    }

    /// A finding of `check` at its default severity, in `path` (a file of the payload) and at
    /// `at` (a position in the user data) where known.
    pub(crate) fn located(
        check: Check,
        message: impl Into<String>,
        path: Option<String>,
        at: Option<Position>,
    ) -> Self {
        Finding {
            path,
            line: at.map(|a| a.line),
            column: at.map(|a| a.column),
            ..Finding::new(check, message)
        }
    }

    /// Sets another severity than the check's default.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Sets the file concerned.
    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Sets the 1-based line and column in the user data.
    pub fn at_line(mut self, line: u64, column: u64) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Sets the manifest object the finding is about (a finding of the preview).
    pub fn in_manifest(mut self, site: ManifestSite) -> Self {
        self.manifest = Some(site);
        self
    }

    /// Whether the finding says that CAPRKE2 (or the API server, validating its CRDs) refuses
    /// the object, so that no bootstrap data, or not this one, is written: `render` and `size`
    /// fail on these as `lint` fails on every error.
    pub fn is_refusal(&self) -> bool {
        self.severity == Severity::Error
            && matches!(
                self.check,
                Check::ManifestRenderFails
                    | Check::ManifestMissingKey
                    | Check::ManifestVersionPattern
                    | Check::ManifestVersionNotSemver
                    | Check::ManifestApiVersionNotServed
                    | Check::ManifestInfrastructureTemplateMissing
                    | Check::ManifestClusterNameInvalid
                    | Check::ManifestUnsubstitutedVariable
                    | Check::TopologyExpansionFails
                    | Check::TopologyVariableInvalid
                    | Check::TopologyClassRefused
                    | Check::ManifestSchema
                    | Check::ManifestWebhookRefuses
                    | Check::ManifestUpdateRefused
                    | Check::ManifestRegistrationAddressMissing
            )
    }

    /// Whether the finding says that the data never reaches a machine: a refusal
    /// ([`Finding::is_refusal`]), or the infrastructure provider refusing to deliver the data
    /// CAPRKE2 wrote (`provider-refuses-payload`). `size`, which answers whether the data
    /// reaches the machine, fails on these; `render`, which answers what CAPRKE2 writes, only
    /// on refusals.
    pub fn is_undeliverable(&self) -> bool {
        self.is_refusal()
            || (self.severity == Severity::Error && self.check == Check::ProviderRefusesPayload)
    }

    /// The check's stable id.
    pub fn id(&self) -> &'static str {
        self.check.id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for check in Check::ALL {
            assert!(seen.insert(check.id()), "{} twice", check.id());
            assert!(
                check
                    .id()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                check.id()
            );
            assert_eq!(Check::from_id(check.id()), Some(*check));
            assert!(
                !check.summary().is_empty() && check.explanation().len() > check.summary().len()
            );
        }
        let finding = Finding::new(Check::DuplicatePath, "x").with_severity(Severity::Info);
        let json = serde_json::to_string(&finding).expect("JSON");
        assert_eq!(
            json,
            r#"{"id":"duplicate-path","severity":"info","message":"x"}"#
        );
        let back: Finding = serde_json::from_str(&json).expect("read back");
        assert_eq!(back, finding);
        assert!(
            serde_json::from_str::<Finding>(r#"{"id":"nope","severity":"info","message":"x"}"#)
                .is_err()
        );
    }
}
