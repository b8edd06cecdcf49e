//! Built-in table of user-data size limits, one entry per platform.
//!
//! Each [`Cloud`] records how many bytes a platform accepts for first-boot user data, which bytes it
//! counts ([`Counted`]), whether a gzip-compressed CAPRKE2 payload survives the trip to cloud-init or
//! Ignition ([`GzipSafety`]), and what the matching Cluster API infrastructure provider does about
//! the limit.
//!
//! The figures come from platform documentation, API reference text and provider source code; none
//! was tested on a live platform. Where sources disagree, the table keeps the smaller figure (and the
//! stricter counting basis), marks the entry [`Confidence::Unverified`] and explains the choice in
//! [`Cloud::note`]. A fit against such an entry is meant to err on the safe side; a miss may still
//! be accepted by the real platform.
//!
//! Several entries ("kubernetes-secret", "kubevirt", "proxmox", "harvester", "metal3") have no
//! inline user-data field of their own: their bound is the 1 MiB size cap of the Kubernetes Secret
//! that carries the bootstrap data.

mod preconditions;

pub use preconditions::{
    CLUSTER_REQUIREMENTS, ClusterInfrastructure, ClusterRequirement, Handling, PROVIDER_HANDLING,
    Precondition, ProviderHandling, cluster_requirements, payload_preconditions,
};
use serde::{Deserialize, Serialize};

/// What a platform counts against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Counted {
    /// The raw bytes of `data.value`, before any base64 transport encoding.
    Raw,
    /// The base64 text of `data.value` (4 * ceil(n / 3) characters).
    Base64,
}

/// Whether a gzip-compressed payload reaches the first-boot agent intact and is decompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum GzipSafety {
    /// The transport keeps the bytes intact and the agent decompresses them.
    Safe,
    /// The provider or platform alters, rejects or misreads the compressed payload.
    Unsafe,
    /// No source settles the question either way.
    Unknown,
}

/// How sure the figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Confidence {
    /// Quoted from the platform's own documentation or API reference.
    OfficialDoc,
    /// Read from the CAPI provider's source, the platform SDK or an API schema.
    ProviderCode,
    /// Derived by reading code paths; no document states it directly.
    Inferred,
    /// Sources conflict or none was found; the table holds a conservative guess.
    Unverified,
}

/// One platform's user-data limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Cloud {
    /// Stable lowercase kebab-case id, e.g. `"aws"`.
    pub id: &'static str,
    /// Human-readable platform and provider name, e.g. `"AWS EC2 instances (CAPA AWSMachine)"`.
    pub name: &'static str,
    /// The largest accepted size, in bytes of the kind given by [`Cloud::counted`].
    pub limit_bytes: u64,
    /// Which bytes the platform measures against [`Cloud::limit_bytes`].
    pub counted: Counted,
    /// Whether a cloud-config payload compressed with CAPRKE2 `gzipUserData` (raw gzip bytes in
    /// `data.value`) reaches cloud-init intact and is decompressed.
    pub gzip_cloud_config: GzipSafety,
    /// Whether a compressed Ignition payload works.
    ///
    /// CAPRKE2 does not gzip an Ignition payload as a whole: it emits a small Ignition 3.3 JSON
    /// wrapper whose `ignition.config.replace` source is a base64 `data:` URL with
    /// `compression: gzip`. The wrapper is plain JSON text, so it is [`GzipSafety::Safe`] wherever
    /// the platform and provider accept plain Ignition JSON at all; [`GzipSafety::Unknown`] means
    /// that has not been established for this platform.
    pub gzip_ignition: GzipSafety,
    /// What the CAPI infrastructure provider does about the limit, in one sentence.
    pub provider_workaround: &'static str,
    /// URL or `owner/repo path` of the primary source for the figure.
    pub source: &'static str,
    /// How sure [`Cloud::limit_bytes`] and [`Cloud::counted`] are.
    pub confidence: Confidence,
    /// Whether the CAPI provider gzips the bootstrap data itself by default, so that a payload
    /// already gzipped by CAPRKE2 (`gzipUserData: true`) arrives gzipped twice.
    pub provider_gzips: bool,
    /// One sentence of caveats; may be empty.
    pub note: &'static str,
    /// The path the bootstrap data takes to the machine on this entry, which its limit binds:
    /// what a verdict against it assumes.
    pub path: &'static str,
}

/// Every built-in platform, in a stable order.
pub const CLOUDS: &[Cloud] = &[
    Cloud {
        id: "aws",
        name: "AWS EC2 instances, CAPA's default path (AWSMachine: Secrets Manager, SSM or S3)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "CAPA gzips cloud-config into AWS Secrets Manager chunks of 7,000 bytes (or SSM Parameter Store chunks of 4,000 base64 characters) fetched by a boothook stub, and puts Ignition in S3 behind a small pointer config.",
        source: "kubernetes-sigs/cluster-api-provider-aws controllers/awsmachine_controller.go (cloudInitUserData), pkg/cloud/services/secretsmanager/secret.go (maxSecretSizeBytes = 7000)",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "No code caps the number of chunks, so the 1 MiB bootstrap Secret binds the payload; EC2's 16,384 bytes bind only the stub of about 5,874 bytes (aws-user-data is the path with insecureSkipSecretsManager: true); Ignition in S3 needs AWSCluster.spec.s3Bucket.",
        path: "CAPA's default for an AWSMachine: cloud-config is gzipped into Secrets Manager (or SSM) chunks and EC2 user data holds a boothook stub of about 5,874 bytes; Ignition is put in S3 behind a small pointer config.",
    },
    Cloud {
        id: "aws-user-data",
        name: "AWS EC2 user data itself (CAPA AWSMachine with insecureSkipSecretsManager or Ignition storageType UnencryptedUserData)",
        limit_bytes: 16_384,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None on this path: the payload goes into EC2 user data as it is (CAPA gzips it only with uncompressedUserData: false, never Ignition).",
        source: "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-add-user-data.html",
        confidence: Confidence::OfficialDoc,
        provider_gzips: false,
        note: "CAPRKE2 gzipUserData plus CAPA uncompressedUserData: false double-gzips, which cloud-init unwraps only once.",
        path: "EC2 user data directly: an AWSMachine with cloudInit.insecureSkipSecretsManager: true, or Ignition with ignition.storageType: UnencryptedUserData.",
    },
    Cloud {
        id: "aws-machinepool",
        name: "AWS EC2 launch templates (CAPA AWSMachinePool)",
        limit_bytes: 16_384,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None for cloud-config, which CAPA writes uncompressed into the launch template; Ignition can be moved to S3 with ignition.storageType: ClusterObjectStore.",
        source: "kubernetes-sigs/cluster-api-provider-aws pkg/cloud/services/ec2/launchtemplate.go",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "There is no Secrets Manager path here, so CAPRKE2 gzipUserData is the only way to shrink a cloud-config payload.",
        path: "an AWSMachinePool's launch template: cloud-config goes into the template's user data as it is (no Secrets Manager path, no gzip by CAPA).",
    },
    Cloud {
        id: "azure",
        name: "Azure VMs and scale sets (CAPZ customData)",
        limit_bytes: 65_535,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None: CAPZ base64-encodes the bootstrap data into customData with no compression, size check or offload.",
        source: "https://learn.microsoft.com/azure/virtual-machines/custom-data",
        confidence: Confidence::OfficialDoc,
        provider_gzips: false,
        note: "The Compute API counts decoded bytes (ARM rejects more than 87,380 base64 characters), which the docs round to 64 KB.",
        path: "customData of the VM or scale set, base64-encoded by CAPZ.",
    },
    Cloud {
        id: "gcp",
        name: "Google Compute Engine metadata user-data (CAPG)",
        limit_bytes: 262_144,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None: CAPG stores the bootstrap data as a plain string under the user-data metadata key.",
        source: "https://cloud.google.com/compute/docs/reference/rest/v1/Metadata",
        confidence: Confidence::OfficialDoc,
        provider_gzips: false,
        note: "All metadata keys and values together must stay under 512 KB (shared with CAPG additionalMetadata), and binary gzip would need user-data-encoding: base64, which CAPG does not set.",
        path: "the instance metadata key user-data, as text.",
    },
    Cloud {
        id: "openstack",
        name: "OpenStack Nova user_data (CAPO; also OVHcloud Public Cloud)",
        limit_bytes: 65_535,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None: CAPO base64-encodes the bootstrap data into user_data (optionally also served by config drive) without compression.",
        source: "https://docs.openstack.org/nova/latest/user/metadata.html#user-data",
        confidence: Confidence::OfficialDoc,
        provider_gzips: false,
        note: "A Neutron 2025.1+ metadata-proxy regression (LP #2120723) reportedly breaks gzipped user data served by the metadata service, so prefer config drive when gzipping.",
        path: "Nova user_data (metadata service or config drive), base64-encoded by CAPO.",
    },
    Cloud {
        id: "vsphere",
        name: "VMware vSphere guestinfo (CAPV, govmomi mode)",
        limit_bytes: 65_536,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None: CAPV stores the base64 bootstrap data in guestinfo extraConfig keys without compression.",
        source: "https://github.com/vmware-tanzu/vm-operator/issues/138",
        confidence: Confidence::Unverified,
        provider_gzips: false,
        note: "The per-value guestinfo limit is disputed (64 KiB per VM Operator maintainers and GUESTMSG_MAX_IN_SIZE, about 1 MiB per VMware docs), so this uses the conservative 64 KiB of base64 text.",
        path: "guestinfo.userdata or guestinfo.ignition.config.data in the VM's extraConfig, base64-encoded by CAPV.",
    },
    Cloud {
        id: "hetzner",
        name: "Hetzner Cloud servers (CAPH HCloudMachine)",
        limit_bytes: 32_768,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None for hcloud servers, where CAPH sends the bootstrap data as a JSON string; bare-metal hosts get cloud-init over SSH instead.",
        source: "https://docs.hetzner.cloud/",
        confidence: Confidence::OfficialDoc,
        provider_gzips: false,
        note: "Binary gzip is corrupted because Go's JSON encoder replaces invalid UTF-8 with U+FFFD.",
        path: "the hcloud API's user_data, a JSON string.",
    },
    Cloud {
        id: "digitalocean",
        name: "DigitalOcean droplets (CAPDO)",
        limit_bytes: 65_536,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None: CAPDO passes the bootstrap data through unchanged.",
        source: "https://docs.digitalocean.com/reference/api/",
        confidence: Confidence::OfficialDoc,
        provider_gzips: false,
        note: "The API accepts only plain-text user data.",
        path: "the droplet's user_data, plain text.",
    },
    Cloud {
        id: "oci",
        name: "Oracle Cloud Infrastructure instances (CAPOCI)",
        limit_bytes: 32_000,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None: CAPOCI base64-encodes the bootstrap data into metadata.user_data next to any user-supplied metadata.",
        source: "https://docs.oracle.com/iaas/Content/Compute/Tasks/updatinginstancemetada.htm",
        confidence: Confidence::OfficialDoc,
        provider_gzips: false,
        note: "The 32,000 bytes cover metadata and extendedMetadata together, so ssh_authorized_keys and other keys shrink the room left for user_data.",
        path: "metadata.user_data, base64, sharing 32,000 bytes with the rest of the instance metadata.",
    },
    Cloud {
        id: "ibm-vpc",
        name: "IBM Cloud VPC instances (CAPIBM)",
        limit_bytes: 64_000,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "None: CAPIBM passes the bootstrap data to the VPC API as a plain string.",
        source: "https://cloud.ibm.com/docs/vpc?topic=vpc-user-data",
        confidence: Confidence::Unverified,
        provider_gzips: false,
        note: "IBM documents 64 K bytes without saying whether that means 64,000 or 65,536, so this uses the smaller 64,000.",
        path: "the VPC instance's user_data string.",
    },
    Cloud {
        id: "linode",
        name: "Akamai / Linode instances (CAPL)",
        limit_bytes: 16_383,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "CAPL sends small payloads as they are, gzips larger ones when GZIP_COMPRESSION_ENABLED is set, or uploads them to the Cluster Object Store behind a #include stub.",
        source: "linode/cluster-api-provider-linode v0.10.10 internal/controller/linodemachine_controller_helpers.go:1226-1272 (sent as it is only when smaller than 16,384 bytes)",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "The Linode API text contradicts itself (65,535 unencoded bytes vs about 16 KB encoded), so this uses what CAPL enforces: it sends the data directly only below 16,384 decoded bytes.",
        path: "the Linode's metadata user data (CAPL moves larger data to its object store when one is configured).",
    },
    Cloud {
        id: "linode-object-store",
        name: "Akamai / Linode instances with a Cluster Object Store (CAPL, LinodeCluster spec.objectStore)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unknown,
        gzip_ignition: GzipSafety::Unsafe,
        provider_workaround: "CAPL sends a payload under 16,384 bytes as it is and uploads a larger one to the LinodeCluster's object store, giving the instance a cloud-config #include of a presigned URL.",
        source: "linode/cluster-api-provider-linode v0.10.10 internal/controller/linodemachine_controller_helpers.go:1226-1272 (size < 16,384 sent directly; else, with spec.objectStore set, uploaded by services.CreateObject behind internal/controller/cloud-init.tmpl)",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "Object storage takes far more, so the 1 MiB bootstrap Secret binds; the pointer is a cloud-config #include, which Ignition does not read, so an Ignition payload keeps the linode limit.",
        path: "the Linode's metadata user data under 16,384 bytes; above, an object in the LinodeCluster's object store that a cloud-config #include pointer names (bounded by the Secret's size).",
    },
    Cloud {
        id: "cloudstack",
        name: "Apache CloudStack (CAPC)",
        limit_bytes: 32_768,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "CAPC gzips the bootstrap data by default unless uncompressedUserData: true is set.",
        source: "https://docs.cloudstack.apache.org/en/latest/adminguide/virtual_machines/user-data.html",
        confidence: Confidence::OfficialDoc,
        provider_gzips: true,
        note: "Set uncompressedUserData: true with CAPRKE2 gzipUserData (cloud-init undoes only one gzip layer) and with any Ignition payload; operators can raise vm.userdata.max.length to 1 MB of base64 sent by POST.",
        path: "the VM's userdata, gzipped by CAPC unless uncompressedUserData is true, then base64.",
    },
    Cloud {
        id: "kubevirt",
        name: "KubeVirt VMs (CAPK)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Unknown,
        provider_workaround: "CAPK copies the bootstrap data into a <name>-userdata Secret mounted as a config drive through userDataSecretRef, avoiding the 2,048-byte inline field.",
        source: "kubernetes-sigs/cluster-api-provider-kubevirt controllers/kubevirtmachine_controller.go",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "The bound is the copied Secret's 1 MiB, and unless the KubevirtCluster is externally managed CAPK YAML-parses the payload to add its capk SSH user, which fails on gzip.",
        path: "a Secret of the VM's cloud-init config drive (bounded by the Secret's size).",
    },
    Cloud {
        id: "nutanix",
        name: "Nutanix AHV (CAPX)",
        limit_bytes: 32_000,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Unknown,
        provider_workaround: "NutanixMachine bootstrapRef kind: Image mounts a prebuilt bootstrap ISO instead of inline guest customization.",
        source: "https://github.com/nutanix-cloud-native/cluster-api-provider-nutanix/pull/406",
        confidence: Confidence::Unverified,
        provider_gzips: false,
        note: "Sources disagree (32 KB per CAPX, 128,000 base64 characters per the Prism Central v3 API), so this counts 32,000 on the base64 text, and AOS 7.3 also demands a #cloud-config prefix that gzip lacks.",
        path: "guest customisation cloud-init, base64.",
    },
    Cloud {
        id: "outscale",
        name: "3DS Outscale VMs (CAPOSC)",
        limit_bytes: 512_000,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Unknown,
        provider_workaround: "None, as the limit is large; CAPOSC base64-encodes the bootstrap data into UserData.",
        source: "outscale/osc-sdk-rust docs/CreateVmsRequest.md",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "The API text does not say whether its 500 KiB applies before or after base64, so this counts the base64 text, and CAPOSC prepends a plain-text OUTSCALE SECTION when tags are set, which hides the gzip magic.",
        path: "the VM's UserData, base64.",
    },
    Cloud {
        id: "alibaba",
        name: "Alibaba Cloud ECS",
        limit_bytes: 16_384,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "Not researched; the only known CAPI provider is an old AliyunContainerService project.",
        source: "https://www.alibabacloud.com/help/doc-detail/52012",
        confidence: Confidence::Unverified,
        provider_gzips: false,
        note: "Current API SDK text allows 32 KB of raw data while an older help page says 16 KB, so this uses 16,384.",
        path: "the instance's UserData, base64.",
    },
    Cloud {
        id: "tencent",
        name: "Tencent Cloud CVM",
        limit_bytes: 16_384,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Unknown,
        provider_workaround: "No CAPI provider was researched.",
        source: "TencentCloud/tencentcloud-sdk-go tencentcloud/cvm/v20170312/models.go",
        confidence: Confidence::Unverified,
        provider_gzips: false,
        note: "The API text asks for base64 and allows up to 16 KB without saying which form is measured, so this counts 16,384 on the base64 text.",
        path: "the instance's UserData, base64.",
    },
    Cloud {
        id: "proxmox",
        name: "Proxmox VE (CAPMOX)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Unknown,
        provider_workaround: "CAPMOX writes the bootstrap data into a NoCloud or Ignition ISO attached as a CD-ROM, so no user-data API field is involved.",
        source: "ionos-cloud/cluster-api-provider-proxmox internal/inject/inject.go",
        confidence: Confidence::Inferred,
        provider_gzips: false,
        note: "No Proxmox limit was found, so the bootstrap Secret's 1 MiB is the bound, and CAPMOX re-parses Ignition and appends its own hostname and network entries, which a config.replace wrapper would discard.",
        path: "a NoCloud or Ignition ISO attached to the VM (bounded by the Secret's size).",
    },
    Cloud {
        id: "harvester",
        name: "Harvester (CAPHV)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Unsafe,
        provider_workaround: "CAPHV YAML-merges its own cloud-init with the bootstrap data and passes the result through cloudInitNoCloud.userDataSecretRef.",
        source: "rancher-sandbox/cluster-api-provider-harvester util/cloudinit.go",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "The YAML merge fails on gzip, MIME multipart and Ignition payloads.",
        path: "a NoCloud Secret merged by CAPHV (bounded by the Secret's size).",
    },
    Cloud {
        id: "metal3",
        name: "Metal3 bare metal (CAPM3 and Baremetal Operator)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Unknown,
        provider_workaround: "None needed: Ironic writes the user data to a config drive of up to 64 MB.",
        source: "metal3-io/baremetal-operator pkg/provisioner/ironic/ironic.go",
        confidence: Confidence::Inferred,
        provider_gzips: false,
        note: "The BareMetalHost userData Secret's 1 MiB binds first, and BMO carries the data as a string inside JSON, which corrupts gzip.",
        path: "a config drive Ironic writes from the BareMetalHost's userData Secret (bounded by the Secret's size).",
    },
    Cloud {
        id: "docker",
        name: "Docker containers (CAPD, for development)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Unsafe,
        gzip_ignition: GzipSafety::Unsafe,
        provider_workaround: "None needed: CAPD reads the bootstrap data and runs its commands in the container with docker exec; no user-data field is involved.",
        source: "kubernetes-sigs/cluster-api test/infrastructure/docker/internal/docker/machine.go (GetBootstrapCommands)",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "Only the bootstrap Secret's 1 MiB binds; CAPD parses the cloud-config as YAML, so gzipped data fails there.",
        path: "no user data: CAPD parses the bootstrap data and runs it in the container with docker exec.",
    },
    Cloud {
        id: "captf-aws-s3",
        name: "AWS EC2 by CAPTF's aws-machine module, S3 delivery (TerraformMachine, bootstrap_delivery: s3)",
        limit_bytes: 1_048_576,
        counted: Counted::Base64,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "The aws-machine module (default bootstrap_delivery: s3) writes the payload to the cluster's bootstrap bucket and gives the instance a small user-data stub that fetches it (a boothook that gunzips gzip, or an Ignition config.replace pointer).",
        source: "captf-io/terraform-aws-machine a0da0b8e variables.tf:66-76 (bootstrap_delivery, default s3), locals_bootstrap.tf:35-52 (the stub), bootstrap_object.tf:19-30 (aws_s3_object, content_base64); captf-io/cluster-api-provider-terraform 16ca67d3 internal/contract/inputs.go:122-124 (bootstrap_data is the base64 of the Secret's value)",
        confidence: Confidence::Inferred,
        provider_gzips: false,
        note: "S3 takes far more: the bound is the Kubernetes Secret in which CAPTF keeps the module's inputs, where the payload travels as its base64 text (bootstrap_data) beside the other inputs, so this counts the base64 text against 1 MiB.",
        path: "an S3 object in the cluster's bootstrap bucket that a user-data stub fetches; the payload's base64 reaches the module as the variable bootstrap_data, kept in CAPTF's inputs Secret.",
    },
    Cloud {
        id: "kubernetes-secret",
        name: "Kubernetes Secret (bound for every bootstrap data Secret)",
        limit_bytes: 1_048_576,
        counted: Counted::Raw,
        gzip_cloud_config: GzipSafety::Safe,
        gzip_ignition: GzipSafety::Safe,
        provider_workaround: "Not a platform: every bootstrap data Secret and every provider copy of it must stay within this size.",
        source: "kubernetes/kubernetes staging/src/k8s.io/api/core/v1/types.go",
        confidence: Confidence::ProviderCode,
        provider_gzips: false,
        note: "The cap applies to the sum of all data values, so the small format key next to value counts too.",
        path: "the bootstrap data Secret itself, which every path starts from.",
    },
];

/// A condition on a field of an infrastructure machine template's machine spec, or of the
/// cluster's infrastructure object's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    /// Always.
    Always,
    /// The field (a path of keys) is `true`.
    True(&'static [&'static str]),
    /// The field is this string.
    Is(&'static [&'static str], &'static str),
    /// The cluster's infrastructure object (when the input holds it) sets this field (a path of
    /// keys of its `spec`) to anything but null.
    ClusterSets(&'static [&'static str]),
}

/// One row of the delivery table: an infrastructure machine kind (and API group), the
/// bootstrap format it applies to (`None`: both), a condition on the machine spec, and the
/// entry of [`CLOUDS`] whose limit binds on that path. The first row that matches is the path.
struct Route {
    kind: &'static str,
    group: &'static str,
    ignition: Option<bool>,
    /// The module a CAPTF machine template runs: the last path component of the repository of
    /// its `source.image` (`None`: any, or a kind that runs no module).
    module: Option<&'static str>,
    when: When,
    cloud: &'static str,
    /// What selects the path, in words.
    why: &'static str,
}

impl Route {
    /// A kind of the core infrastructure API group whose path is the same whatever its fields
    /// and the format.
    const fn by_kind(kind: &'static str, cloud: &'static str, why: &'static str) -> Route {
        Route {
            kind,
            group: CAPA,
            ignition: None,
            module: None,
            when: When::Always,
            cloud,
            why,
        }
    }
}

const CAPA: &str = "infrastructure.cluster.x-k8s.io";
const CAPV_SUPERVISOR: &str = "vmware.infrastructure.cluster.x-k8s.io";

/// How each infrastructure provider delivers the bootstrap data, by the machine (template)
/// kinds an RKE2ControlPlane, MachineDeployment or MachinePool names. Sources: the providers'
/// code, as listed in [`Cloud::source`] of each entry and in the README's limits table.
const ROUTES: &[Route] = &[
    Route {
        ignition: Some(false),
        when: When::True(&["cloudInit", "insecureSkipSecretsManager"]),
        ..Route::by_kind(
            "AWSMachineTemplate",
            "aws-user-data",
            "cloudInit.insecureSkipSecretsManager is true, so CAPA puts the payload into EC2 user data",
        )
    },
    Route {
        ignition: Some(true),
        when: When::Is(&["ignition", "storageType"], "UnencryptedUserData"),
        ..Route::by_kind(
            "AWSMachineTemplate",
            "aws-user-data",
            "ignition.storageType is UnencryptedUserData, so CAPA puts the config into EC2 user data",
        )
    },
    Route::by_kind(
        "AWSMachineTemplate",
        "aws",
        "CAPA's default path: Secrets Manager for cloud-config, S3 for Ignition; EC2 user data holds a small stub",
    ),
    Route {
        ignition: Some(true),
        when: When::Is(&["ignition", "storageType"], "ClusterObjectStore"),
        ..Route::by_kind(
            "AWSMachinePool",
            "aws",
            "ignition.storageType is ClusterObjectStore, so CAPA puts the config in S3",
        )
    },
    Route::by_kind(
        "AWSMachinePool",
        "aws-machinepool",
        "an AWSMachinePool's launch template carries the payload as user data",
    ),
    Route::by_kind(
        "AWSManagedMachinePool",
        "aws-machinepool",
        "a launch template carries the payload as user data",
    ),
    Route::by_kind(
        "AzureMachineTemplate",
        "azure",
        "CAPZ puts the payload into customData",
    ),
    Route::by_kind(
        "AzureMachinePool",
        "azure",
        "CAPZ puts the payload into the scale set's customData",
    ),
    Route::by_kind(
        "GCPMachineTemplate",
        "gcp",
        "CAPG puts the payload into the user-data metadata key",
    ),
    Route::by_kind(
        "GCPMachinePool",
        "gcp",
        "CAPG puts the payload into the user-data metadata key",
    ),
    Route::by_kind(
        "OpenStackMachineTemplate",
        "openstack",
        "CAPO puts the payload into Nova user_data (the config drive has the same limit)",
    ),
    Route::by_kind(
        "VSphereMachineTemplate",
        "vsphere",
        "CAPV puts the payload into guestinfo",
    ),
    Route {
        group: CAPV_SUPERVISOR,
        ..Route::by_kind(
            "VSphereMachineTemplate",
            "vsphere",
            "VM Operator puts the payload into guestinfo, gzipped",
        )
    },
    Route::by_kind(
        "HCloudMachineTemplate",
        "hetzner",
        "CAPH puts the payload into the hcloud user_data",
    ),
    Route::by_kind(
        "HetznerBareMetalMachineTemplate",
        "kubernetes-secret",
        "CAPH writes the payload over SSH after installimage",
    ),
    Route::by_kind(
        "Metal3MachineTemplate",
        "metal3",
        "the BareMetalHost's config drive carries the payload",
    ),
    Route::by_kind(
        "NutanixMachineTemplate",
        "nutanix",
        "CAPX puts the payload into guest customisation",
    ),
    Route::by_kind(
        "DockerMachineTemplate",
        "docker",
        "CAPD runs the payload's commands with docker exec",
    ),
    Route::by_kind(
        "DockerMachinePoolTemplate",
        "docker",
        "CAPD runs the payload's commands with docker exec",
    ),
    Route::by_kind(
        "DockerMachinePool",
        "docker",
        "CAPD runs the payload's commands with docker exec",
    ),
    Route::by_kind(
        "DOMachineTemplate",
        "digitalocean",
        "CAPDO puts the payload into the droplet's user_data",
    ),
    Route {
        ignition: Some(false),
        when: When::ClusterSets(&["objectStore"]),
        ..Route::by_kind(
            "LinodeMachineTemplate",
            "linode-object-store",
            "the LinodeCluster sets spec.objectStore, so CAPL uploads a payload of 16,384 bytes or more there behind a #include pointer",
        )
    },
    Route::by_kind(
        "LinodeMachineTemplate",
        "linode",
        "CAPL puts the payload into the Linode's metadata",
    ),
    Route {
        module: Some("aws-machine"),
        when: When::Is(&["variables", "bootstrap_delivery"], "inline"),
        ..Route::by_kind(
            "TerraformMachineTemplate",
            "aws-user-data",
            "the aws-machine module's variables.bootstrap_delivery is inline, so the payload goes into EC2 user data (a plain cloud-config gzipped by the module first)",
        )
    },
    Route {
        module: Some("aws-machine"),
        ..Route::by_kind(
            "TerraformMachineTemplate",
            "captf-aws-s3",
            "the aws-machine module's default bootstrap_delivery (s3) stages the payload in the cluster's bootstrap bucket behind a user-data stub",
        )
    },
    Route {
        module: Some("aws-machinepool"),
        ..Route::by_kind(
            "TerraformMachinePoolTemplate",
            "captf-aws-s3",
            "the aws-machinepool module stages the payload in the cluster's bootstrap bucket (pools have no inline delivery)",
        )
    },
    Route {
        module: Some("aws-machinepool"),
        ..Route::by_kind(
            "TerraformMachinePool",
            "captf-aws-s3",
            "the aws-machinepool module stages the payload in the cluster's bootstrap bucket (pools have no inline delivery)",
        )
    },
    Route::by_kind(
        "KubevirtMachineTemplate",
        "kubevirt",
        "CAPK puts the payload into a config drive Secret",
    ),
    Route::by_kind(
        "ProxmoxMachineTemplate",
        "proxmox",
        "CAPMOX attaches the payload as an ISO",
    ),
    Route::by_kind(
        "CloudStackMachineTemplate",
        "cloudstack",
        "CAPC puts the payload into the VM's userdata",
    ),
    Route::by_kind(
        "HarvesterMachineTemplate",
        "harvester",
        "CAPHV merges the payload into a NoCloud Secret",
    ),
    Route::by_kind(
        "OCIMachineTemplate",
        "oci",
        "CAPOCI puts the payload into metadata.user_data",
    ),
    Route::by_kind(
        "OscMachineTemplate",
        "outscale",
        "CAPOSC puts the payload into UserData",
    ),
    Route::by_kind(
        "IBMVPCMachineTemplate",
        "ibm-vpc",
        "CAPIBM puts the payload into the instance's user_data",
    ),
];

/// The path a bootstrap payload takes to its machine, as the infrastructure machine template
/// that carries it decides: the entry whose limit binds, and why that one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Delivery {
    /// The id of the [`CLOUDS`] entry whose limit binds on this path.
    pub cloud: String,
    /// What selected it: the template and the field, in one sentence.
    pub reason: String,
    /// Whether the provider on this path parses the bootstrap data as YAML before any machine
    /// sees it ([`Handling::ParsesYaml`] in [`PROVIDER_HANDLING`], its condition met): a gzipped
    /// payload is then the provider's refusal (`provider-refuses-payload`), not the transport's
    /// (`gzip-unsafe`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parsed_as_yaml: bool,
}

/// The delivery path of a payload carried by an infrastructure machine template (or machine
/// pool) of kind `kind` and API version `api_version` (its group decides between providers
/// that share a kind name), whose machine spec is `spec` (`spec.template.spec` of a template,
/// `spec` of a pool), for an Ignition payload or a cloud-config one. `None` for a kind the
/// table does not know. The paths that depend on the cluster's infrastructure object take
/// their default here: [`delivery_in_cluster`] reads it.
///
/// ```
/// use rke2_payload::delivery_for;
/// use serde_json::json;
///
/// let spec = json!({"cloudInit": {"insecureSkipSecretsManager": true}});
/// let d = delivery_for("AWSMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", &spec, false).unwrap();
/// assert_eq!(d.cloud, "aws-user-data");
/// let d = delivery_for("AWSMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", &json!({}), false).unwrap();
/// assert_eq!(d.cloud, "aws");
/// assert!(delivery_for("NoSuchMachineTemplate", "x/v1", &json!({}), false).is_none());
/// ```
pub fn delivery_for(
    kind: &str,
    api_version: &str,
    spec: &serde_json::Value,
    ignition: bool,
) -> Option<Delivery> {
    delivery_in_cluster(kind, api_version, spec, None, ignition)
}

/// [`delivery_for`], with the cluster's infrastructure object when the input holds it
/// (`cluster`): some paths depend on it (a LinodeCluster's `spec.objectStore` takes a payload
/// that CAPL's metadata cannot), and so does whether the provider parses the data
/// ([`Delivery::parsed_as_yaml`]: CAPK does not for an externally managed KubevirtCluster).
///
/// ```
/// use rke2_payload::{ClusterInfrastructure, delivery_in_cluster};
/// use serde_json::json;
///
/// let api = "infrastructure.cluster.x-k8s.io/v1alpha2";
/// let store = json!({"objectStore": {"credentialsRef": {"name": "bucket"}}});
/// let cluster = ClusterInfrastructure::new(&store, false);
/// let d = delivery_in_cluster("LinodeMachineTemplate", api, &json!({}), Some(cluster), false).unwrap();
/// assert_eq!(d.cloud, "linode-object-store");
/// let d = delivery_in_cluster("LinodeMachineTemplate", api, &json!({}), None, false).unwrap();
/// assert_eq!(d.cloud, "linode");
/// ```
pub fn delivery_in_cluster(
    kind: &str,
    api_version: &str,
    spec: &serde_json::Value,
    cluster: Option<ClusterInfrastructure<'_>>,
    ignition: bool,
) -> Option<Delivery> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    fn at<'v>(root: &'v serde_json::Value, path: &[&str]) -> Option<&'v serde_json::Value> {
        path.iter().try_fold(root, |here, key| here.get(*key))
    }
    let module = at(spec, &["source", "image"])
        .and_then(serde_json::Value::as_str)
        .map(image_name);
    ROUTES
        .iter()
        .filter(|r| r.kind == kind && (r.group == group || group.is_empty()))
        .filter(|r| r.ignition.is_none_or(|i| i == ignition))
        .filter(|r| r.module.is_none_or(|m| module == Some(m)))
        .find(|r| match r.when {
            When::Always => true,
            When::True(path) => at(spec, path).and_then(serde_json::Value::as_bool) == Some(true),
            When::Is(path, value) => {
                at(spec, path).and_then(serde_json::Value::as_str) == Some(value)
            }
            When::ClusterSets(path) => {
                cluster.is_some_and(|c| at(c.spec, path).is_some_and(|v| !v.is_null()))
            }
        })
        .map(|r| Delivery {
            cloud: r.cloud.to_owned(),
            reason: r.why.to_owned(),
            parsed_as_yaml: preconditions::parses_yaml(kind, group, cluster),
        })
}

/// The name of an OCI image reference's repository, its last path component:
/// `aws-machine` of `ghcr.io/captf-io/module-images/aws-machine:v0.1.0-opentofu@sha256:…`
/// (the digest, then the tag, cut off; a registry's port is before the last `/`).
fn image_name(reference: &str) -> &str {
    let repository = reference.split_once('@').map_or(reference, |(r, _)| r);
    let last = repository.rsplit('/').next().unwrap_or(repository);
    last.split_once(':').map_or(last, |(name, _)| name)
}

/// Looks a platform up by id (ASCII case-insensitive).
pub fn find_cloud(id: &str) -> Option<&'static Cloud> {
    CLOUDS
        .iter()
        .find(|cloud| cloud.id.eq_ignore_ascii_case(id))
}

impl Cloud {
    /// Whether a source states the limit (anything but [`Confidence::Unverified`]): the
    /// platforms `size` gates on by default.
    pub fn is_verified(&self) -> bool {
        self.confidence != Confidence::Unverified
    }

    /// Bytes this platform counts for a `data.value` of `value_bytes` raw bytes.
    pub fn counted_bytes(&self, value_bytes: u64) -> u64 {
        match self.counted {
            Counted::Raw => value_bytes,
            Counted::Base64 => base64_len(value_bytes),
        }
    }

    /// The largest raw `data.value` that fits (Base64: floor(limit/4)*3).
    pub fn max_raw_bytes(&self) -> u64 {
        match self.counted {
            Counted::Raw => self.limit_bytes,
            Counted::Base64 => (self.limit_bytes / 4) * 3,
        }
    }
}

/// Length of the standard padded base64 text of `n` bytes.
///
/// Saturates at `u64::MAX` instead of overflowing.
pub(crate) const fn base64_len(n: u64) -> u64 {
    n.div_ceil(3).saturating_mul(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const REQUIRED: &[&str] = &[
        "aws",
        "aws-user-data",
        "aws-machinepool",
        "docker",
        "azure",
        "gcp",
        "openstack",
        "vsphere",
        "hetzner",
        "digitalocean",
        "oci",
        "ibm-vpc",
        "linode",
        "cloudstack",
        "kubevirt",
        "nutanix",
        "outscale",
        "alibaba",
    ];

    fn get(id: &str) -> &'static Cloud {
        find_cloud(id).unwrap_or_else(|| panic!("missing built-in cloud {id}"))
    }

    #[test]
    fn ids_are_unique_and_lowercase_kebab() {
        let mut seen = HashSet::new();
        for cloud in CLOUDS {
            let id = cloud.id;
            assert!(seen.insert(id), "duplicate id {id}");
            assert!(!id.is_empty(), "empty id");
            assert!(
                id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "id {id} is not lowercase kebab-case"
            );
            assert!(
                !id.starts_with('-') && !id.ends_with('-') && !id.contains("--"),
                "id {id} has a misplaced dash"
            );
        }
    }

    #[test]
    fn required_ids_are_present() {
        for id in REQUIRED {
            assert!(find_cloud(id).is_some(), "required id {id} missing");
        }
    }

    #[test]
    fn text_fields_are_filled() {
        for cloud in CLOUDS {
            assert!(
                !cloud.source.trim().is_empty(),
                "{} has no source",
                cloud.id
            );
            assert!(!cloud.name.trim().is_empty(), "{} has no name", cloud.id);
            assert!(
                !cloud.provider_workaround.trim().is_empty(),
                "{} has no provider_workaround",
                cloud.id
            );
            assert!(cloud.limit_bytes > 0, "{} has a zero limit", cloud.id);
            assert!(
                cloud.note.is_empty() || cloud.note.ends_with('.'),
                "{} note is not a sentence",
                cloud.id
            );
        }
    }

    #[test]
    fn aws_user_data_counts_16384_raw_bytes() {
        let aws = get("aws-user-data");
        assert_eq!(aws.limit_bytes, 16_384);
        assert_eq!(aws.counted, Counted::Raw);
        assert!(aws.counted_bytes(16_384) <= aws.limit_bytes);
        assert!(aws.counted_bytes(16_385) > aws.limit_bytes);
        assert_eq!(aws.max_raw_bytes(), 16_384);
        assert_eq!(aws.confidence, Confidence::OfficialDoc);
    }

    #[test]
    fn aws_machinepool_shares_the_ec2_limit() {
        let pool = get("aws-machinepool");
        assert_eq!(pool.limit_bytes, 16_384);
        assert_eq!(pool.counted, Counted::Raw);
    }

    #[test]
    fn openstack_counts_the_base64_text() {
        let os = get("openstack");
        assert_eq!(os.limit_bytes, 65_535);
        assert_eq!(os.counted, Counted::Base64);
        assert_eq!(os.max_raw_bytes(), 49_149);
        assert_eq!(os.counted_bytes(49_149), 65_532);
        assert!(os.counted_bytes(49_150) > 65_535);
    }

    #[test]
    fn azure_counts_decoded_bytes() {
        let azure = get("azure");
        assert_eq!(azure.limit_bytes, 65_535);
        assert_eq!(azure.counted, Counted::Raw);
        // The same limit expressed in base64 characters, as ARM reports it.
        assert_eq!(base64_len(65_535), 87_380);
    }

    #[test]
    fn base64_limits_give_the_documented_raw_ceilings() {
        assert_eq!(get("oci").max_raw_bytes(), 24_000);
        assert_eq!(get("cloudstack").max_raw_bytes(), 24_576);
        assert_eq!(get("vsphere").max_raw_bytes(), 49_152);
        assert_eq!(get("nutanix").max_raw_bytes(), 24_000);
    }

    #[test]
    fn max_raw_bytes_is_the_exact_ceiling_for_every_entry() {
        for cloud in CLOUDS {
            let max = cloud.max_raw_bytes();
            assert!(
                cloud.counted_bytes(max) <= cloud.limit_bytes,
                "{}: max_raw_bytes does not fit",
                cloud.id
            );
            assert!(
                cloud.counted_bytes(max + 1) > cloud.limit_bytes,
                "{}: max_raw_bytes + 1 still fits",
                cloud.id
            );
        }
    }

    #[test]
    fn no_entry_exceeds_the_kubernetes_secret_cap() {
        let secret = get("kubernetes-secret");
        assert_eq!(secret.limit_bytes, 1_048_576);
        assert_eq!(secret.counted, Counted::Raw);
        for cloud in CLOUDS {
            assert!(
                cloud.max_raw_bytes() <= secret.limit_bytes,
                "{} allows more than a Secret can hold",
                cloud.id
            );
        }
    }

    #[test]
    fn disputed_figures_are_unverified_and_explained() {
        for id in ["vsphere", "nutanix", "ibm-vpc", "alibaba", "tencent"] {
            let cloud = get(id);
            assert_eq!(cloud.confidence, Confidence::Unverified, "{id}");
            assert!(!cloud.note.is_empty(), "{id} needs a note");
        }
        assert_eq!(get("vsphere").limit_bytes, 65_536);
        assert_eq!(get("ibm-vpc").limit_bytes, 64_000);
    }

    #[test]
    fn gzip_safety_follows_the_transport() {
        for id in [
            "hetzner",
            "gcp",
            "digitalocean",
            "ibm-vpc",
            "kubevirt",
            "nutanix",
            "outscale",
        ] {
            assert_eq!(get(id).gzip_cloud_config, GzipSafety::Unsafe, "{id}");
        }
        for id in [
            "aws",
            "aws-machinepool",
            "azure",
            "openstack",
            "oci",
            "cloudstack",
            "linode",
            "alibaba",
        ] {
            assert_eq!(get(id).gzip_cloud_config, GzipSafety::Safe, "{id}");
        }
    }

    #[test]
    fn base64_len_matches_padded_encoding() {
        assert_eq!(base64_len(0), 0);
        assert_eq!(base64_len(1), 4);
        assert_eq!(base64_len(2), 4);
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
        assert_eq!(base64_len(16_384), 21_848);
        assert_eq!(base64_len(u64::MAX), u64::MAX);
    }

    #[test]
    fn find_is_ascii_case_insensitive() {
        assert_eq!(find_cloud("AWS").map(|c| c.id), Some("aws"));
        assert_eq!(find_cloud("Ibm-Vpc").map(|c| c.id), Some("ibm-vpc"));
        assert!(find_cloud("nope").is_none());
        assert!(find_cloud("").is_none());
    }

    #[test]
    fn enums_serialize_as_kebab_case() {
        fn json<T: Serialize>(value: &T) -> String {
            serde_json::to_string(value).expect("serializes")
        }
        assert_eq!(json(&Counted::Base64), "\"base64\"");
        assert_eq!(json(&Confidence::OfficialDoc), "\"official-doc\"");
        assert_eq!(json(&Confidence::ProviderCode), "\"provider-code\"");
        assert_eq!(json(&GzipSafety::Unknown), "\"unknown\"");
        let aws = json(get("aws-user-data"));
        assert!(aws.contains("\"limit_bytes\":16384"), "{aws}");
        assert!(aws.contains("\"counted\":\"raw\""), "{aws}");
    }

    const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1alpha1";

    #[test]
    fn an_image_reference_names_its_repository() {
        assert_eq!(
            image_name("ghcr.io/captf-io/module-images/aws-machine:v0.1.0-opentofu@sha256:ab"),
            "aws-machine"
        );
        assert_eq!(image_name("localhost:5000/aws-machine"), "aws-machine");
        assert_eq!(image_name("aws-machine@sha256:ab"), "aws-machine");
        assert_eq!(
            image_name("example.com/aws-machine-fork:v1"),
            "aws-machine-fork"
        );
    }

    #[test]
    fn captf_s_aws_machine_module_stages_in_s3_unless_delivery_is_inline() {
        let image = "ghcr.io/captf-io/module-images/aws-machine:v0.1.0-terraform";
        let default = serde_json::json!({"source": {"image": image}});
        for ignition in [false, true] {
            let d = delivery_for("TerraformMachineTemplate", INFRA, &default, ignition)
                .expect("routed");
            assert_eq!(d.cloud, "captf-aws-s3");
            assert!(!d.parsed_as_yaml);
        }
        let inline = serde_json::json!({
            "source": {"image": image},
            "variables": {"bootstrap_delivery": "inline"}
        });
        let d = delivery_for("TerraformMachineTemplate", INFRA, &inline, false).expect("routed");
        assert_eq!(d.cloud, "aws-user-data");
        // A module the table does not know, or none named: no path, every cloud is judged.
        let other = serde_json::json!({"source": {"image": "example.com/my-machine:v1"}});
        assert!(delivery_for("TerraformMachineTemplate", INFRA, &other, false).is_none());
        assert!(
            delivery_for(
                "TerraformMachineTemplate",
                INFRA,
                &serde_json::json!({}),
                false
            )
            .is_none()
        );
        let pool = serde_json::json!({"source": {"image": "x/aws-machinepool:v1"}});
        assert_eq!(
            delivery_for("TerraformMachinePool", INFRA, &pool, false).map(|d| d.cloud),
            Some("captf-aws-s3".to_owned())
        );
        // The inputs Secret holds the payload's base64 text.
        let captf = get("captf-aws-s3");
        assert_eq!(captf.counted, Counted::Base64);
        assert_eq!(captf.max_raw_bytes(), 786_432);
    }

    #[test]
    fn a_linode_cluster_with_an_object_store_takes_a_cloud_config_past_the_metadata_limit() {
        let api = "infrastructure.cluster.x-k8s.io/v1alpha2";
        let spec = serde_json::json!({"region": "us-ord"});
        let store = serde_json::json!({"objectStore": {"credentialsRef": {"name": "b"}}});
        let none = serde_json::json!({"objectStore": null});
        let with = Some(ClusterInfrastructure::new(&store, false));
        let cloud = |cluster, ignition| {
            delivery_in_cluster("LinodeMachineTemplate", api, &spec, cluster, ignition)
                .map(|d| d.cloud)
        };
        assert_eq!(cloud(with, false).as_deref(), Some("linode-object-store"));
        // The pointer is a cloud-config #include: Ignition keeps the metadata limit.
        assert_eq!(cloud(with, true).as_deref(), Some("linode"));
        assert_eq!(cloud(None, false).as_deref(), Some("linode"));
        assert_eq!(
            cloud(Some(ClusterInfrastructure::new(&none, false)), false).as_deref(),
            Some("linode")
        );
        // delivery_for is the path without the cluster.
        assert_eq!(
            delivery_for("LinodeMachineTemplate", api, &spec, false).map(|d| d.cloud),
            Some("linode".to_owned())
        );
        assert!(get("linode-object-store").limit_bytes > get("linode").limit_bytes);
    }

    #[test]
    fn a_path_whose_provider_parses_yaml_says_so() {
        let group = "infrastructure.cluster.x-k8s.io/v1beta2";
        let spec = serde_json::json!({});
        for kind in [
            "DockerMachineTemplate",
            "HarvesterMachineTemplate",
            "KubevirtMachineTemplate",
        ] {
            let d = delivery_for(kind, group, &spec, false).expect(kind);
            assert!(d.parsed_as_yaml, "{kind}");
        }
        let managed = serde_json::json!({
            "metadata": {"annotations": {"cluster.x-k8s.io/managed-by": ""}},
            "spec": {}
        });
        let d = delivery_in_cluster(
            "KubevirtMachineTemplate",
            group,
            &spec,
            Some(ClusterInfrastructure::of(&managed)),
            false,
        )
        .expect("routed");
        assert!(!d.parsed_as_yaml);
        assert!(
            !delivery_for("AWSMachineTemplate", group, &spec, false)
                .expect("routed")
                .parsed_as_yaml
        );
        // Written only when true, read back as false when absent.
        let json = serde_json::to_string(&delivery_for("AWSMachineTemplate", group, &spec, false))
            .expect("json");
        assert!(!json.contains("parsed_as_yaml"), "{json}");
        let back: Delivery =
            serde_json::from_str(r#"{"cloud":"docker","reason":"r"}"#).expect("reads");
        assert!(!back.parsed_as_yaml);
    }
}
