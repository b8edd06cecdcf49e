//! Picking Secrets as kubectl does: by namespace, by name (`name` or `namespace/name`), by label
//! selector (equality- and set-based), and by Cluster (the `cluster.x-k8s.io/cluster-name`
//! label).

use std::fmt;

use super::{BootstrapSecret, CLUSTER_NAME_LABEL};
use crate::codec::text::shorten;

/// Which Secrets of an input a command works on. The default picks every Secret.
///
/// ```
/// use rke2_payload::Selector;
///
/// let selector = Selector::default()
///     .with_name("capi/demo-control-plane-x")?
///     .with_labels("cluster.x-k8s.io/control-plane, tier in (a,b), !legacy")?;
/// assert_eq!(selector.namespace(), Some("capi"));
/// assert_eq!(
///     selector.to_string(),
///     "named capi/demo-control-plane-x with labels cluster.x-k8s.io/control-plane,tier in (a,b),!legacy"
/// );
/// # Ok::<(), rke2_payload::SelectorError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    namespace: Option<String>,
    name: Option<String>,
    cluster: Option<String>,
    labels: Vec<Requirement>,
}

/// Why a selector could not be built. Texts quoted from the command line are shortened; they
/// are the user's own, not the input's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectorError {
    /// The label selector does not parse.
    #[error("label selector {selector:?}: {problem} at character {at}")]
    Syntax {
        /// The selector as given.
        selector: String,
        /// What was expected or found.
        problem: &'static str,
        /// Where (0-based character position).
        at: usize,
    },
    /// A label key is not a valid Kubernetes label key.
    #[error("label selector: {key:?} is not a valid label key: {reason}")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why.
        reason: &'static str,
    },
    /// A label value is not a valid Kubernetes label value.
    #[error("label selector: {value:?} is not a valid label value: {reason}")]
    InvalidValue {
        /// The value.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// `--name NS/NAME` names another namespace than `--namespace`.
    #[error(
        "the name {name:?} is in namespace {in_name:?}, but the namespace asked for is {namespace:?}"
    )]
    NamespaceConflict {
        /// The name as given.
        name: String,
        /// Its namespace part.
        in_name: String,
        /// The namespace asked for.
        namespace: String,
    },
    /// An empty namespace, name or cluster.
    #[error("an empty {what} matches nothing")]
    Empty {
        /// `namespace`, `name` or `cluster`.
        what: &'static str,
    },
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    /// `key`: the label is set.
    Exists(String),
    /// `!key`: the label is not set.
    Absent(String),
    /// `key=v`, `key==v`, `key in (v, w)`.
    In(String, Vec<String>),
    /// `key!=v`, `key notin (v, w)`: also matches a Secret without the label.
    NotIn(String, Vec<String>),
    /// `key>n`, `key<n`: the label is an integer greater (less) than `n`.
    Gt(String, i64),
    /// See [`Requirement::Gt`].
    Lt(String, i64),
}

impl Requirement {
    fn matches<'s>(&self, label: impl Fn(&str) -> Option<&'s str>) -> bool {
        let listed = |values: &[String], v: &str| values.iter().any(|w| w == v);
        match self {
            Requirement::Exists(key) => label(key).is_some(),
            Requirement::Absent(key) => label(key).is_none(),
            Requirement::In(key, values) => label(key).is_some_and(|v| listed(values, v)),
            Requirement::NotIn(key, values) => label(key).is_none_or(|v| !listed(values, v)),
            Requirement::Gt(key, n) => label(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *n),
            Requirement::Lt(key, n) => label(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *n),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = |values: &[String]| values.join(",");
        match self {
            Requirement::Exists(key) => write!(f, "{key}"),
            Requirement::Absent(key) => write!(f, "!{key}"),
            Requirement::In(key, values) if values.len() == 1 => write!(f, "{key}={}", values[0]),
            Requirement::In(key, values) => write!(f, "{key} in ({})", set(values)),
            Requirement::NotIn(key, values) if values.len() == 1 => {
                write!(f, "{key}!={}", values[0])
            }
            Requirement::NotIn(key, values) => write!(f, "{key} notin ({})", set(values)),
            Requirement::Gt(key, n) => write!(f, "{key}>{n}"),
            Requirement::Lt(key, n) => write!(f, "{key}<{n}"),
        }
    }
}

impl Selector {
    /// Only Secrets in this namespace (`metadata.namespace`).
    ///
    /// # Errors
    /// [`SelectorError::Empty`] for an empty namespace; [`SelectorError::NamespaceConflict`]
    /// when a `namespace/name` given before names another.
    pub fn with_namespace(mut self, namespace: &str) -> Result<Self, SelectorError> {
        if namespace.is_empty() {
            return Err(SelectorError::Empty { what: "namespace" });
        }
        if let Some(current) = &self.namespace
            && current != namespace
        {
            return Err(SelectorError::NamespaceConflict {
                name: format!("{current}/{}", self.name.as_deref().unwrap_or_default()),
                in_name: current.clone(),
                namespace: namespace.to_owned(),
            });
        }
        self.namespace = Some(namespace.to_owned());
        Ok(self)
    }

    /// Only the Secret named `name`, or `namespace/name` (which also sets the namespace).
    ///
    /// # Errors
    /// [`SelectorError::Empty`] for an empty name or namespace part;
    /// [`SelectorError::NamespaceConflict`] when the namespace part differs from one given.
    pub fn with_name(mut self, name: &str) -> Result<Self, SelectorError> {
        let (namespace, bare) = match name.split_once('/') {
            Some((ns, bare)) => (Some(ns), bare),
            None => (None, name),
        };
        if bare.is_empty() {
            return Err(SelectorError::Empty { what: "name" });
        }
        if let Some(ns) = namespace {
            if ns.is_empty() {
                return Err(SelectorError::Empty { what: "namespace" });
            }
            if let Some(current) = &self.namespace
                && current != ns
            {
                return Err(SelectorError::NamespaceConflict {
                    name: name.to_owned(),
                    in_name: ns.to_owned(),
                    namespace: current.clone(),
                });
            }
            self.namespace = Some(ns.to_owned());
        }
        self.name = Some(bare.to_owned());
        Ok(self)
    }

    /// Only the Secrets of this Cluster (label `cluster.x-k8s.io/cluster-name`).
    ///
    /// # Errors
    /// [`SelectorError::Empty`] for an empty name.
    pub fn with_cluster(mut self, cluster: &str) -> Result<Self, SelectorError> {
        if cluster.is_empty() {
            return Err(SelectorError::Empty { what: "cluster" });
        }
        self.cluster = Some(cluster.to_owned());
        Ok(self)
    }

    /// Adds the requirements of a kubectl label selector: `key=value`, `key==value`,
    /// `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key`, `!key`, `key>1`, `key<1`,
    /// separated by commas. Every requirement must hold. `!=` and `notin` also match a Secret
    /// without the label, as in Kubernetes.
    ///
    /// # Errors
    /// A [`SelectorError`] that says what is wrong and where.
    pub fn with_labels(mut self, selector: &str) -> Result<Self, SelectorError> {
        let mut parser = Parser {
            text: selector,
            chars: selector.char_indices().collect(),
            pos: 0,
        };
        self.labels.extend(parser.requirements()?);
        Ok(self)
    }

    /// The namespace asked for, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The name asked for (without its namespace), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether it picks every Secret.
    pub fn is_all(&self) -> bool {
        *self == Selector::default()
    }

    /// Whether `secret` is one it picks. A Secret whose metadata could not be read is picked
    /// only by the selector that picks every Secret.
    pub fn matches(&self, secret: &BootstrapSecret<'_>) -> bool {
        self.matches_parts(secret.namespace(), secret.name(), |key| secret.label(key))
    }

    fn matches_parts<'s>(
        &self,
        namespace: Option<&str>,
        name: Option<&str>,
        label: impl Fn(&str) -> Option<&'s str>,
    ) -> bool {
        if self
            .namespace
            .as_deref()
            .is_some_and(|ns| namespace != Some(ns))
            || self.name.as_deref().is_some_and(|n| name != Some(n))
            || self
                .cluster
                .as_deref()
                .is_some_and(|c| label(CLUSTER_NAME_LABEL) != Some(c))
        {
            return false;
        }
        self.labels.iter().all(|r| r.matches(&label))
    }
}

/// How error messages and "no Secret …" name the selection, e.g. `named capi/x in cluster demo
/// with labels a=b`; empty when it picks every Secret.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        match (&self.namespace, &self.name) {
            (Some(ns), Some(name)) => parts.push(format!("named {ns}/{name}")),
            (None, Some(name)) => parts.push(format!("named {name}")),
            (Some(ns), None) => parts.push(format!("in namespace {ns}")),
            (None, None) => {}
        }
        if let Some(cluster) = &self.cluster {
            parts.push(format!("in cluster {cluster}"));
        }
        if !self.labels.is_empty() {
            let labels: Vec<String> = self.labels.iter().map(ToString::to_string).collect();
            parts.push(format!("with labels {}", labels.join(",")));
        }
        f.write_str(&shorten(&parts.join(" "), 300))
    }
}

/// A recursive-descent reader of kubectl's label selector syntax.
struct Parser<'s> {
    text: &'s str,
    chars: Vec<(usize, char)>,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, problem: &'static str) -> SelectorError {
        SelectorError::Syntax {
            selector: shorten(self.text, 200),
            problem,
            at: self.pos,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|&(_, c)| c)
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A key or value: everything up to white space or an operator character.
    fn word(&mut self) -> &str {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && !"=!,()<>".contains(c))
        {
            self.pos += 1;
        }
        let from = self.chars.get(start).map_or(self.text.len(), |&(i, _)| i);
        let to = self
            .chars
            .get(self.pos)
            .map_or(self.text.len(), |&(i, _)| i);
        &self.text[from..to]
    }

    fn requirements(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut out = Vec::new();
        self.skip_space();
        if self.peek().is_none() {
            return Ok(out);
        }
        loop {
            out.push(self.requirement()?);
            self.skip_space();
            match self.peek() {
                None => return Ok(out),
                Some(',') => self.pos += 1,
                Some(_) => return Err(self.error("expected `,` or the end")),
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        self.skip_space();
        if self.eat('!') {
            self.skip_space();
            let key = self.key()?;
            return Ok(Requirement::Absent(key));
        }
        let key = self.key()?;
        self.skip_space();
        match self.peek() {
            None | Some(',') => return Ok(Requirement::Exists(key)),
            Some('=') => {
                self.pos += 1;
                self.eat('=');
                let value = self.value()?;
                return Ok(Requirement::In(key, vec![value]));
            }
            Some('!') => {
                self.pos += 1;
                if !self.eat('=') {
                    return Err(self.error("expected `!=`"));
                }
                let value = self.value()?;
                return Ok(Requirement::NotIn(key, vec![value]));
            }
            Some(c @ ('>' | '<')) => {
                self.pos += 1;
                self.skip_space();
                let number = self.word().to_owned();
                let n = number
                    .parse::<i64>()
                    .map_err(|_| self.error("expected an integer after `>` or `<`"))?;
                return Ok(if c == '>' {
                    Requirement::Gt(key, n)
                } else {
                    Requirement::Lt(key, n)
                });
            }
            _ => {}
        }
        let op = self.word().to_owned();
        let negated = match op.as_str() {
            "in" => false,
            "notin" => true,
            _ => return Err(self.error("expected `=`, `==`, `!=`, `in`, `notin`, `,` or the end")),
        };
        let values = self.set()?;
        Ok(if negated {
            Requirement::NotIn(key, values)
        } else {
            Requirement::In(key, values)
        })
    }

    fn key(&mut self) -> Result<String, SelectorError> {
        let key = self.word().to_owned();
        if key.is_empty() {
            return Err(self.error("expected a label key"));
        }
        validate_key(&key)?;
        Ok(key)
    }

    fn value(&mut self) -> Result<String, SelectorError> {
        self.skip_space();
        let value = self.word().to_owned();
        validate_value(&value)?;
        Ok(value)
    }

    fn set(&mut self) -> Result<Vec<String>, SelectorError> {
        self.skip_space();
        if !self.eat('(') {
            return Err(self.error("expected `(` after `in` or `notin`"));
        }
        let mut values = Vec::new();
        loop {
            values.push(self.value()?);
            self.skip_space();
            if self.eat(')') {
                break;
            }
            if !self.eat(',') {
                return Err(self.error("expected `,` or `)` in a set of values"));
            }
        }
        if values.iter().all(String::is_empty) && values.len() == 1 {
            return Err(self.error("a set of values cannot be empty"));
        }
        Ok(values)
    }
}

/// A label name or value part: at most 63 characters, alphanumerics with `-`, `_`, `.` inside.
fn name_part_problem(text: &str) -> Option<&'static str> {
    let bytes = text.as_bytes();
    if bytes.len() > 63 {
        return Some("longer than 63 characters");
    }
    let inner = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    if !bytes.iter().all(|&b| inner(b)) {
        return Some("only letters, digits, `-`, `_` and `.` are allowed");
    }
    if !bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        || !bytes.last().is_some_and(u8::is_ascii_alphanumeric)
    {
        return Some("it must start and end with a letter or digit");
    }
    None
}

fn validate_key(key: &str) -> Result<(), SelectorError> {
    let invalid = |reason| SelectorError::InvalidKey {
        key: shorten(key, 80),
        reason,
    };
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if name.is_empty() {
        return Err(invalid("the name part is empty"));
    }
    if let Some(reason) = name_part_problem(name) {
        return Err(invalid(reason));
    }
    if let Some(prefix) = prefix {
        let dns = prefix.len() <= 253
            && !prefix.is_empty()
            && prefix.split('.').all(|label| {
                let b = label.as_bytes();
                !b.is_empty()
                    && b.len() <= 63
                    && b.iter()
                        .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && b[0] != b'-'
                    && b[b.len() - 1] != b'-'
            });
        if !dns {
            return Err(invalid("the prefix must be a DNS subdomain (lower case)"));
        }
    }
    Ok(())
}

fn validate_value(value: &str) -> Result<(), SelectorError> {
    if value.is_empty() {
        return Ok(());
    }
    match name_part_problem(value) {
        None => Ok(()),
        Some(reason) => Err(SelectorError::InvalidValue {
            value: shorten(value, 80),
            reason,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels<'s>(pairs: &'s [(&'s str, &'s str)]) -> impl Fn(&str) -> Option<&'s str> {
        move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn picks(selector: &str, pairs: &[(&str, &str)]) -> bool {
        Selector::default()
            .with_labels(selector)
            .expect("selector")
            .matches_parts(Some("ns"), Some("n"), labels(pairs))
    }

    #[test]
    fn equality_and_set_based_requirements_match_as_kubernetes_does() {
        let cp = [
            ("tier", "cp"),
            ("cluster.x-k8s.io/cluster-name", "demo"),
            ("n", "3"),
        ];
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("tier=cp", true),
            ("tier==cp", true),
            ("tier = cp", true),
            ("tier!=cp", false),
            ("tier!=worker", true),
            ("absent!=x", true),
            ("tier in (cp, worker)", true),
            ("tier in (worker)", false),
            ("tier notin (worker,x)", true),
            ("absent notin (x)", true),
            ("tier", true),
            ("absent", false),
            ("!absent", true),
            ("!tier", false),
            ("tier=cp,cluster.x-k8s.io/cluster-name=demo", true),
            ("tier=cp, cluster.x-k8s.io/cluster-name=other", false),
            ("n>2", true),
            ("n<3", false),
            ("tier>1", false),
            ("tier=", false),
            ("absent=", false),
        ];
        for (selector, want) in cases {
            assert_eq!(picks(selector, &cp), *want, "{selector:?}");
        }
    }

    #[test]
    fn bad_selectors_say_what_is_wrong() {
        for bad in [
            "tier in cp",
            "tier in (cp",
            "tier ~ cp",
            "=cp",
            "tier=cp,",
            "tier=c p",
            "-bad=x",
            "Example.com/x=y",
            "x=-y",
            "tier in ()",
            "n>two",
            "tier!cp",
        ] {
            assert!(
                Selector::default().with_labels(bad).is_err(),
                "{bad:?} should be refused"
            );
        }
        let too_long = "a".repeat(64);
        assert!(matches!(
            Selector::default().with_labels(&too_long),
            Err(SelectorError::InvalidKey { .. })
        ));
    }

    #[test]
    fn names_namespaces_and_clusters() {
        let s = Selector::default().with_name("capi/x").expect("name");
        assert!(s.matches_parts(Some("capi"), Some("x"), labels(&[])));
        assert!(!s.matches_parts(Some("other"), Some("x"), labels(&[])));
        assert!(!s.matches_parts(None, Some("x"), labels(&[])));
        let s = Selector::default().with_name("x").expect("name");
        assert!(s.matches_parts(None, Some("x"), labels(&[])));
        assert!(
            Selector::default()
                .with_namespace("a")
                .and_then(|s| s.with_name("b/x"))
                .is_err()
        );
        assert!(
            Selector::default()
                .with_namespace("a")
                .and_then(|s| s.with_name("a/x"))
                .is_ok()
        );
        let s = Selector::default().with_cluster("demo").expect("cluster");
        assert!(s.matches_parts(None, None, labels(&[(CLUSTER_NAME_LABEL, "demo")])));
        assert!(!s.matches_parts(None, None, labels(&[(CLUSTER_NAME_LABEL, "other")])));
        assert!(!s.matches_parts(None, None, labels(&[])));
        assert!(Selector::default().is_all());
        assert!(Selector::default().with_name("").is_err());
        assert!(Selector::default().with_name("ns/").is_err());
    }
}
