//! Which templates the class names, and the names the controller gives what it makes
//! (`internal/topology/names`): naming templates, random suffixes, the uid.

use rke2_payload::Check;
use serde_json::{Value, json};

use super::inline::without_values;
use super::{Expander, Names, Plan, Templates, shown};
use crate::manifests::{Object, at, str_at};

/// Kubernetes' `utilrand` alphabet (no vowels, no confusable digits).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A reference to a template as a ClusterClass holds it.
pub(super) struct TemplateRef {
    kind: String,
    name: String,
    namespace: String,
}

impl TemplateRef {
    /// The reference at `v2` (v1beta2 `templateRef`) or `v1` (v1beta1 `ref`) under `value`.
    pub(super) fn at(
        value: &Value,
        v2: &[&str],
        v1: &[&str],
        namespace: &str,
    ) -> Option<TemplateRef> {
        let r = at(value, v2).or_else(|| at(value, v1))?;
        let s = |k: &str| str_at(r, &[k]).unwrap_or("").to_owned();
        let name = s("name");
        if name.is_empty() {
            return None;
        }
        let ns = s("namespace");
        Some(TemplateRef {
            kind: s("kind"),
            name,
            namespace: if ns.is_empty() {
                namespace.to_owned()
            } else {
                ns
            },
        })
    }
}

impl<'a> Expander<'a> {
    /// The Cluster's topology and the ClusterClass it names (a finding if it is not there).
    pub(super) fn plan(&mut self) -> Option<Plan> {
        let cv = &self.cluster.value;
        let ns = self.cluster.namespace().to_owned();
        let topo = cv.pointer("/spec/topology").cloned().unwrap_or(Value::Null);
        let (class_ns, class_name) = class_of(self.cluster);
        let Some(class) = self
            .m
            .of_kind("ClusterClass")
            .find(|c| c.name() == class_name && c.namespace() == class_ns)
        else {
            self.fail(
                Check::TopologyExpansionFails,
                format!(
                    "spec.topology names ClusterClass {}/{}, which is not in the input; nothing is rendered for it",
                    shown(&class_ns, 60),
                    shown(&class_name, 60)
                ),
            );
            return None;
        };
        Some(Plan {
            version: str_at(&topo, &["version"]).unwrap_or("").to_owned(),
            topo,
            ns,
            class_title: class.title(),
            class: class.clone(),
            spec: class.get(&["spec"]).cloned().unwrap_or(Value::Null),
            class_name,
            class_ns,
        })
    }

    /// The class's infrastructure cluster, control plane and control plane machine templates.
    pub(super) fn templates(&mut self, plan: &Plan) -> Option<Templates<'a>> {
        let spec = &plan.spec;
        let named = |this: &mut Self, r: Option<TemplateRef>, what: &str| {
            if r.is_none() {
                this.fail(
                    Check::TopologyExpansionFails,
                    format!("{} names no {what} template", plan.class_title),
                );
            }
            r
        };
        let infra_ref = TemplateRef::at(
            spec,
            &["infrastructure", "templateRef"],
            &["infrastructure", "ref"],
            &plan.class_ns,
        );
        let infra_ref = named(self, infra_ref, "infrastructure")?;
        let cp_ref = TemplateRef::at(
            spec,
            &["controlPlane", "templateRef"],
            &["controlPlane", "ref"],
            &plan.class_ns,
        );
        let cp_ref = named(self, cp_ref, "control plane")?;
        let cp_machine_ref = TemplateRef::at(
            spec,
            &["controlPlane", "machineInfrastructure", "templateRef"],
            &["controlPlane", "machineInfrastructure", "ref"],
            &plan.class_ns,
        );
        let infra = self.template(&infra_ref, "infrastructure template");
        let cp = self.template(&cp_ref, "control plane template");
        let cp_machine = cp_machine_ref
            .as_ref()
            .map(|r| self.template(r, "control plane machine template"));
        let (Some(infra), Some(cp)) = (infra, cp) else {
            return None;
        };
        if cp_machine.is_some_and(|t| t.is_none()) {
            return None;
        }
        Some(Templates {
            infra,
            cp,
            cp_machine: cp_machine.flatten(),
        })
    }

    pub(super) fn template(&mut self, r: &TemplateRef, what: &str) -> Option<&'a Object> {
        let found = self
            .m
            .objects
            .iter()
            .find(|o| o.kind() == r.kind && o.name() == r.name && o.namespace() == r.namespace);
        if found.is_none() {
            self.fail(
                Check::TopologyExpansionFails,
                format!(
                    "the ClusterClass's {what} names {} {}/{}, which is not in the input; the cluster is not expanded",
                    shown(&r.kind, 60),
                    shown(&r.namespace, 60),
                    shown(&r.name, 60)
                ),
            );
        }
        found
    }

    /// The names of the infrastructure cluster, the control plane and its machine template,
    /// in the order the controller draws their random parts.
    pub(super) fn names(&mut self, plan: &Plan, templates: &Templates<'a>) -> Option<Names> {
        let spec = &plan.spec;
        let infra = self.name(
            str_at(spec, &["infrastructure", "naming", "template"])
                .or_else(|| str_at(spec, &["infrastructureNamingStrategy", "template"])),
            "{{ .cluster.name }}-{{ .random }}",
            json!({}),
        );
        let cp = self.name(
            str_at(spec, &["controlPlane", "naming", "template"])
                .or_else(|| str_at(spec, &["controlPlane", "namingStrategy", "template"])),
            "{{ .cluster.name }}-{{ .random }}",
            json!({}),
        );
        let (Some(infra), Some(cp)) = (infra, cp) else {
            return None;
        };
        let cp_machine = templates.cp_machine.map(|_| {
            let prefix = format!("{}-", self.cluster.name());
            self.template_name(&prefix)
        });
        Some(Names {
            infra,
            cp,
            cp_machine,
        })
    }

    /// A name from a naming template (Go template on `cluster.name`, `random` and the
    /// topology name), as `internal/topology/names` makes it.
    pub(super) fn name(
        &mut self,
        template: Option<&str>,
        default: &str,
        extra: Value,
    ) -> Option<String> {
        let template = template.filter(|t| !t.is_empty()).unwrap_or(default);
        let mut data = json!({"cluster": {"name": self.cluster.name()}, "random": self.random()});
        if let (Value::Object(d), Value::Object(e)) = (&mut data, extra) {
            d.extend(e);
        }
        let name = if template == default {
            // The defaults need no template engine.
            let mut name = default.to_owned();
            for (key, value) in [
                ("{{ .cluster.name }}", data["cluster"]["name"].as_str()),
                ("{{ .random }}", data["random"].as_str()),
                (
                    "{{ .machineDeployment.topologyName }}",
                    data.pointer("/machineDeployment/topologyName")
                        .and_then(Value::as_str),
                ),
                (
                    "{{ .machinePool.topologyName }}",
                    data.pointer("/machinePool/topologyName")
                        .and_then(Value::as_str),
                ),
            ] {
                if let Some(v) = value {
                    name = name.replace(key, v);
                }
            }
            name
        } else {
            match payload_gotmpl::render_name(template, &data) {
                Ok(n) => n,
                Err(e) => {
                    let e = without_values(&e.to_string(), &data);
                    self.fail(
                        Check::TopologyExpansionFails,
                        format!("the naming template {} fails: {e}", shown(template, 60)),
                    );
                    return None;
                }
            }
        };
        // Names over 63 characters are cut and given a new random suffix.
        if name.len() > 63 {
            let mut cut = name[..char_floor(&name, 58)].to_owned();
            cut.push_str(&self.random());
            return Some(cut);
        }
        Some(name)
    }

    /// A template name: `<prefix><random>`, the prefix cut to 58 bytes.
    pub(super) fn template_name(&mut self, prefix: &str) -> String {
        let mut name = prefix[..char_floor(prefix, 58)].to_owned();
        name.push_str(&self.random());
        name
    }

    fn random(&mut self) -> String {
        use rand::RngExt as _;
        (0..5)
            .map(|_| ALPHABET[self.rng.random_range(0..ALPHABET.len())] as char)
            .collect()
    }

    pub(super) fn uid(&mut self) -> String {
        use rand::RngExt as _;
        let b: [u8; 16] = self.rng.random();
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!(
            "{}-{}-4{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[13..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

/// The namespace and name of the ClusterClass a topology Cluster names (v1beta2 `classRef`,
/// v1beta1 `class` and `classNamespace`; the Cluster's namespace when it names none).
pub(super) fn class_of(cluster: &Object) -> (String, String) {
    let topo = cluster.get(&["spec", "topology"]).unwrap_or(&Value::Null);
    let name = str_at(topo, &["classRef", "name"])
        .or_else(|| str_at(topo, &["class"]))
        .unwrap_or("");
    let namespace = str_at(topo, &["classRef", "namespace"])
        .or_else(|| str_at(topo, &["classNamespace"]))
        .filter(|n| !n.is_empty())
        .unwrap_or(cluster.namespace());
    (namespace.to_owned(), name.to_owned())
}

/// The largest char boundary of `s` at or below `max`.
fn char_floor(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
